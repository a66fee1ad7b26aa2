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

import numpy as np

from ctxselect.features.contradictions.fields import disagree_on_fields
from ctxselect.quality.gate import evaluate_gate
from ctxselect.quality.vector import quality_vector
from ctxselect.selection.problem import Problem, agreement_covered

__all__ = ["partner_pairs", "pairwise_partners", "violations"]


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
    packed = problem.packed
    out = []
    if (mask & ~problem.eligible).any():
        out.append("selects an ineligible chunk")
    used = int(packed.tokens[mask].sum())
    if used > packed.budget:
        out.append("exceeds the token budget")
    elif ceiling and used > problem.capacity(True):
        out.append("max_token_utilization")
    if (mask[problem.hard_i] & mask[problem.hard_j]).any() or disagree_on_fields(packed, mask, problem.hard_fields):
        out.append("selects both chunks of a hard conflict")
    if any(mask[g].sum() > 1 for g in problem.groups):
        out.append("selects two near-duplicates")
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    if (counts > packed.source_max).any():
        out.append("exceeds a per-source maximum")
    reqs = packed.requirements
    if reqs.max_chunks is not None and mask.sum() > reqs.max_chunks:
        out.append("exceeds the maximum chunk count")
    return out


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
    failures = evaluate_gate(quality_vector(packed, mask, problem.signals.freshness, list_claims=False),
                             packed.requirements.gate)
    out = [f.condition for f in failures]
    con = problem.gate_conflicts
    if packed.requirements.gate.max_contradiction_density <= 0 and "max_contradiction_density" not in out:
        if (mask[con.i] & mask[con.j]).any() or disagree_on_fields(packed, mask, range(len(packed.field_names))):
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
