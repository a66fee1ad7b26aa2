"""What the optimizer solves when the problem is large: a core of the candidates, and a bound.

Up to ``exact_up_to`` eligible candidates the whole problem is solved; beyond it a core of the
``core_size`` chunks the LP relaxation values most (value less the LP's price of their tokens),
plus the baselines' selections and the best providers of every required aspect and source. The
bound for the whole problem is then the LP relaxation of the knapsack under the per-source caps,
split on a hard field's values (:func:`upper_bound`); after a cut of the similarities, also the
compared chunks' proven optimum plus what the others add at most (:func:`cut_bound`).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ctxselect._config import SOLVER_SCALE
from ctxselect.features.providers import best_providers, smallest
from ctxselect.kernels.bound import _capped_bound
from ctxselect.kernels.pairs import _components
from ctxselect.model import validation as checks
from ctxselect.packing import PackedCandidates
from ctxselect.selection.eligibility import selectable
from ctxselect.selection.problem import Problem, capacity
from ctxselect.selection.solvers.exact import EXACT_MAX_CORE, NODE_LIMIT, solve_exact
from ctxselect.selection.value import ChunkValues, chunk_values

__all__ = ["Reach", "TIGHT_GAP", "choose_core", "cut_bound", "reach", "upper_bound"]


#: Bisection steps of the Lagrangian bound (λ to 2^-30 of its range; each step is O(n)).
BOUND_ITERATIONS = 30
#: From this many eligible chunks the core is the LP's choice (below, the best values and values
#: per token). Measured (benchmarks/latency.py instances, against each other or the proven optimum):
#: at n = 2,000 (~1,650 eligible) both cores reached the same objective on 4 of 4 queries (the old
#: one the proven optimum on 15 of 15) and CP-SAT proved the LP's core slower (16-38 against
#: 17-28 ms); at n = 5,000 (~4,100) the old core reached the optimum on 5 of 5; at n = 10,000
#: (~8,300) the LP's core was better on 3 of 4 (by 0.01-0.11 %), at 20,000 on 5 of 5 (0.18-1.26 %).
LP_CORE_FROM = 5_000
#: A hard field is split on (one bound per value, :func:`upper_bound`) when it has at most this
#: many distinct values among the eligible chunks (each value costs one more bound).
MAX_SPLIT_VALUES = 16


#: After a cut of the similarities, a reported gap above this share of the bound is narrowed by
#: :func:`cut_bound` (a search of its own, 2-5 ms at 2,000 x 384): the aim is a gap of at most 1 %
#: where the selection is within 0.2 % of the optimum. Measured on benchmarks/latency.py's
#: 2,000 x 384 queries (15): the LP over every chunk the uncut problem could hold left 1.16 % on one
#: whose selection was the optimum of the whole problem (every pair compared).
TIGHT_GAP = 0.01
#: :func:`cut_bound` keeps the near-duplicate clusters of the pairs at least this far above the
#: duplicate threshold (a float32 ulp at 1 is 1.2e-7; the pairs are float32 products).
CLUSTER_MARGIN = 1e-6


@dataclass(eq=False)
class _Relaxation:
    """The knapsack relaxation of one problem at one capacity: the eligible chunks grouped by
    source, and the bounds already computed (the core's choice and the reported bound share them)."""

    covers: np.ndarray            # the problem's (n, aspects) cover matrix (never the Problem: the
    aspect_gain: np.ndarray       # cache is keyed by it weakly, and a value holding it would keep it)
    eligible: np.ndarray          # positions, grouped by source (stable)
    tokens: np.ndarray
    value: np.ndarray             # each chunk's value
    all_aspects: float            # the whole coverage term
    source: np.ndarray
    caps: np.ndarray
    budget: float
    known: dict = field(default_factory=dict)

    @property
    def with_aspects(self) -> np.ndarray:
        """Each chunk's value plus every aspect it covers (built on first use)."""
        if "with_aspects" not in self.known:
            gain = self.aspect_gain
            self.known["with_aspects"] = self.value + (self.covers[self.eligible] @ gain if gain.size else 0.0)
        return self.known["with_aspects"]

    def form(self, aspects_per_chunk: bool) -> tuple[float, float]:
        """(bound, λ) over every eligible chunk: of each chunk's value plus every aspect it covers,
        or of the values alone plus the whole coverage term; each computed once."""
        key = ("form", aspects_per_chunk)
        if key not in self.known:
            everything = np.ones(len(self.eligible), dtype=bool)
            self.known[key] = (self.bound(everything, self.with_aspects, 0.0) if aspects_per_chunk
                               else self.bound(everything, self.value, self.all_aspects))
        return self.known[key]

    def bound(self, keep: np.ndarray, w: np.ndarray, extra: float) -> tuple[float, float]:
        """The LP bound over the chunks ``keep`` (bool over ``eligible``) worth ``w`` (plus
        ``extra``), and its price of a token λ."""
        order = np.flatnonzero(keep & (w > 0))  # an item worth nothing never counts, at any λ
        starts = np.zeros(len(self.caps) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.source[order], minlength=len(self.caps)), out=starts[1:])
        value, lam = _capped_bound(w, self.tokens, order, starts, self.caps, self.budget, BOUND_ITERATIONS)
        return float(value) + extra, float(lam)


#: The reach compares the chunks the LP takes this many times over (plus ``core_size``): near the LP's
#: margin the optimum trades chunks for their pairs. Measured on 3 ``ctxselect gen`` queries of
#: 8,000 x 64 whose budget holds ~1,900 chunks (a core of ~2,000): once over, the optimizer reached
#: 0.991-0.998 of the objective of comparing every pair (gold recall 0.005-0.008 lower); 1.5 and 2
#: times over reached it on 3 of 3 (3,100-3,250 and 4,100-4,250 chunks compared). Under per-source caps
#: the LP takes at most each source's cap, and :func:`reach` counts and ranks first no more (it counted
#: every chunk of positive reduced value: with caps the LP's price falls, so most chunks often have one,
#: and every pair was compared). Measured on ``ctxselect gen`` queries, each selection scored on the
#: problem with every pair compared (2026-12-06): 8,000 x 64 (duplicate rate 0.3, budgets 1.5 and 6
#: times the gold tokens, caps 10 and 50; 16 queries) compared 8,000 -> 416-742 chunks, the objective
#: equal on 9 and higher on 7 (the old count's was 0.9976-0.9997 of it); 20,000 x 384 with a cap of 20
#: (8 queries) 20,000 -> 492-498, equal on 8 of 8 (CPU 626-836 -> 211-241 ms); benchmarks/latency.py's
#: 20,000 x 384 (a cap of ~30; 6 queries) 1,041-1,187 -> 598-605, equal on 6 of 6. Without caps the
#: count and the order are as before.
LP_TAKEN_FACTOR = 2


@dataclass(frozen=True)
class Reach:
    """What the optimizer's :func:`reach` needs of :func:`ctxselect.select`: its ``core_size``,
    ``exact_up_to`` and whether the gate (its utilization ceiling) is enforced."""

    core_size: int
    exact_up_to: int
    enforce_gate: bool

    def __post_init__(self) -> None:  # select()'s own checks of the same values
        checks.integer(self.core_size, "core_size", low=1)
        checks.integer(self.exact_up_to, "exact_up_to", low=0)
        checks.boolean(self.enforce_gate, "enforce_gate")

    def of(self, packed: PackedCandidates, weights, query: str | None, exclude_outside_window: bool) -> "QueryReach":
        """The reach :func:`ctxselect.signals` calls for one query's candidates."""
        return QueryReach(self, packed, weights, query, exclude_outside_window)


class QueryReach:
    """:func:`ctxselect.signals`' ``reach`` for one query: called with the freshness and the
    question's probes, it computes the chunks' values once (kept in ``values`` for
    :func:`~ctxselect.selection.problem.build_problem`) and returns :func:`reach`'s priority and count."""

    def __init__(self, spec: Reach, packed: PackedCandidates, weights, query: str | None,
                 exclude_outside_window: bool) -> None:
        self.spec, self.packed, self.weights, self.query = spec, packed, weights, query
        self.exclude_outside_window = exclude_outside_window
        self.values: ChunkValues | None = None

    def __call__(self, freshness: np.ndarray, probes) -> tuple[np.ndarray, int]:
        self.values = chunk_values(self.packed, freshness, probes, self.weights, self.query)
        spec = self.spec
        room = capacity(self.packed, spec.enforce_gate)
        fits = selectable(self.packed, exclude_outside_window=self.exclude_outside_window)
        fits &= self.packed.tokens <= room
        return reach(self.packed, self.values, fits, room, spec.core_size, spec.exact_up_to)


_RELAXATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _relaxation(problem: Problem, capacity: int) -> _Relaxation:
    """The problem's relaxation at ``capacity``, built once per problem (its bounds on first use)."""
    known = _RELAXATIONS.setdefault(problem, {})
    if capacity not in known:
        known[capacity] = _relaxation_of(problem.packed, problem.value, problem.covers, problem.aspect_gain,
                                         problem.eligible, capacity)
    return known[capacity]


def _relaxation_of(packed: PackedCandidates, value: np.ndarray, covers: np.ndarray, aspect_gain: np.ndarray,
                   eligible: np.ndarray, capacity: int) -> _Relaxation:
    """The knapsack relaxation of the chunks ``eligible`` (bool) worth ``value`` at ``capacity``."""
    eligible = np.flatnonzero(eligible)
    codes = packed.source[eligible]  # a radix sort when the codes fit in 16 bits (2 -> 0.5 ms at 41,000)
    codes = codes.astype(np.int16) if len(packed.source_names) < 2**15 else codes
    eligible = eligible[np.argsort(codes, kind="stable")]
    return _Relaxation(
        covers=covers, aspect_gain=aspect_gain, eligible=eligible, tokens=packed.tokens[eligible].astype(np.float64),
        value=value[eligible].astype(np.float64), all_aspects=float(aspect_gain.sum()),
        source=packed.source[eligible], caps=packed.source_max.astype(np.int64), budget=float(capacity))


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
    (with_aspects, _), (plain, _) = r.form(True), r.form(False)
    best = min(with_aspects, plain)
    w, extra = (r.value, r.all_aspects) if plain < with_aspects else (r.with_aspects, 0.0)  # the tighter form splits
    for f in problem.hard_fields if fields is None else fields:
        codes = problem.packed.field_values[r.eligible, f]
        values = np.unique(codes[codes >= 0])
        if 2 <= len(values) <= MAX_SPLIT_VALUES:
            best = min(best, max(r.bound((codes < 0) | (codes == v), w, extra)[0] for v in values.tolist()))
    return best


def cut_bound(problem: Problem, capacity: int, *, ceiling: bool, deadline: float) -> tuple[float | None, dict]:
    """A bound of the uncut problem (every chunk of ``problem.uncut_eligible``) after the time limit,
    the pair budget or the reach cut the similarities, tighter than the LP over all of them when the
    chunks not compared are worth less a token than the LP's price: (the bound or None, timings).

    Split a selection S of the uncut problem into A, its compared chunks, and B, the others. The
    objective is the values, plus the aspects covered, less penalties that are never negative, so
    F(S) ≤ V(A) + all aspects + V(B), and A keeps to the budget less t(B), the per-source caps, the
    chunk count, one value per hard field, one version per document and the near-duplicate clusters
    of the pairs among compared chunks (those a full run computes, but for a float32 ulp at the
    threshold: the pairs within :data:`CLUSTER_MARGIN` of it are left out). Hence, c = t(B):

        F(S) ≤ all aspects + min(OPT, LP − λ c) + ρ c

    with OPT the proven optimum of the values alone over the compared chunks under those constraints
    (our branch and bound, without the gate's lower rows, the source minimums, contradictions and
    penalties: each only lowers it), LP and λ the LP relaxation of the values under the budget and
    the per-source caps and its price of a token (LP(C − c) ≤ LP − λ c for the λ its bound comes
    with), ρ the largest value per token of a chunk not compared. The right side is largest at
    c = 0, c = (LP − OPT) / λ or c = C. Only compared chunks of positive value within ``capacity``
    count (a selection without the others is worth as much). None when more than
    :data:`EXACT_MAX_CORE` such chunks were compared, when ρ ≥ λ > 0 (the LP over every chunk is
    then as good), or when the search is not proven within :data:`NODE_LIMIT` nodes or ``deadline``.
    ``ceiling``: the gate's utilization ceiling holds (as in the tier solved)."""
    compared, uncut = problem.signals.compared, problem.uncut_eligible
    if compared is None or uncut is None:
        return None, {}
    tokens = problem.packed.tokens
    inside = uncut & compared & (problem.value > 0) & (tokens <= capacity)
    outside = uncut & ~compared
    if not 0 < np.count_nonzero(inside) <= EXACT_MAX_CORE:
        return None, {}
    started = time.perf_counter()
    rho = float(np.max(problem.value[outside] / tokens[outside], initial=0.0))
    none = np.zeros(0, dtype=np.int64)
    values_only = replace(problem, eligible=inside, aspect_gain=np.zeros_like(problem.aspect_gain), hard_i=none,
                          hard_j=none, pair_i=none, pair_j=none, pair_penalty=np.zeros(0),
                          groups=_firm_clusters(problem.signals))
    lp, lam = _relaxation(values_only, capacity).form(False)  # no aspects left: the values' LP
    if rho >= lam and rho > 0:
        return None, {"bound": time.perf_counter() - started}
    exact = solve_exact(values_only, enforce_gate=False, enforce_sources=False, ceiling=ceiling, hint=None,
                        deadline=deadline, node_limit=NODE_LIMIT)
    timings = {"bound": time.perf_counter() - started}
    if exact is None or exact.status != "optimal":
        return None, timings
    # the search's optimum is of values rounded to 1 / SOLVER_SCALE: each chunk's error at most half of it
    best = exact.objective + 0.5 * np.count_nonzero(inside) / SOLVER_SCALE
    points = [0.0, float(capacity)] + ([(lp - best) / lam] if lam > 0 and best < lp else [])
    most = max(min(best, lp - lam * c) + rho * c for c in points if 0 <= c <= capacity)
    return float(problem.aspect_gain.sum()) + most, timings


def _firm_clusters(signals) -> list[np.ndarray]:
    """The near-duplicate clusters (two or more members) of the duplicate pairs at least
    :data:`CLUSTER_MARGIN` above the duplicate threshold: a full run's clusters hold them, though a
    pair at the threshold may be one in a cut run and not in a full run (a float32 ulp between BLAS
    tiles). No clusters without a threshold."""
    red, dup, threshold = signals.redundancy, signals.duplicate, signals.duplicate_threshold
    if threshold is None or not dup.any():
        return []
    firm = dup & (red.weight >= threshold + CLUSTER_MARGIN)
    n = len(signals.freshness)
    return replace(signals, clusters=_components(n, red.i[firm], red.j[firm])).duplicate_groups()


def choose_core(problem: Problem, core_size: int, extra: Sequence[np.ndarray], exact_up_to: int = 0,
                capacity: int | None = None) -> np.ndarray:
    """Positions of the core: all eligible chunks when there are at most ``max(core_size,
    exact_up_to)``, else the ``core_size`` the LP relaxation values most at ``capacity`` tokens
    (default: the gate's utilization ceiling) — value less λ per token, λ the LP's price of a token —
    from :data:`LP_CORE_FROM` eligible chunks (below, half the best values and half the best values
    per token), and the chunks the constraints need.

    Measured on 5 generated queries at n = 20,000 (benchmarks/latency.py instances) against the
    whole problem's proven optimum: the core's solution was 0.18-1.26 % below it when the core held
    the best values and values per token, 0-0.006 % below it with the LP's choice (cores of
    324-331 chunks either way)."""
    eligible = problem.eligible.nonzero()[0]
    if len(eligible) <= max(core_size, exact_up_to):
        return eligible
    packed = problem.packed
    whole = problem.eligible if problem.uncut_eligible is None else problem.uncut_eligible  # a cut: by the uncut size
    if np.count_nonzero(whole) >= LP_CORE_FROM:
        r = _relaxation(problem, problem.capacity(True) if capacity is None else capacity)
        lam = r.form(False)[1]  # the price of a token for the chunks' values
        reduced = problem.value[eligible] - lam * packed.tokens[eligible]
        picks = [eligible[smallest(-reduced, core_size)]]
    else:
        value = problem.value[eligible]
        per_token = value / packed.tokens[eligible]
        picks = [eligible[smallest(-value, core_size // 2)], eligible[smallest(-per_token, core_size // 2)]]
    providers = best_providers(packed, problem.covers, problem.value, problem.eligible, max(2, core_size // 50))
    picks.append(providers.nonzero()[0])
    picks.extend(m.nonzero()[0] for m in extra)
    return np.unique(np.concatenate(picks))


def reach(packed: PackedCandidates, values: ChunkValues, fits: np.ndarray, capacity: int, core_size: int,
          exact_up_to: int) -> tuple[np.ndarray, int]:
    """Which chunks the cosine compares with every other for the optimizer, before the pairs are
    known (:func:`ctxselect.signals`' ``reach``): a priority, and how many to compare.

    The priority is what :func:`choose_core` ranks by, value less the LP's price of its tokens at
    ``capacity`` over the chunks that ``fits`` (admissible, in their window, within ``capacity``, of
    a source not capped at 0): each required aspect's and required source's best providers first
    (twice as many as the core takes), then the other chunks the LP takes (:func:`lp_taken`: of
    positive reduced value, each source's best up to its cap), then the rest by reduced value; the
    chunks that do not fit come last. The count is those providers, ``core_size``, and
    :data:`LP_TAKEN_FACTOR` times the chunks the LP takes, so a budget that holds many chunks gets
    them compared; it is every chunk when at most ``exact_up_to`` fit (a problem solved whole is
    never cut). Without caps the order is by reduced value alone (the LP takes every chunk of
    positive reduced value).

    Measured on benchmarks/latency.py instances (n = 2,000, d = 384, 6 queries): comparing the 300
    of highest reduced value reached the objective of comparing all on 6 of 6, in 26-29 against
    36-41 ms; taken by relevance x freshness instead, even 800 lost up to 0.8 %."""
    fits = fits & (packed.source_max[packed.source] > 0)  # a source capped at 0 gives nothing
    r = _relaxation_of(packed, values.value, values.covers, values.aspect_gain, fits, capacity)
    lam = r.form(False)[1] if len(r.eligible) else 0.0
    reduced = values.value - lam * packed.tokens
    low, span = (reduced[fits].min(), np.ptp(reduced[fits])) if fits.any() else (0.0, 0.0)
    key = np.where(fits, reduced, low - 1.0)
    first = best_providers(packed, values.covers, values.value, fits, 2 * max(2, core_size // 50))  # twice the core's
    taken = lp_taken(packed, reduced, fits & ~first)
    count = core_size + LP_TAKEN_FACTOR * int(taken.sum()) + int(first.sum())
    if np.count_nonzero(fits) <= exact_up_to:  # a problem solved whole: every pair compared (the pairs
        count = packed.n  # between chunks none may select can hold drift that corroboration reads)
    count = max(1, min(count, packed.n))
    lift = span + 1.0  # providers, then what the LP takes, then the others
    return np.where(first, key + 2.0 * lift, np.where(taken, key + lift, key)), count


def lp_taken(packed: PackedCandidates, reduced: np.ndarray, among: np.ndarray) -> np.ndarray:
    """The chunks of ``among`` (bool) that the LP takes at the price behind ``reduced`` (each chunk's
    value less its tokens' price): those of positive reduced value, each source's best up to its cap
    (ties: the first in position order). Without caps, every one of positive reduced value."""
    positive = np.flatnonzero(among & (reduced > 0))
    order = positive[np.lexsort((-reduced[positive], packed.source[positive]))]  # by source, best first
    source = packed.source[order]
    starts = np.searchsorted(source, source, side="left")  # each one's rank within its source
    taken = np.zeros(packed.n, dtype=bool)
    taken[order[np.arange(len(order)) - starts < packed.source_max[source]]] = True
    return taken
