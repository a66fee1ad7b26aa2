"""Why no selection can pass: each unreachable condition named, with the evidence missing."""

from __future__ import annotations

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.selection.problem import Problem

__all__ = ["diagnose", "empty_reason"]


def _names(items) -> str:
    return ", ".join(f"`{x}`" for x in items)


def diagnose(problem: Problem, *, enforce_gate: bool) -> list[str]:
    """Sentences naming each condition that no subset of the candidates can meet, and why.

    The checks are necessary conditions (each looks at one condition with every eligible chunk
    available); when none of them fails, the conditions conflict with each other or with the
    budget, and the last sentence says so.
    """
    packed = problem.packed
    reqs = packed.requirements
    gate = reqs.gate
    eligible = problem.eligible
    out: list[str] = []

    for s, name in enumerate(packed.source_names):
        need = int(packed.source_min[s])
        if need == 0:
            continue
        members = packed.source == s
        have = int((members & eligible).sum())
        if have == 0:
            what = ("eligible candidate" if (members & packed.admissible).any() else
                    "admissible candidate" if members.any() else "candidate")
            out.append(f"no {what} from source `{name}` ({need} required)")
        elif have < need:
            out.append(f"only {have} eligible candidate(s) from source `{name}`, {need} required")
        elif packed.source_max[s] < need:
            out.append(f"source `{name}` requires {need} chunks but its maximum is {packed.source_max[s]}")

    if not enforce_gate:
        return out or ["the required sources cannot all be met within the budget and hard constraints"]

    if not eligible.any():
        fits = packed.admissible & (packed.tokens <= packed.budget)
        out.append("no admissible candidate fits the budget" if not fits.any() else
                   f"no candidate is eligible: of the {int(fits.sum())} admissible that fit the budget, "
                   + _left_out(problem, fits))
    n_required = problem.n_required
    if n_required and gate.min_coverage > 0:
        names = packed.aspect_names[:n_required]
        weights = packed.aspect_weights[:n_required]
        reachable = problem.covers[eligible][:, :n_required].any(axis=0)
        for a in np.flatnonzero(~reachable).tolist():
            anyone = problem.covers[:, a].any()
            out.append(f"no {'eligible ' if anyone else ''}candidate covers aspect `{names[a]}`")
        best = float(weights[reachable].sum() / weights.sum())
        if best < gate.min_coverage - TOLERANCE:
            out.append(f"coverage {gate.min_coverage:.2f} is out of reach: all eligible candidates "
                       f"together cover {best:.2f}")
    if gate.min_freshness > 0 and eligible.any():
        usable = eligible & (packed.relevance > 0)
        best = float(problem.signals.freshness[usable].max()) if usable.any() else float(
            problem.signals.freshness[eligible].max())
        if best < gate.min_freshness - TOLERANCE:
            out.append(f"freshness {gate.min_freshness:.2f} is out of reach: the freshest eligible "
                       f"set reaches {best:.2f}")
    need_tokens = gate.min_token_utilization * packed.budget
    have_tokens = int(packed.tokens[eligible].sum())
    if have_tokens < need_tokens - TOLERANCE:
        out.append(f"token utilization {gate.min_token_utilization:.2f} is out of reach: the eligible "
                   f"candidates hold {have_tokens} tokens, {int(np.ceil(need_tokens))} needed")
    if not out:
        out.append("the gate's conditions cannot all hold together within the budget and the hard "
                   "constraints (each is reachable on its own)")
    return out


#: Why a chunk that is admissible and fits the budget was not eligible, by the start of its reason.
_LEFT_OUT = {"contradicted by": "contradicted by better-supported chunks",
             "unresolved conflict": "sides of a conflict the evidence could not decide",
             "superseded by": "older versions", "stale:": "outside their validity window"}


def _left_out(problem: Problem, fits: np.ndarray) -> str:
    """How many of the candidates ``fits`` each eligibility rule left out, e.g. "2 sides of a
    conflict the evidence could not decide; 1 older versions"."""
    counts: dict[str, int] = {}
    for k in np.flatnonzero(fits & ~problem.eligible).tolist():
        why = problem.ineligible_reason.get(k, "")
        label = next((v for prefix, v in _LEFT_OUT.items() if why.startswith(prefix)), "left out otherwise")
        counts[label] = counts.get(label, 0) + 1
    return "; ".join(f"{count} {label}" for label, count in counts.items())


def empty_reason(problem: Problem) -> str | None:
    """Why a selection is empty although admissible candidates fit the budget (None when none
    does): how many of them each rule left out, and how many eligible ones add no value."""
    packed = problem.packed
    fits = packed.admissible & (packed.tokens <= packed.budget)
    if not fits.any():
        return None
    parts = [_left_out(problem, fits)] if (fits & ~problem.eligible).any() else []
    rest = int((fits & problem.eligible).sum())
    if rest:
        parts.append(f"{rest} eligible add no value to the objective")
    return (f"empty context: {int(fits.sum())} admissible candidate(s) fit the budget; left out: "
            + "; ".join(parts))
