"""Why no selection can pass: each unreachable condition named, with the evidence missing."""

from __future__ import annotations

import re

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.model.weights import relative_weights
from ctxselect.selection.problem import Problem

__all__ = ["diagnose", "empty_reason", "after_capped"]


def _names(items) -> str:
    return ", ".join(f"`{x}`" for x in items)


def _apart(target: float, reached: float) -> tuple[str, str]:
    """``target`` and ``reached`` with two decimals, or as many more as tell them apart (a reason
    never says "1.00 is out of reach: ... reaches 1.00")."""
    for digits in range(2, 16):
        written = f"{target:.{digits}f}", f"{reached:.{digits}f}"
        if written[0] != written[1]:
            return written
    return written[0], "just below it"


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

    capacity = problem.capacity(True)
    fits = packed.admissible & (packed.tokens <= packed.budget)
    if not fits.any():
        out.append("no admissible candidate fits the budget")
    elif not eligible.any():
        out.append(f"no candidate is eligible: of the {int(fits.sum())} admissible that fit the budget, "
                   + tally(problem.ineligible_reason.get(k, "") for k in np.flatnonzero(fits).tolist()))
    elif not (eligible & (packed.tokens <= capacity)).any():
        out.append(f"no eligible candidate fits under the gate's utilization ceiling ({capacity} of the "
                   f"{packed.budget}-token budget)")
    n_required = problem.n_required
    if n_required and gate.min_coverage > 0:
        names = packed.aspect_names[:n_required]
        weights = relative_weights(packed.aspect_weights[:n_required])  # their sum is finite
        reachable = problem.covers[eligible][:, :n_required].any(axis=0)
        for a in np.flatnonzero(~reachable).tolist():
            anyone = problem.covers[:, a].any()
            out.append(f"no {'eligible ' if anyone else ''}candidate covers aspect `{names[a]}`")
        best = float(weights[reachable].sum() / weights.sum())
        if best < gate.min_coverage - TOLERANCE:
            target, reached = _apart(gate.min_coverage, best)
            out.append(f"coverage {target} is out of reach: all eligible candidates together cover {reached}")
    if gate.min_freshness > 0 and eligible.any():
        usable = eligible & (packed.relevance > 0)
        best = float(problem.signals.freshness[usable].max()) if usable.any() else float(
            problem.signals.freshness[eligible].max())
        if best < gate.min_freshness - TOLERANCE:
            target, reached = _apart(gate.min_freshness, best)
            out.append(f"freshness {target} is out of reach: the freshest eligible set reaches {reached}")
    need_tokens = gate.min_token_utilization * packed.budget
    have_tokens = int(packed.tokens[eligible].sum())
    if have_tokens < need_tokens - TOLERANCE:
        out.append(f"token utilization {gate.min_token_utilization:.2f} is out of reach: the eligible "
                   f"candidates hold {have_tokens} tokens, {int(np.ceil(need_tokens))} needed")
    if not out:
        out.append("the gate's conditions cannot all hold together within the budget and the hard "
                   "constraints (each is reachable on its own)")
    return out



_HEAD = re.compile(r"[^:`(]*")
_TRAILING = re.compile(r"\s+(with|of|by|than|to|from)$")


def tally(reasons) -> str:
    """Reasons counted by their head: "unresolved conflict (2); does not fit (1)" — the words
    before the first colon, backtick or parenthesis, without a trailing preposition."""
    counts: dict[str, int] = {}
    for reason in reasons:
        head = _TRAILING.sub("", _HEAD.match(reason).group().strip()) or "left out"
        counts[head] = counts.get(head, 0) + 1
    return "; ".join(f"{head} ({count})" for head, count in counts.items())


def empty_reason(n: int, excluded: dict[str, str]) -> str:
    """What an empty selection says about itself: how many candidates each reason left out."""
    if n == 0:
        return "empty context: there is no candidate"
    return f"empty context: none of the {n} candidate(s) is selected: {tally(excluded.values())}"


def after_capped(status: str, reason: str, capped) -> tuple[str, str]:
    """A call's status and reason once the contradictions' bounds that bound (``Signals.capped``: drift's
    cap, the claim join's budgets) are said: conflicts among the pairs left unexamined may be missed, so
    ``optimal`` (proven over the conflicts found) becomes ``feasible``; other statuses keep theirs."""
    if not capped:
        return status, reason
    if status == "optimal":
        status, reason = "feasible", f"{reason}, but not every pair was examined for contradictions"
    return status, "; ".join((reason, *capped))
