"""Plain-Python twin of kernels/greedy.py: the hard state of a growing selection, the marginal gain
and the four baselines (greedy, top-k, density, mmr), as the library ran them in Python before the
kernels (NumPy vectorised per step). They read the library's ``Problem`` and return the selection
mask and the selector's notes, so a kernel's selection can be compared with the twin's exactly."""

from __future__ import annotations

import heapq

import numpy as np

from ctxselect.selection.constraints import pairwise_partners
from ctxselect.selection.problem import Problem, adjacency


def naive_marginal_gain(problem: Problem, i: int, covered: np.ndarray, penalty_to_selected: np.ndarray) -> float:
    """Chunk i's value, less its pair penalties with the selected chunks, plus the aspects it
    covers that ``covered`` does not."""
    gain = problem.value[i] - penalty_to_selected[i]
    if problem.aspect_gain.size:
        gain += float(problem.aspect_gain[problem.covers[i] & ~covered].sum())
    return float(gain)


def disagreeing(packed, i: int, fields) -> np.ndarray:
    """Chunks that disagree with chunk i on one of ``fields``, or are another version of its
    document (vectorised over all chunks)."""
    out = np.zeros(packed.n, dtype=bool)
    for f in fields:
        value = packed.field_values[i, f]
        if value >= 0:
            column = packed.field_values[:, f]
            out |= (column >= 0) & (column != value)
    if packed.requirements.version_conflicts and packed.doc[i] >= 0 and packed.version[i] >= 0:
        out |= (packed.doc == packed.doc[i]) & (packed.version >= 0) & (packed.version != packed.version[i])
    return out


class HardState:
    """The hard constraints while a selection grows one chunk at a time."""

    def __init__(self, problem: Problem) -> None:
        packed = problem.packed
        self.problem = problem
        self.capacity = packed.budget
        self.used = 0
        self.count = 0
        self.source_count = np.zeros(len(packed.source_names), dtype=np.int64)
        self.blocked = ~problem.eligible.copy()
        self.selected = np.zeros(problem.n, dtype=bool)
        self.partners = pairwise_partners(problem, problem.hard_fields)
        self.group_of = np.full(problem.n, -1, dtype=np.int64)
        for g, members in enumerate(problem.groups):
            self.group_of[members] = g
        reqs = packed.requirements
        self.max_chunks = reqs.max_chunks if reqs.max_chunks is not None else problem.n + 1

    def smallest_eligible(self) -> int:
        tokens = self.problem.packed.tokens[self.problem.eligible]
        return int(tokens.min()) if tokens.size else self.capacity + 1

    def fits(self, i: int) -> bool:
        packed = self.problem.packed
        src = packed.source[i]
        return (not self.blocked[i] and not self.selected[i]
                and self.used + packed.tokens[i] <= self.capacity
                and self.source_count[src] < packed.source_max[src]
                and self.count < self.max_chunks)

    def available(self) -> np.ndarray:
        packed = self.problem.packed
        if self.count >= self.max_chunks:
            return np.zeros(self.problem.n, dtype=bool)
        return (~self.blocked & ~self.selected & (packed.tokens <= self.capacity - self.used)
                & (self.source_count[packed.source] < packed.source_max[packed.source]))

    def add(self, i: int) -> None:
        packed = self.problem.packed
        self.selected[i] = True
        self.used += int(packed.tokens[i])
        self.count += 1
        self.source_count[packed.source[i]] += 1
        self.blocked |= disagreeing(packed, i, self.problem.hard_fields)
        for other in self.partners.get(i, ()):
            self.blocked[other] = True
        if self.group_of[i] >= 0:
            self.blocked[self.problem.groups[self.group_of[i]]] = True


def _by_relevance(problem: Problem) -> np.ndarray:
    return np.argsort(-problem.packed.relevance, kind="stable")


def naive_greedy(problem: Problem):
    state = HardState(problem)
    smallest = state.smallest_eligible()
    for i in _by_relevance(problem).tolist():
        if state.capacity - state.used < smallest:
            break
        if state.fits(i):
            state.add(i)
    return state.selected, {}


def naive_topk(problem: Problem):
    state = HardState(problem)
    packed = problem.packed
    notes: dict[int, str] = {}
    order = _by_relevance(problem).tolist()
    for rank, i in enumerate(order):
        if state.blocked[i]:
            continue
        if state.used + packed.tokens[i] > state.capacity:
            for later in order[rank + 1:]:
                notes[later] = f"not reached: top-k stopped at `{packed.ids[i]}`, the first chunk that did not fit"
            break
        if state.fits(i):
            state.add(i)
    return state.selected, notes


def naive_density(problem: Problem):
    state = HardState(problem)
    packed = problem.packed
    indptr, neighbours, weights = adjacency(problem.n, problem.pair_i, problem.pair_j, problem.pair_penalty)
    covered = np.zeros(problem.aspect_gain.size, dtype=bool)
    penalty = np.zeros(problem.n)
    notes: dict[int, str] = {}
    eligible = np.flatnonzero(problem.eligible)
    first = problem.value[eligible].copy()
    if covered.size:
        first += np.where(problem.covers[eligible], problem.aspect_gain, 0.0).sum(axis=1)
    heap = list(zip((-first / packed.tokens[eligible]).tolist(), eligible.tolist()))
    heapq.heapify(heap)
    smallest = state.smallest_eligible()
    while heap and state.capacity - state.used >= smallest:
        _, i = heapq.heappop(heap)
        if not state.fits(i):
            continue
        gain = naive_marginal_gain(problem, i, covered, penalty)
        key = -gain / packed.tokens[i]
        if heap and key > heap[0][0] + 1e-15:
            heapq.heappush(heap, (key, i))
            continue
        if gain <= 0:
            notes[i] = f"adds no value: marginal gain {gain:.3f}"
            for _, rest in heap:
                notes.setdefault(rest, "adds no value once the better chunks are in")
            break
        state.add(i)
        if covered.size:
            covered |= problem.covers[i]
        penalty[neighbours[indptr[i]:indptr[i + 1]]] += weights[indptr[i]:indptr[i + 1]]
    return state.selected, notes


def naive_mmr(problem: Problem, lambda_: float = 0.7):
    state = HardState(problem)
    packed = problem.packed
    red = problem.signals.redundancy
    indptr, neighbours, sims = adjacency(problem.n, red.i, red.j, red.weight)
    max_sim = np.zeros(problem.n)
    while True:
        available = state.available()
        if not available.any():
            break
        scores = np.where(available, lambda_ * packed.relevance - (1 - lambda_) * max_sim, -np.inf)
        i = int(np.argmax(scores))
        state.add(i)
        np.maximum.at(max_sim, neighbours[indptr[i]:indptr[i + 1]], sims[indptr[i]:indptr[i + 1]])
    return state.selected, {}


NAIVE_BASELINES = {"greedy": naive_greedy, "topk": naive_topk, "density": naive_density, "mmr": naive_mmr}
