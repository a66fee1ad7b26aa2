"""Why no selection can pass: each unreachable condition named, with the evidence missing."""

from __future__ import annotations

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.selection.problem import Problem

__all__ = ["diagnose"]


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
            what = "admissible candidate" if members.any() else "candidate"
            out.append(f"no {what} from source `{name}` ({need} required)")
        elif have < need:
            out.append(f"only {have} eligible candidate(s) from source `{name}`, {need} required")
        elif packed.source_max[s] < need:
            out.append(f"source `{name}` requires {need} chunks but its maximum is {packed.source_max[s]}")

    if not enforce_gate:
        return out or ["the required sources cannot all be met within the budget and hard constraints"]

    if not eligible.any():
        out.append("no admissible candidate fits the budget")
    n_required = problem.n_required
    if n_required and gate.min_coverage > 0:
        names = packed.aspect_names[:n_required]
        weights = packed.aspect_weights[:n_required]
        reachable = problem.covers[eligible][:, :n_required].any(axis=0)
        for a in np.flatnonzero(~reachable).tolist():
            anyone = problem.covers[:, a].any()
            out.append(f"no {'admissible ' if anyone else ''}candidate covers aspect `{names[a]}`")
        best = float(weights[reachable].sum() / weights.sum())
        if best < gate.min_coverage - TOLERANCE:
            out.append(f"coverage {gate.min_coverage:.2f} is out of reach: all admissible candidates "
                       f"together cover {best:.2f}")
    if gate.min_freshness > 0 and eligible.any():
        usable = eligible & (packed.relevance > 0)
        best = float(problem.signals.freshness[usable].max()) if usable.any() else float(
            problem.signals.freshness[eligible].max())
        if best < gate.min_freshness - TOLERANCE:
            out.append(f"freshness {gate.min_freshness:.2f} is out of reach: the freshest admissible "
                       f"set reaches {best:.2f}")
    need_tokens = gate.min_token_utilization * packed.budget
    have_tokens = int(packed.tokens[eligible].sum())
    if have_tokens < need_tokens - TOLERANCE:
        out.append(f"token utilization {gate.min_token_utilization:.2f} is out of reach: the admissible "
                   f"candidates hold {have_tokens} tokens, {int(np.ceil(need_tokens))} needed")
    if not out:
        out.append("the gate's conditions cannot all hold together within the budget and the hard "
                   "constraints (each is reachable on its own)")
    return out
