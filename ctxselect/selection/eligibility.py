"""Which chunks a selection may hold at all, and a true reason for each one it may not: the scopes,
the validity window, the budget, corroboration's verdicts (:mod:`ctxselect.selection.corroboration`)
and the time limit's cut of the similarities. :func:`ctxselect.selection.problem.build_problem`
reads it; the reasons are those of :attr:`Problem.ineligible_reason <ctxselect.selection.problem.Problem>`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctxselect.features.contradictions.detect import CLAIM_ALL_TEXTS_LIMIT
from ctxselect.features.cut_rows import TOO_ALIKE
from ctxselect.features.pairs import Signals
from ctxselect.packing import PackedCandidates
from ctxselect.selection.corroboration import OnUnresolved, Resolution, resolve_conflicts
from ctxselect.selection.versions import Supersession, supersession

__all__ = ["Eligibility", "eligibility", "selectable"]


@dataclass(frozen=True)
class Eligibility:
    """The chunks that may be selected (``eligible``), why each other one may not (``reasons``),
    corroboration's ``resolution`` and ``superseded_by``; when the time limit or the reach cut the
    similarities, the chunks left out for it alone (``uncompared``) and every chunk the uncut problem
    could hold (``uncut_eligible``), else None. Up to ``CLAIM_ALL_TEXTS_LIMIT`` candidates the claims
    were read in every text, so the uncut problem's corroboration could only add losers (drift
    among the pairs not compared): ``uncut_eligible`` is ``eligible``, ``uncompared`` and the losers
    of drift alone (a cosine at the duplicate threshold can differ by a float32 ulp between the
    cut's row tiles and the full run's upper-triangle tiles, so a drift verdict may not repeat).
    Above it, claims are joined only among redundancy pairs, and pairs not compared could add
    support to a loser's side: it is every chunk eligible but for the cut and corroboration, less the
    older versions a newer selectable one supersedes (read from the codes: the same in any run)."""

    eligible: np.ndarray
    reasons: dict
    resolution: Resolution
    superseded_by: Supersession
    uncompared: np.ndarray | None
    uncut_eligible: np.ndarray | None


def eligibility(packed: PackedCandidates, signals: Signals, *, exclude_outside_window: bool,
                resolve_by_corroboration: bool, on_unresolved: OnUnresolved) -> Eligibility:
    """Eligibility of each chunk, in this order: admissible (scopes), inside its validity window
    (with ``exclude_outside_window``), within the budget alone, not the loser of a conflict
    (corroboration, with ``resolve_by_corroboration``), compared (``Signals.compared``). Corroboration
    runs before the cut, so an uncompared chunk still supports a side or supersedes an older
    version; only then are the uncompared chunks left out, with the reason "not compared"."""
    n = packed.n
    eligible = selectable(packed, exclude_outside_window=exclude_outside_window)
    reasons: dict[int, str] = {}
    scope = packed.scope.tolist()
    for i in (~packed.admissible).nonzero()[0].tolist():
        reasons[i] = (f"inadmissible: scope `{packed.scope_names[scope[i]]}` is not allowed" if scope[i] >= 0
                      else "inadmissible: no scope, and the query allows only listed scopes")
    outside = packed.admissible & ~packed.valid_now if exclude_outside_window else np.zeros(n, dtype=bool)
    for i in outside.nonzero()[0].tolist():
        reasons[i] = "stale: outside its validity window at `now`"
    too_big = packed.admissible & ~outside & ~eligible  # the only reason left
    for i, size in zip(too_big.nonzero()[0].tolist(), packed.tokens[too_big].tolist()):
        reasons[i] = f"over budget: {size} tokens alone exceed the budget of {packed.budget}"
    uncut_eligible = None if signals.compared is None else eligible.copy()
    resolution = Resolution()
    superseded_by = supersession(packed)
    if resolve_by_corroboration:
        resolution = resolve_conflicts(packed, signals, eligible, on_unresolved=on_unresolved, superseded=superseded_by)
        for k, why in resolution.losers.items():
            if eligible[k]:
                eligible[k] = False
                reasons[k] = why
    uncompared = None
    if uncut_eligible is not None:  # similarities cut by the time limit or the reach (similarity.cosine_pairs_until)
        uncompared = eligible & ~signals.compared
        if n <= CLAIM_ALL_TEXTS_LIMIT:  # claims read in every text: the pairs left out could only add losers (drift)
            drift = np.zeros(n, dtype=bool)  # drift's own losers aside: a pair at the threshold may differ by an ulp
            drift[list(resolution.drift_losers)] = True
            uncut_eligible = eligible | (drift & uncut_eligible)
        else:  # the verdicts a full run could change; a version superseded stays superseded
            uncut_eligible[list(resolution.superseded)] = False
        eligible &= signals.compared
        k = int(signals.compared.sum())
        budget = f" and the pair budget ({TOO_ALIKE})" * signals.cut_by_pairs
        why = (f"not compared: the time limit{budget} let the similarities of {k} of {n} candidates be computed, "
               "the most promising first (a longer time_limit compares more)" if signals.cut_by_time else
               f"not compared: the similarities stopped at their pair budget with {k} of {n} candidates compared "
               f"({TOO_ALIKE})" if signals.cut_by_pairs else
               f"not compared: beyond the optimizer's reach (the similarities of {k} of {n} candidates were "
               "computed: those of highest value less the LP's price of their tokens, and their near-duplicates; "
               "a larger core_size or exact_up_to compares more)")
        reasons.update(dict.fromkeys(uncompared.nonzero()[0].tolist(), why))
    return Eligibility(eligible, reasons, resolution, superseded_by, uncompared, uncut_eligible)


def selectable(packed: PackedCandidates, *, exclude_outside_window: bool) -> np.ndarray:
    """The chunks :func:`eligibility` holds eligible before corroboration and the cut (the one
    definition): admissible, inside their validity window (with ``exclude_outside_window``), within
    the budget alone."""
    mask = packed.admissible & (packed.tokens <= packed.budget)
    return mask & packed.valid_now if exclude_outside_window else mask
