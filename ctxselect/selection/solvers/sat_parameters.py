"""CP-SAT's parameters in one table: every setting that differs from OR-Tools' default, with the
measurement behind it. :func:`sat_parameters` fills a ``SatParameters`` from the table and the time
left; :func:`ctxselect.selection.solvers.cpsat.solve_optimal` solves with it."""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["SAT_PARAMETERS", "sat_parameters"]

#: Name -> value; a string is the name of an enum value of ``SatParameters`` (``LP_SEARCH``): no
#: parameter set here takes text (one that did would need its own marker).
SAT_PARAMETERS: dict[str, object] = {
    # one thread: select() runs inside the caller's process, once per LLM call
    "num_workers": 1,
    # CP-SAT's own handler put SIGINT back to the OS default after a solve: Ctrl-C then killed the
    # process (no KeyboardInterrupt, no `finally`, the CLI's temporary file left behind)
    "catch_sigint_signal": False,
    # the pair linearisation's LP bound is what proves optimality
    "linearization_level": 2,
    # the same input, the same selection
    "random_seed": 0,
    # measured: 20-30 % faster at n = 200-2,000, the same optima
    "symmetry_level": 0,
    "cp_model_probing_level": 0,
    # measured: p50 18 -> 12.5 ms at n = 200, 23 -> 20 ms on a 300-chunk core
    "cp_model_presolve": False,
    # measured (10 generated queries each, the same optima): solve p50 15.9 -> 8.0 ms at n = 200,
    # 29.6 -> 12.5 ms on the 300-chunk core at 2,000, 23.9 -> 21.5 ms at 500; the LP with the
    # at-most-one (clique) cuts still proves the optimum
    "add_cg_cuts": False,
    "add_mir_cuts": False,
    "add_zero_half_cuts": False,
    # branch on the LP relaxation's reduced costs. Measured 2026-12-07 (benchmarks/latency.py
    # queries; each model CP-SAT solved in select() solved again with and without it, in turn):
    # solve wall p50 8.7 -> 4.6 ms on the ~200-chunk cores at n = 2,000 text only (12 models),
    # 18.6 -> 14.3 ms on the ~450-chunk whole sets at 2,000 x 384 (9), 10.9 -> 9.8 ms at 4,000 (11),
    # mean 40.0 -> 29.7 ms on the LP's cores at 50,000 (3), mean 34.9 -> 33.1 ms at 20,000 (5; p50
    # 29.8 -> 33.1); every model proven optimal with the same objective either way
    "search_branching": "LP_SEARCH",
}


def sat_parameters(helper: ModuleType, seconds: float) -> Any:
    """A ``helper.SatParameters`` (OR-Tools' ``cp_model_helper``, imported on first use) holding
    :data:`SAT_PARAMETERS` and a time limit of ``seconds``."""
    params = helper.SatParameters()
    for name, value in SAT_PARAMETERS.items():
        setattr(params, name, getattr(helper.SatParameters, value) if isinstance(value, str) else value)
    params.max_time_in_seconds = seconds
    return params
