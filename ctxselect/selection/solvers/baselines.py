"""Baselines, as assemblers build context today, under the same hard constraints as the
optimizer (eligibility, budget, hard conflicts, near-duplicate clusters, source and count caps).

Each takes a :class:`~ctxselect.selection.problem.Problem` and returns the selection mask and a note per
chunk it passed over for a selector-specific reason. The loops are the kernels of
:mod:`ctxselect.kernels.greedy`; this module hands them the problem's arrays.
"""

from __future__ import annotations

import weakref

import numpy as np

from ctxselect.kernels.greedy import _density, _greedy, _mmr
from ctxselect.selection.constraints import partner_pairs
from ctxselect.selection.problem import Problem, adjacency

__all__ = ["greedy", "topk", "density", "mmr"]


def _by_relevance(problem: Problem) -> np.ndarray:
    """Positions by relevance, highest first; ties keep candidate order."""
    return (-problem.packed.relevance).argsort(kind="stable")


#: Each problem's hard-constraint arrays, built once: the optimizer runs two baselines on one
#: problem for its hints (the kernels only read them).
_HARD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _hard(problem: Problem) -> tuple:
    """The hard constraints as the kernels' arguments (tokens ... group_members of
    :func:`ctxselect.kernels.greedy._greedy`): the budget as capacity, the chunk cap (n + 1 when
    none), hard partners as CSR, near-duplicate groups as CSR with each chunk's group."""
    arrays = _HARD.get(problem)
    if arrays is None:
        arrays = _HARD[problem] = _hard_arrays(problem)
    return arrays


def _hard_arrays(problem: Problem) -> tuple:
    packed = problem.packed
    n = problem.n
    reqs = packed.requirements
    pi, pj = partner_pairs(problem, problem.hard_fields)
    partner_ptr, partner_nb, _ = adjacency(n, pi, pj, np.zeros(len(pi)))
    sizes = np.array([len(g) for g in problem.groups], dtype=np.int64)
    group_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    sizes.cumsum(out=group_ptr[1:])
    group_members = (np.concatenate(problem.groups).astype(np.int64) if len(sizes)
                     else np.zeros(0, dtype=np.int64))
    group_of = np.full(n, -1, dtype=np.int64)
    group_of[group_members] = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    return (packed.tokens.astype(np.int64, copy=False), packed.source.astype(np.int64), packed.source_max,
            int(packed.budget), int(reqs.max_chunks) if reqs.max_chunks is not None else n + 1, problem.eligible,
            packed.field_values, np.asarray(problem.hard_fields, dtype=np.int64), bool(reqs.version_conflicts),
            packed.doc, packed.version, partner_ptr, partner_nb.astype(np.int64), group_of, group_ptr, group_members)


def greedy(problem: Problem) -> tuple[np.ndarray, dict[int, str]]:
    """By relevance, skipping what does not fit."""
    selected, _ = _greedy(_by_relevance(problem), *_hard(problem), False)
    return selected, {}


def topk(problem: Problem) -> tuple[np.ndarray, dict[int, str]]:
    """By relevance, stopping at the first chunk that does not fit the remaining budget."""
    order = _by_relevance(problem)
    selected, stop = _greedy(order, *_hard(problem), True)
    notes: dict[int, str] = {}
    if stop >= 0:
        why = f"not reached: top-k stopped at `{problem.packed.ids[order[stop]]}`, the first chunk that did not fit"
        notes = dict.fromkeys(order[stop + 1:].tolist(), why)
    return selected, notes


def density(problem: Problem) -> tuple[np.ndarray, dict[int, str]]:
    """Penalty-aware marginal gain per token, with lazy evaluation; stops when no chunk adds
    value."""
    indptr, neighbours, weights = adjacency(problem.n, problem.pair_i, problem.pair_j, problem.pair_penalty)
    selected, stop, gain, queued = _density(
        problem.value.astype(np.float64, copy=False), problem.aspect_gain.astype(np.float64, copy=False),
        np.ascontiguousarray(problem.covers, dtype=bool), indptr, neighbours.astype(np.int64, copy=False),
        weights.astype(np.float64, copy=False), *_hard(problem))
    notes: dict[int, str] = {}
    if stop >= 0:
        notes[int(stop)] = f"adds no value: marginal gain {gain:.3f}"
        for rest in queued.tolist():
            notes.setdefault(rest, "adds no value once the better chunks are in")
    return selected, notes


def mmr(problem: Problem, lambda_: float = 0.7) -> tuple[np.ndarray, dict[int, str]]:
    """Maximal marginal relevance: λ·relevance − (1 − λ)·(highest similarity to a selected
    chunk), picking while anything fits."""
    red = problem.signals.redundancy
    indptr, neighbours, sims = adjacency(problem.n, red.i, red.j, red.weight)
    return _mmr(float(lambda_), problem.packed.relevance.astype(np.float64, copy=False), indptr,
                neighbours.astype(np.int64, copy=False), sims.astype(np.float64, copy=False), *_hard(problem)), {}
