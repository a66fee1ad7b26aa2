"""Hard constraints as a check of any selection (the greedy selectors' incremental state is
:mod:`ctxselect.kernels.greedy`).

Constraint tiers:

- ``hard`` — always: eligibility (admissible, inside the validity window, fits the budget alone),
  the token budget, hard conflicts (never both), near-duplicate clusters (at most one),
  per-source maximums and the maximum chunk count;
- ``sources`` — per-source minimums (required sources);
- ``gate`` — every condition of the quality gate, when it is enforced.
"""

from __future__ import annotations

from typing import Iterator
from weakref import WeakKeyDictionary

import numpy as np

from ctxselect.features.contradictions import ConflictSummary
from ctxselect.features.contradictions.fields import disagree_on_codes
from ctxselect.quality.gate import evaluate_gate
from ctxselect.quality.vector import kappa_conflicts, quality_vector
from ctxselect.selection.problem import Problem, agreement_covered

__all__ = ["context_conflicts", "group_members", "partner_pairs", "pairwise_partners", "satisfies",
           "violations"]

_GROUP_MEMBERS: WeakKeyDictionary = WeakKeyDictionary()  # problem -> group_members(problem)
_CONFLICTS: WeakKeyDictionary = WeakKeyDictionary()  # problem -> {mask bytes: context_conflicts}
_MASKS_KEPT = 8  # per problem: the hints, the solver's selections and the one reported


def context_conflicts(problem: Problem, mask: np.ndarray) -> ConflictSummary:
    """:func:`ctxselect.quality.vector.kappa_conflicts` of ``mask``, kept for the last few masks of
    each problem: a call checks a selection against the gate, then reports on the same one."""
    mask = np.asarray(mask, dtype=bool)
    kept = _CONFLICTS.setdefault(problem, {})
    key = mask.tobytes()
    if key not in kept:
        if len(kept) >= _MASKS_KEPT:
            kept.pop(next(iter(kept), None), None)
        kept[key] = kappa_conflicts(problem.packed, mask)
    return kept[key]


def group_members(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """The members of the near-duplicate groups (``problem.groups`` one after the other) and the
    number of each one's group: built once per problem, so that a check of a selection reads the
    groups without a Python loop."""
    got = _GROUP_MEMBERS.get(problem)
    if got is None:
        groups = problem.groups
        members = np.concatenate(groups).astype(np.int64) if groups else np.zeros(0, dtype=np.int64)
        number = np.repeat(np.arange(len(groups), dtype=np.int64), [len(g) for g in groups])
        got = _GROUP_MEMBERS[problem] = (members, number)
    return got


def partner_pairs(problem: Problem, fields, extra_pairs=None) -> tuple[np.ndarray, np.ndarray]:
    """The hard pairs (and ``extra_pairs``) not implied by agreement on ``fields`` and versions
    (near-duplicate clusters are not expanded here; callers block a cluster by its members)."""
    i, j = problem.hard_i, problem.hard_j
    if extra_pairs is not None:
        i, j = np.concatenate([i, extra_pairs[0]]), np.concatenate([j, extra_pairs[1]])
    rest = ~agreement_covered(problem.packed, i, j, fields)
    return i[rest], j[rest]


def pairwise_partners(problem: Problem, fields, extra_pairs=None) -> dict[int, list[int]]:
    """:func:`partner_pairs` as position -> positions."""
    i, j = partner_pairs(problem, fields, extra_pairs)
    partners: dict[int, list[int]] = {}
    for a, b in zip(i.tolist(), j.tolist()):
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    return partners


def hard_violations(problem: Problem, mask: np.ndarray, *, ceiling: bool = False) -> list[str]:
    """The hard-tier constraints that ``mask`` breaks; with ``ceiling``, the capacity is the gate's
    utilization ceiling (:meth:`Problem.capacity`), which ``select()`` keeps to whenever it
    enforces the gate, even with the gate's other conditions relaxed."""
    return list(_hard_broken(problem, mask, ceiling))


def _hard_broken(problem: Problem, mask: np.ndarray, ceiling: bool) -> Iterator[str]:
    """:func:`hard_violations` one at a time, in its order (a check can stop at the first)."""
    packed = problem.packed
    if (mask & ~problem.eligible).any():
        yield "selects an ineligible chunk"
    used = int(packed.tokens[mask].sum())
    if used > packed.budget:
        yield "exceeds the token budget"
    elif ceiling and used > problem.capacity(True):
        yield "max_token_utilization"
    if (mask[problem.hard_i] & mask[problem.hard_j]).any() or disagree_on_codes(packed, mask, problem.hard_fields):
        yield "selects both chunks of a hard conflict"
    members, number = group_members(problem)
    if np.bincount(number[mask[members]], minlength=1).max() > 1:
        yield "selects two near-duplicates"
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    if (counts > packed.source_max).any():
        yield "exceeds a per-source maximum"
    reqs = packed.requirements
    if reqs.max_chunks is not None and mask.sum() > reqs.max_chunks:
        yield "exceeds the maximum chunk count"


def source_violations(problem: Problem, mask: np.ndarray) -> list[str]:
    """The source minimums ``mask`` does not meet."""
    packed = problem.packed
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    return [f"source `{name}` has {counts[k]} of {packed.source_min[k]} required chunks"
            for k, name in enumerate(packed.source_names) if counts[k] < packed.source_min[k]]


def gate_violations(problem: Problem, mask: np.ndarray) -> list[str]:
    """Gate conditions the optimizer enforces that ``mask`` breaks, plus any contradiction the
    gate's density counts among the selected chunks when the gate forbids contradictions
    (:attr:`Problem.gate_conflicts`: with ``contradictions="all"``, claim conflicts included)."""
    packed = problem.packed
    failures = evaluate_gate(quality_vector(packed, mask, problem.signals.freshness, list_claims=False,
                                            conflicts=context_conflicts(problem, mask)), packed.requirements.gate)
    out = [f.condition for f in failures]
    con = problem.gate_conflicts
    if packed.requirements.gate.max_contradiction_density <= 0 and "max_contradiction_density" not in out:
        if (mask[con.i] & mask[con.j]).any() or disagree_on_codes(packed, mask, range(len(packed.field_names))):
            out.append("max_contradiction_density")
    return out


def violations(problem: Problem, mask: np.ndarray, *, enforce_gate: bool = True,
               enforce_sources: bool = True, ceiling: bool | None = None) -> list[str]:
    """Every constraint of the optimizer's model that the selection ``mask`` breaks (``ceiling``:
    the gate's utilization ceiling; default: with the gate)."""
    mask = np.asarray(mask, dtype=bool)
    out = hard_violations(problem, mask, ceiling=enforce_gate if ceiling is None else ceiling)
    if enforce_sources:
        out += source_violations(problem, mask)
    if enforce_gate:
        out += [v for v in gate_violations(problem, mask) if v not in out]
    return out


def satisfies(problem: Problem, mask: np.ndarray, *, enforce_gate: bool = True,
              enforce_sources: bool = True, ceiling: bool | None = None) -> bool:
    """Whether :func:`violations` of ``mask`` (same arguments) is empty, stopping at the first
    constraint broken: the hard tier, then the source minimums, then the gate (the quality vector
    and the conflicts of the selection are computed only when every other constraint holds)."""
    mask = np.asarray(mask, dtype=bool)
    if next(_hard_broken(problem, mask, enforce_gate if ceiling is None else ceiling), None) is not None:
        return False
    if enforce_sources and source_violations(problem, mask):
        return False
    return not (enforce_gate and gate_violations(problem, mask))
