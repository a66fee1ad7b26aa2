"""The best providers of what a query requires, the one definition the cut cosine's order
(:func:`ctxselect.features.compute.signals`), the optimizer's reach and its core
(:mod:`ctxselect.selection.solvers.core`) put first."""

from __future__ import annotations

import numpy as np

from ctxselect.packing import PackedCandidates

__all__ = ["best_providers", "smallest"]


def smallest(key: np.ndarray, k: int) -> np.ndarray:
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


def best_providers(packed: PackedCandidates, covers: np.ndarray, key: np.ndarray, fits: np.ndarray,
                   per_group: int) -> np.ndarray:
    """Which chunks (bool, n) are among the ``per_group`` of highest ``key`` (ties to the lower
    position) of those that ``fits`` and cover a column of ``covers`` (bool, n x A: the aspects to
    provide), or among the ``per_group`` plus its minimum of a source that has one."""
    best = np.zeros(packed.n, dtype=bool)
    sources = np.flatnonzero(packed.source_min > 0)
    groups = [covers[:, a] for a in range(covers.shape[1])] + [packed.source == s for s in sources.tolist()]
    extras = [0] * covers.shape[1] + packed.source_min[sources].tolist()
    for members, extra in zip(groups, extras):
        members = np.flatnonzero(members & fits)
        best[members[smallest(-key[members], per_group + int(extra))]] = True
    return best
