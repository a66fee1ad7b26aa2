"""Selector and assembly-order registries, keyed by Enums shared with the command line."""

from __future__ import annotations

from enum import Enum
from typing import Callable

import numpy as np

from ctxselect.selection.problem import Problem
from ctxselect.selection.solvers import baselines

__all__ = ["Method", "Order", "BASELINES", "assembly_order"]



class Method(str, Enum):
    """Selection methods."""

    GREEDY = "greedy"
    TOPK = "topk"
    DENSITY = "density"
    MMR = "mmr"
    OPTIMAL = "optimal"


class Order(str, Enum):
    """Assembly orders of the selected chunks."""

    EDGES = "edges"                  #: strongest at the start and the end, weakest in the middle
    RANK = "rank"                    #: retrieval rank (relevance when the rank is unknown)
    SOURCE = "source"                #: grouped by source, required sources first
    CHRONOLOGICAL = "chronological"  #: oldest first, undated last


BASELINES: dict[Method, Callable[[Problem], tuple[np.ndarray, dict[int, str]]]] = {
    Method.GREEDY: baselines.greedy,
    Method.TOPK: baselines.topk,
    Method.DENSITY: baselines.density,
    Method.MMR: baselines.mmr,
}


def assembly_order(problem: Problem, mask: np.ndarray, order: Order) -> list[int]:
    """Positions of the selected chunks in the order they go into the window."""
    packed = problem.packed
    chosen = mask.nonzero()[0]
    strength = packed.relevance[chosen] * problem.signals.freshness[chosen]
    by_strength = chosen[np.lexsort((chosen, -strength))]
    if order is Order.EDGES:
        front, back = [], []
        for k, i in enumerate(by_strength.tolist()):
            (front if k % 2 == 0 else back).append(i)
        return front + back[::-1]
    if order is Order.RANK:
        rank = np.where(packed.rank[chosen] >= 0, packed.rank[chosen], np.iinfo(np.int64).max)
        return chosen[np.lexsort((chosen, -packed.relevance[chosen], rank))].tolist()
    if order is Order.SOURCE:
        return chosen[np.lexsort((chosen, -packed.relevance[chosen], packed.source[chosen]))].tolist()
    stamp = np.where(packed.has_timestamp[chosen], packed.timestamp[chosen], np.inf)
    return chosen[np.lexsort((chosen, -packed.relevance[chosen], stamp))].tolist()
