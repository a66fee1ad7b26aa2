"""What the optimizer solves when the problem is large: a core of the candidates, and a bound.

Up to ``exact_up_to`` eligible candidates the whole problem is solved; beyond it a core of the
``core_size`` chunks the LP relaxation values most (value less the LP's price of their tokens),
plus the baselines' selections and the best providers of every required aspect and source. The
bound for the whole problem is then the LP relaxation of the knapsack under the per-source caps,
split on a hard field's values (:func:`upper_bound`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from ctxselect.kernels.bound import _capped_bound
from ctxselect.selection.problem import Problem

__all__ = ["choose_core", "upper_bound"]


#: Bisection steps of the Lagrangian bound (λ to 2^-30 of its range; each step is O(n)).
BOUND_ITERATIONS = 30
#: A hard field is split on (one bound per value, :func:`upper_bound`) when it has at most this
#: many distinct values among the eligible chunks (each value costs one more bound).
MAX_SPLIT_VALUES = 16


@dataclass(eq=False)
class _Relaxation:
    """The knapsack relaxation of one problem at one capacity: the eligible chunks grouped by
    source, and the bounds already computed (the core's choice and the reported bound share them)."""

    eligible: np.ndarray          # positions, grouped by source (stable)
    tokens: np.ndarray
    value: np.ndarray             # each chunk's value
    with_aspects: np.ndarray      # its value plus every aspect it covers
    all_aspects: float            # the whole coverage term
    source: np.ndarray
    caps: np.ndarray
    budget: float
    forms: list = field(default_factory=list)  # [(bound, λ) with aspects per chunk, (bound, λ) values + all]

    def bound(self, keep: np.ndarray, w: np.ndarray, extra: float) -> tuple[float, float]:
        """The LP bound over the chunks ``keep`` (bool over ``eligible``) worth ``w`` (plus
        ``extra``), and its price of a token λ."""
        order = np.flatnonzero(keep & (w > 0))  # an item worth nothing never counts, at any λ
        starts = np.zeros(len(self.caps) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.source[order], minlength=len(self.caps)), out=starts[1:])
        value, lam = _capped_bound(w, self.tokens, order, starts, self.caps, self.budget, BOUND_ITERATIONS)
        return float(value) + extra, float(lam)


_RELAXATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _relaxation(problem: Problem, capacity: int) -> _Relaxation:
    """The problem's relaxation at ``capacity``, built and bounded once per problem."""
    known = _RELAXATIONS.setdefault(problem, {})
    if capacity in known:
        return known[capacity]
    packed = problem.packed
    eligible = np.flatnonzero(problem.eligible)
    eligible = eligible[np.argsort(packed.source[eligible], kind="stable")]
    value = problem.value[eligible].astype(np.float64)
    r = _Relaxation(
        eligible=eligible, tokens=packed.tokens[eligible].astype(np.float64), value=value,
        with_aspects=value + (problem.covers[eligible] @ problem.aspect_gain if problem.aspect_gain.size else 0.0),
        all_aspects=float(problem.aspect_gain.sum()), source=packed.source[eligible],
        caps=packed.source_max.astype(np.int64), budget=float(capacity))
    everything = np.ones(len(eligible), dtype=bool)
    r.forms = [r.bound(everything, r.with_aspects, 0.0), r.bound(everything, r.value, r.all_aspects)]
    known[capacity] = r
    return r


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
    fractional knapsack; the split on the hard field cut it from 0.015-2.33 % to 0.015-0.59 % on 15
    queries at 2,000, where the core's solution was within 0.013 % of the whole problem's proven
    optimum on each."""
    r = _relaxation(problem, capacity)
    (with_aspects, _), (plain, _) = r.forms
    best = min(with_aspects, plain)
    w, extra = (r.value, r.all_aspects) if plain < with_aspects else (r.with_aspects, 0.0)  # the tighter form splits
    for f in problem.hard_fields if fields is None else fields:
        codes = problem.packed.field_values[r.eligible, f]
        values = np.unique(codes[codes >= 0])
        if 2 <= len(values) <= MAX_SPLIT_VALUES:
            best = min(best, max(r.bound((codes < 0) | (codes == v), w, extra)[0] for v in values.tolist()))
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


def choose_core(problem: Problem, core_size: int, extra: list[np.ndarray], exact_up_to: int = 0,
                capacity: int | None = None) -> np.ndarray:
    """Positions of the core: all eligible chunks when there are at most ``max(core_size,
    exact_up_to)``, else the ``core_size`` the LP relaxation values most at ``capacity`` tokens
    (default: the gate's utilization ceiling) — value less λ per token, λ the LP's price of a token
    — and the chunks the constraints need.

    Measured on 5 generated queries at n = 20,000 (benchmarks/latency.py instances) against the
    whole problem's proven optimum: the core's solution was 0.18-1.26 % below it when the core held
    the best values and values per token, 0-0.006 % below it with the LP's choice (cores of
    324-331 chunks either way)."""
    eligible = np.flatnonzero(problem.eligible)
    if len(eligible) <= max(core_size, exact_up_to):
        return eligible
    packed = problem.packed
    r = _relaxation(problem, problem.capacity(True) if capacity is None else capacity)
    lam = r.forms[1][1]  # the price of a token for the chunks' values
    reduced = problem.value[eligible] - lam * packed.tokens[eligible]
    picks = [eligible[_first(-reduced, core_size)]]
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
