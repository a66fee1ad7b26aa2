"""What the optimizer solves when the problem is large: a core of the candidates, and a bound.

Up to ``exact_up_to`` eligible candidates the whole problem is solved; beyond it a core of
``core_size`` chunks with the best value and value per token, plus the baselines' selections and the
best providers of every required aspect and source. The bound for the whole problem is then the
LP relaxation of the knapsack under the per-source caps (:func:`upper_bound`).
"""

from __future__ import annotations

import numpy as np

from ctxselect.kernels.bound import _capped_bound
from ctxselect.selection.problem import Problem

__all__ = ["choose_core", "upper_bound"]


#: Bisection steps of the Lagrangian bound (λ to 2^-30 of its range; each step is O(n)).
BOUND_ITERATIONS = 30


#: A hard field is split on (one bound per value, :func:`upper_bound`) when it has at most this
#: many distinct values among the eligible chunks (each value costs one more bound).
MAX_SPLIT_VALUES = 16


def upper_bound(problem: Problem, capacity: int, fields=None) -> float:
    """A valid upper bound of the objective over every subset within ``capacity`` tokens and the
    per-source caps, whose chunks agree on each of ``fields`` (default: the problem's hard fields):
    the LP relaxation of the knapsack of each chunk's value plus every aspect it covers, or of the
    values alone plus the whole coverage term, whichever is smaller (pair penalties, contradiction
    terms and the other constraints are dropped: each only lowers the optimum). The LP is solved
    through its Lagrangian dual over the budget (:mod:`ctxselect.kernels.bound`); any multiplier
    gives a valid bound.

    A selection holds at most one value of a hard field, so it lies within one of the problems
    "the chunks without a value or with value v": the largest of their bounds is a bound too, and
    the smallest such over the fields (up to :data:`MAX_SPLIT_VALUES` values each) is returned when
    it is below the plain one.

    Measured on generated queries (benchmarks/latency.py instances): the LP under the caps cut the
    reported gap of a core's solution from 13.7-17.0 % to 1.4-3.4 % at n = 20,000 against the
    fractional knapsack; the split on the hard field cut it from 0.10-2.33 % to ... at 2,000 (the
    core's solution was the proven optimum of the whole problem on each)."""
    packed = problem.packed
    eligible = np.flatnonzero(problem.eligible)
    eligible = eligible[np.argsort(packed.source[eligible], kind="stable")]  # grouped by source
    tokens = packed.tokens[eligible].astype(np.float64)
    value = problem.value[eligible].astype(np.float64)
    with_aspects = value + (problem.covers[eligible] @ problem.aspect_gain if problem.aspect_gain.size else 0.0)
    all_aspects = float(problem.aspect_gain.sum())
    source = packed.source[eligible]
    caps = packed.source_max.astype(np.int64)
    budget = float(capacity)

    def bound(keep: np.ndarray, w: np.ndarray, extra: float) -> float:
        """The relaxation's bound over the chunks ``keep`` (bool over ``eligible``) worth ``w``."""
        order = np.flatnonzero(keep & (w > 0))  # an item worth nothing never counts, at any λ
        starts = np.zeros(len(caps) + 1, dtype=np.int64)
        np.cumsum(np.bincount(source[order], minlength=len(caps)), out=starts[1:])
        return float(_capped_bound(w, tokens, order, starts, caps, budget, BOUND_ITERATIONS)) + extra

    everything = np.ones(len(eligible), dtype=bool)
    forms = [bound(everything, w, extra) for w, extra in ((with_aspects, 0.0), (value, all_aspects))]
    best = min(forms)
    w, extra = ((with_aspects, 0.0), (value, all_aspects))[int(forms[1] < forms[0])]  # the tighter form splits
    for f in problem.hard_fields if fields is None else fields:
        codes = packed.field_values[eligible, f]
        values = np.unique(codes[codes >= 0])
        if 2 <= len(values) <= MAX_SPLIT_VALUES:
            best = min(best, max(bound((codes < 0) | (codes == v), w, extra) for v in values.tolist()))
    return best


def _first(key: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest keys, ties to the lower position: the set of
    ``np.argsort(key, kind="stable")[:k]``, in O(n) (a partition, not a sort)."""
    if k >= len(key):
        return np.arange(len(key))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    threshold = np.partition(key, k - 1)[k - 1]
    below = np.flatnonzero(key < threshold)
    ties = np.flatnonzero(key == threshold)[: k - len(below)]
    return np.concatenate([below, ties])


def choose_core(problem: Problem, core_size: int, extra: list[np.ndarray], exact_up_to: int = 0) -> np.ndarray:
    """Positions of the core: all eligible chunks when there are at most ``max(core_size,
    exact_up_to)``, else the most promising ``core_size`` and the chunks the constraints need."""
    eligible = np.flatnonzero(problem.eligible)
    if len(eligible) <= max(core_size, exact_up_to):
        return eligible
    packed = problem.packed
    value = problem.value[eligible]
    per_token = value / packed.tokens[eligible]
    picks = [eligible[_first(-value, core_size // 2)], eligible[_first(-per_token, core_size // 2)]]
    per_provider = max(2, core_size // 50)
    covers = problem.covers[eligible]
    for a in range(problem.aspect_gain.size):
        coverers = eligible[covers[:, a]]
        picks.append(coverers[_first(-problem.value[coverers], per_provider)])
    for s in np.flatnonzero(packed.source_min > 0).tolist():
        members = eligible[packed.source[eligible] == s]
        need = per_provider + int(packed.source_min[s])
        picks.append(members[_first(-problem.value[members], need)])
    picks.extend(np.flatnonzero(m) for m in extra)
    return np.unique(np.concatenate(picks))
