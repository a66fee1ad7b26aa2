"""The closest feasible freshness.

When the gate cannot be met and its freshness floor is what stands in the way, dropping the
floor whole made older data give the more complete context (a year later, the floor became
infeasible, was dropped, and chunks it had excluded came back). Instead the optimizer finds the
highest relevance-weighted freshness φ* that the gate's other conditions, the sources and the
hard constraints allow — Dinkelbach's method over CP-SAT: maximise Σ r_i·(f_i − φ)·x_i under
them, set φ to the chosen set's freshness, repeat until nothing fresher exists — and keeps the
gate with its floor lowered to φ*.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ctxselect.selection.problem import Problem
from ctxselect.selection.solvers.cpsat import solve_optimal

__all__ = ["closest_freshness", "with_freshness_floor", "freshness_of", "FRESHNESS_SLACK"]

#: The lowered floor sits this far below φ*, so the set that reaches φ* still meets the floor's
#: rounded row in the model.
FRESHNESS_SLACK = 1e-6
#: Dinkelbach steps at most (each a CP-SAT solve; it converges in a few on every instance seen).
MAX_STEPS = 8


def freshness_of(problem: Problem, mask: np.ndarray) -> float:
    """φ of the selection ``mask``: Σ r_i·f_i / Σ r_i (the plain mean when every r is 0)."""
    r, f = problem.packed.relevance[mask], problem.signals.freshness[mask]
    if r.sum() > 0:
        return float((r * f).sum() / r.sum())
    return float(f.mean()) if f.size else 0.0


def with_freshness_floor(problem: Problem, floor: float) -> Problem:
    """``problem`` with the gate's ``min_freshness`` set to ``floor`` (the rest unchanged)."""
    reqs = problem.packed.requirements
    gate = replace(reqs.gate, min_freshness=float(min(max(floor, 0.0), 1.0)))
    return replace(problem, packed=replace(problem.packed, requirements=replace(reqs, gate=gate)))


def closest_freshness(problem: Problem, *, deadline: float, core_size: int, exact_up_to: int,
                      ceiling: bool) -> tuple[float, bool] | None:
    """(φ*, proven): the highest freshness a selection meeting every other gate condition, the
    source minimums and the hard constraints can have; ``proven`` when every step was solved to
    optimality before ``deadline``. None when the other conditions cannot be met either."""
    unfloored = with_freshness_floor(problem, 0.0)
    r, f = problem.packed.relevance, problem.signals.freshness
    phi, best, proven = 0.0, None, True
    for _ in range(MAX_STEPS):
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return None if best is None else (best, False)
        step = replace(unfloored, value=r * (f - phi), aspect_gain=np.zeros_like(unfloored.aspect_gain),
                       pair_penalty=np.zeros_like(unfloored.pair_penalty))
        result = solve_optimal(step, enforce_gate=True, enforce_sources=True, hint=None, time_limit=remaining,
                               core_size=core_size, exact_up_to=exact_up_to, ceiling=ceiling)
        if result.status not in ("optimal", "feasible"):
            return None if best is None else (best, False)
        found = freshness_of(problem, result.mask)
        best = found if best is None else max(best, found)
        proven = proven and result.status == "optimal"
        if result.status != "optimal" or found <= phi + 1e-12:
            break
        phi = found
    return best, proven
