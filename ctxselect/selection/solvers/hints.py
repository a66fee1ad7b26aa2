"""The solver's hints: the baselines' selections, made when first read, the best of them for a tier,
and which of two selections CP-SAT is hinted with."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ctxselect.selection.constraints import satisfies
from ctxselect.selection.problem import Problem, score
from ctxselect.selection.solvers.registry import BASELINES, Method

__all__ = ["Baselines", "best_hint", "better"]


class Baselines(Sequence):
    """The greedy and density baselines' selections (the solver's hints, the fallback), made when
    first read: a proof of the whole eligible set's optimum by the branch and bound needs neither
    (at n = 200 they were ~0.2 ms of a ~5 ms call); their time goes to ``timings["baselines"]``."""

    METHODS = (Method.GREEDY, Method.DENSITY)

    def __init__(self, problem: Problem, timings: dict):
        self._problem, self._timings, self._masks = problem, timings, None

    def __len__(self) -> int:
        return len(self.METHODS)

    def __getitem__(self, k):
        return self.selections()[k]

    def selections(self) -> list[np.ndarray]:
        """The selections, made now if not yet."""
        if self._masks is None:
            t0 = time.perf_counter()
            self._masks = [BASELINES[m](self._problem)[0] for m in self.METHODS]
            self._timings["baselines"] = time.perf_counter() - t0
        return self._masks


def best_hint(problem: Problem, candidates: Sequence[np.ndarray], enforce_gate: bool,
              enforce_sources: bool, ceiling: bool) -> np.ndarray:
    """The highest-scoring candidate selection that satisfies the model, else the highest."""
    scored = sorted(((score(problem, m), k) for k, m in enumerate(candidates)), reverse=True)
    for _, k in scored:
        if satisfies(problem, candidates[k], enforce_gate=enforce_gate, enforce_sources=enforce_sources,
                     ceiling=ceiling):
            return candidates[k]
    return candidates[scored[0][1]]


def better(problem: Problem, hint: np.ndarray | None, found: np.ndarray, enforce_gate: bool, enforce_sources: bool,
           ceiling: bool | None) -> bool:
    """Whether ``hint`` meets the model and scores above ``found`` (a selection that meets it)."""
    return hint is not None and score(problem, hint) > score(problem, found) and satisfies(
        problem, hint, enforce_gate=enforce_gate, enforce_sources=enforce_sources, ceiling=ceiling)
