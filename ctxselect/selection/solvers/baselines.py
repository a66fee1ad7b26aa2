"""Baselines, as assemblers build context today, under the same hard constraints as the
optimizer (eligibility, budget, hard conflicts, near-duplicate clusters, source and count caps).

Each takes a :class:`~ctxselect.selection.problem.Problem` and returns the selection mask and a note per
chunk it passed over for a selector-specific reason.
"""

from __future__ import annotations

import heapq

import numpy as np

from ctxselect.selection.constraints import HardState
from ctxselect.selection.problem import Problem, adjacency, marginal_gain

__all__ = ["greedy", "topk", "density", "mmr"]


def _by_relevance(problem: Problem) -> np.ndarray:
    """Positions by relevance, highest first; ties keep candidate order."""
    return np.argsort(-problem.packed.relevance, kind="stable")


def greedy(problem: Problem) -> tuple[np.ndarray, dict[int, str]]:
    """By relevance, skipping what does not fit."""
    state = HardState(problem)
    smallest = state.smallest_eligible()
    for i in _by_relevance(problem).tolist():
        if state.capacity - state.used < smallest:
            break  # nothing fits any more
        if state.fits(i):
            state.add(i)
    return state.selected, {}


def topk(problem: Problem) -> tuple[np.ndarray, dict[int, str]]:
    """By relevance, stopping at the first chunk that does not fit the remaining budget."""
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


def density(problem: Problem) -> tuple[np.ndarray, dict[int, str]]:
    """Penalty-aware marginal gain per token, with lazy evaluation; stops when no chunk adds
    value."""
    state = HardState(problem)
    packed = problem.packed
    indptr, neighbours, weights = adjacency(problem.n, problem.pair_i, problem.pair_j, problem.pair_penalty)
    covered = np.zeros(problem.aspect_gain.size, dtype=bool)
    penalty = np.zeros(problem.n)
    notes: dict[int, str] = {}
    eligible = np.flatnonzero(problem.eligible)
    # every chunk's first marginal gain at once (nothing selected yet: no penalty, nothing covered);
    # the loop re-evaluates a chunk with marginal_gain() before taking it
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
        gain = marginal_gain(problem, i, covered, penalty)
        key = -gain / packed.tokens[i]
        if heap and key > heap[0][0] + 1e-15:  # gains only shrink: re-queue with the fresh value
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


def mmr(problem: Problem, lambda_: float = 0.7) -> tuple[np.ndarray, dict[int, str]]:
    """Maximal marginal relevance: λ·relevance − (1 − λ)·(highest similarity to a selected
    chunk), picking while anything fits."""
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
