"""The exact selector's fast path: the branch and bound of :mod:`ctxselect.kernels.bnb` on the
model CP-SAT solves (:func:`ctxselect.selection.solvers.cpsat.solve_optimal`) on the same core: the
whole eligible set, or (below ``LP_CORE_FROM`` eligible chunks) the core of the best values and
values per token, whose proven optimum is the core's only (reported "feasible", as CP-SAT's is).

The kernel's arrays are built from the Problem as the CP-SAT model reads it
(:mod:`ctxselect.selection.solvers.model_data`): the same integer objective (values, aspect gains
and pair penalties rounded to 1 / SOLVER_SCALE), the same integer gate rows, the same pairs and
clusters kept apart, the same per-value agreement of conflict fields and versions. So "proven"
means the optimum CP-SAT would prove, as the same integer. Models with a feature the kernel does
not have (the contradiction-density limit κ_max > 0 over conflicts in the core, the best-effort
source minimums) are not taken (:func:`solve_exact` returns None).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ctxselect._config import SOLVER_SCALE
from ctxselect.kernels.bnb import INFEASIBLE, PROVEN, _evaluate, _search, quiet_compile
from ctxselect.kernels.bnb_bound import ROOT_STEPS, ROOT_STEPS_FROM, _reduced, _root_multipliers
from ctxselect.selection.problem import Problem
from ctxselect.selection.solvers.model_data import (
    cluster_members,
    conflict_fields,
    forbidden_array,
    gate_rows,
    one_value_groups,
    penalty_arrays,
    scaled_array,
)

__all__ = ["ExactOutcome", "EXACT_MAX_CORE", "EXACT_SHARE", "NODE_LIMIT", "CORE_NODE_LIMIT", "exact_arrays",
           "run_search", "solve_exact", "load_exact", "QUICK_MAX_CORE"]

#: The branch and bound runs first up to this many eligible chunks. Measured (benchmarks/latency.py,
#: 2026-12-01, base and this in the same minutes): select() CPU p50 at n = 200 (~170 eligible)
#: 24.1 / 20.3 -> 14.9 / 14.5 ms; at n = 500 (~410 eligible) 89.8 / 76.4 -> 60.0 / 60.2 ms.
EXACT_MAX_CORE = 500
#: In a late grace (``quick``) the branch and bound searches a core of up to this many chunks (the
#: core holds the baselines' selections, so it can pass EXACT_MAX_CORE): with time_limit=1 ms,
#: generated queries at n = 2,000, 4,000 and 8,000 gave cores of 571-576, 1,125 and 2,228-2,280
#: chunks, where the branch and bound found a selection in its ~20 ms grace (arrays 1-8 ms) and
#: CP-SAT had found none (fallback). On a 13,032-chunk core (n = 50,000, a budget holding 13,000
#: chunks) it found none either and its arrays cost ~60 ms more: such cores stay CP-SAT's.
QUICK_MAX_CORE = 5_000
#: Nodes before the branch and bound hands its incumbent to CP-SAT. Measured on the whole-set models of
#: 30 benchmarks/latency.py queries at 2,000 x 384 (~430-500 chunks compared; 2026-12-05, AMD EPYC):
#: 5,000 nodes proved 17 (a search stopped at the limit took 3.2 ms, median), 8,000 proved 21 (4.8 ms),
#: 12,000 22 (6.8 ms), 25,000 24 (14 ms); a proof took 1.9 ms (median, 4.6 at most) and CP-SAT ~19 ms
#: (its model and solve) on those the search hands over. (2026-12-01: 36 of 50 queries proved within
#: 5,000 at n = 200, 35 of 50 at n = 500.)
NODE_LIMIT = 8_000
#: The same on a core smaller than the eligible set (CP-SAT's hint when it stops there). Measured
#: on the ~200-chunk cores of 15 generated queries at n = 2,000 (benchmarks/latency.py instances):
#: 10 proved within 689-2,754 nodes (1-6 ms; CP-SAT took 10-29 ms on them), 2 in 8,324 and 11,921
#: nodes (10-13 ms: no faster than CP-SAT), 3 not in 400,000; 3,000 nodes cost 3-5 ms.
CORE_NODE_LIMIT = 3_000
#: The largest Σ |coefficients| of the integer objective the kernel takes: its bound is computed in
#: floats (2^-53 relative, over a few thousand operations) and must err by less than 1/2 a unit.
MAX_MAGNITUDE = 1e12
#: A family's disagreeing pairs join the bound (dualised) up to this many per item.
PAIRS_PER_ITEM = 8
#: Share of the time limit the branch and bound may use before CP-SAT takes over.
EXACT_SHARE = 0.5


@dataclass
class ExactOutcome:
    """What the branch and bound returned: ``status`` "optimal", "infeasible" or "limit"; ``mask``
    (over all candidates) the optimum or the best found (None when none was found), ``objective``
    its integer objective / SOLVER_SCALE, ``nodes`` searched, ``timings`` ("model", "solve")."""

    status: str
    mask: np.ndarray | None
    objective: float
    nodes: int
    timings: dict


def _csr(m: int, items, *values):
    """Per-item lists as CSR: ``items`` (one entry per (item, value)) and the values of each entry,
    in their given order within an item (a stable sort by item)."""
    items = np.asarray(items, dtype=np.int64)
    order = items.argsort(kind="stable")
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.bincount(items, minlength=m).cumsum(out=ptr[1:])
    return (ptr, *(np.asarray(v, dtype=np.int64)[order] for v in values))


def exact_arrays(problem: Problem, *, enforce_gate: bool, enforce_sources: bool, ceiling: bool | None,
                 hint: np.ndarray | None, core: np.ndarray | None = None) -> tuple | None:
    """The kernel's arguments (before the node limit and deadline).

    Parameters
    ----------
    problem : Problem
        The problem whose integer model CP-SAT would build.
    enforce_gate, enforce_sources, ceiling : bool
        The tier, as :func:`ctxselect.selection.solvers.cpsat.solve_optimal` takes it.
    hint : ndarray of bool or None
        A selection over all candidates, the first incumbent when it meets every constraint.
    core : ndarray of int, optional
        The sorted candidate positions the model is built on (CP-SAT's core); default: every
        eligible chunk.

    Returns
    -------
    tuple or str or None
        ``(core, arguments)``; None when the model has a feature the kernel does not have;
        "impossible" when a row can hold for no selection (as CP-SAT's builder finds it).
    """
    packed = problem.packed
    reqs = packed.requirements
    gate = reqs.gate
    core = problem.eligible.nonzero()[0] if core is None else np.asarray(core, dtype=np.int64)
    m = len(core)
    var_of = np.full(problem.n, -1, dtype=np.int64)
    var_of[core] = np.arange(m)
    con = problem.gate_conflicts
    if enforce_gate and gate.max_contradiction_density > 0 and len(con) and bool(
            ((var_of[con.i] >= 0) & (var_of[con.j] >= 0)).any()):
        return None  # the density limit κ ≤ κ_max over a variable number of chunks
    w = scaled_array(problem.value[core])
    magnitude = np.abs(problem.value[core]).sum() + problem.aspect_gain.sum() + problem.pair_penalty.sum()
    if magnitude * SOLVER_SCALE > MAX_MAGNITUDE:
        return None  # the bound's floats could err by half a unit of the integer objective
    t = packed.tokens[core].astype(np.int64)
    hi = problem.capacity(enforce_gate if ceiling is None else ceiling)
    lo = problem.min_tokens(enforce_gate)
    rows = gate_rows(problem, core) if enforce_gate else {"nonempty": False, "coverage": None, "fresh": None,
                                                           "stale": None}
    klo = 1 if rows["nonempty"] else 0
    khi = m if reqs.max_chunks is None else min(int(reqs.max_chunks), m)
    src = packed.source[core].astype(np.int64)
    members = np.bincount(src, minlength=len(packed.source_names))
    caps = np.minimum(packed.source_max.astype(np.int64), members).astype(np.int64)
    need = packed.source_min.astype(np.int64) if enforce_sources else np.zeros(len(caps), dtype=np.int64)
    if lo > hi or klo > khi or bool((need > caps).any()):
        return "impossible"

    # kept apart: the forbidden pairs and the clusters (at most one each); agreement per family
    forbid_all, fields = conflict_fields(problem, enforce_gate)
    forbidden = forbidden_array(problem, var_of, forbid_all, fields)
    kept_apart = [var_of[np.stack(np.divmod(forbidden, max(problem.n, 1)), axis=1)].ravel()]
    sizes = [np.full(len(forbidden), 2, dtype=np.int64)]
    clustered, cluster_sizes = cluster_members(problem, var_of)
    kept_apart.append(clustered)
    sizes.append(cluster_sizes)
    families = [one_value_groups(core, packed.field_values[:, f]) for f in fields]
    if reqs.version_conflicts:
        families.append(one_value_groups(core, packed.version, packed.doc))
    fam_items, fam_ids, fam_codes, disagree = [], [], [], []
    for chunks, codes, _distinct in (part for found in families for part in found):
        fam_items.append(var_of[chunks])
        fam_ids.append(np.full(len(chunks), len(fam_ids), dtype=np.int64))
        fam_codes.append(codes)
        k = np.arange(len(chunks))  # pairs of different codes (row by row, i < j), for the bound
        a, c = np.nonzero((codes[:, None] != codes[None, :]) & (k[:, None] < k[None, :]))
        disagree.append(np.stack([var_of[chunks[a]], var_of[chunks[c]]], axis=1))
    n_fam = len(fam_ids)
    pairs = np.concatenate(disagree) if disagree else np.zeros((0, 2), dtype=np.int64)
    if len(pairs) <= PAIRS_PER_ITEM * max(m, 1):  # (a family's agreement blocks them already)
        kept_apart.append(pairs.ravel())
        sizes.append(np.full(len(pairs), 2, dtype=np.int64))

    # aspects with a coverer in the core: gains, coverage weights
    covers = problem.covers[core]
    present = covers.any(axis=0).nonzero()[0] if covers.size else np.zeros(0, dtype=np.int64)
    gain = scaled_array(problem.aspect_gain[present]).reshape(len(present))
    cov_w = np.zeros(len(present), dtype=np.int64)
    cov_need = 0
    if rows["coverage"] is not None:
        weights, cov_need = rows["coverage"]
        required = present < problem.n_required
        cov_w[required] = np.asarray(weights, dtype=np.int64)[present[required]]
    asp_items, asp_ids = np.nonzero(covers[:, present])
    gate_lines = [rows["fresh"]] if rows["fresh"] is not None else []
    if rows["stale"] is not None:
        gate_lines.append([-c for c in rows["stale"]])  # Σ c x ≤ 0 as Σ −c x ≥ 0
    row_matrix = np.array(gate_lines, dtype=np.int64).reshape(len(gate_lines), m)

    za, zc, zp = penalty_arrays(problem, var_of, fields, forbidden)
    z = np.stack([za, zc], axis=1).astype(np.int64)
    cost = scaled_array(zp)
    kept_apart.append(z.ravel())  # soft pairs for the bound: a multiplier at most the penalty
    sizes.append(np.full(len(z), 2, dtype=np.int64))
    sizes = np.concatenate(sizes)
    n_groups = len(sizes)
    mu_cap = np.concatenate([np.full(n_groups - len(z), np.inf), cost.astype(np.float64)])
    group_items = np.concatenate(kept_apart).astype(np.int64)
    hint_core = np.zeros(m, dtype=np.bool_) if hint is None else np.asarray(hint, dtype=bool)[core].copy()
    empty = np.zeros(0, dtype=np.int64)
    return (core, (w, t, int(lo), int(hi), klo, khi, src, caps, need,
                   *_csr(m, group_items, np.repeat(np.arange(n_groups), sizes)), mu_cap,
                   *_csr(m, np.concatenate(fam_items or [empty]), np.concatenate(fam_ids or [empty]),
                         np.concatenate(fam_codes or [empty])), n_fam,
                   *_csr(m, asp_items, asp_ids), gain, cov_w, int(cov_need),
                   row_matrix, np.zeros(len(gate_lines), dtype=np.int64),
                   *_csr(m, np.concatenate([z[:, 0], z[:, 1]]), np.concatenate([z[:, 1], z[:, 0]]),
                         np.concatenate([cost, cost])), hint_core))


def solve_exact(problem: Problem, *, enforce_gate: bool, enforce_sources: bool, ceiling: bool | None,
                hint: np.ndarray | None, deadline: float, node_limit: int = NODE_LIMIT,
                core: np.ndarray | None = None) -> ExactOutcome | None:
    """The branch and bound on ``core`` (sorted candidate positions; default: the whole eligible
    set) until ``deadline`` (a ``time.perf_counter()`` instant) or ``node_limit`` nodes; None when
    the model is not supported (module docstring). "optimal" is the optimum of the core's model."""
    started = time.perf_counter()
    built = exact_arrays(problem, enforce_gate=enforce_gate, enforce_sources=enforce_sources, ceiling=ceiling,
                         hint=hint, core=core)
    if built is None:
        return None
    made = time.perf_counter()
    if isinstance(built, str):
        return ExactOutcome("infeasible", None, -math.inf, 0, {"model": made - started, "solve": 0.0})
    core, args = built
    mask, objective, status, found, nodes = run_search(args, node_limit, deadline)
    solved = time.perf_counter()
    timings = {"model": made - started, "solve": solved - made}
    full = None
    if found:
        full = np.zeros(problem.n, dtype=bool)
        full[core[mask]] = True
    name = "optimal" if status == PROVEN else "infeasible" if status == INFEASIBLE else "limit"
    return ExactOutcome(name, full, int(objective) / SOLVER_SCALE if found else -math.inf, int(nodes), timings)


def run_search(args: tuple, node_limit: int, deadline: float, steps: int | None = None) -> tuple:
    """The kernels on :func:`exact_arrays`' arguments: the hint's objective (the first incumbent, when
    it meets the constraints), the root multipliers (aimed at it; ``steps`` subgradient steps, by
    default :data:`~ctxselect.kernels.bnb_bound.ROOT_STEPS` above
    :data:`~ctxselect.kernels.bnb_bound.ROOT_STEPS_FROM` items, else none), the search. Returns (mask
    over the core, integer objective, status, found, nodes)."""
    w, t, hi, khi, src, caps, ig_ptr, ig_grp, mu_cap = args[0], args[1], args[3], args[5], args[6], args[7], args[9], \
        args[10], args[11]
    ia_ptr, ia_asp, gain = args[16], args[17], args[18]
    found, best = _evaluate(args[-1], *args[:-1])
    if steps is None:
        steps = ROOT_STEPS if len(w) > ROOT_STEPS_FROM else 0
    wf, tf = w.astype(np.float64), t.astype(np.float64)
    lam, mu, nu, _ = _root_multipliers(wf, tf, float(hi), khi, src, caps, ig_ptr, ig_grp, mu_cap, ia_ptr, ia_asp,
                                       gain.astype(np.float64), float(best) if found else -np.inf, steps)
    r = _reduced(wf, tf, lam, mu, nu, ig_ptr, ig_grp, ia_ptr, ia_asp)
    return _search(*args, lam, mu, nu, r, int(node_limit), float(deadline) - time.perf_counter())


def load_exact() -> None:
    """Load (or compile) the branch and bound kernel on a tiny model, before a time limit starts."""
    one = np.ones(1, dtype=np.int64)
    zero1 = np.zeros(1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    two = np.zeros(2, dtype=np.int64)
    with quiet_compile():
        run_search((one, one, 0, 1, 0, 1, zero1, one, zero1, two, empty, np.zeros(0), two, empty, empty, 0, two, empty,
                    empty, empty, 0, np.zeros((0, 1), dtype=np.int64), empty, two, empty, empty,
                    np.ones(1, dtype=np.bool_)), 10, 0.0)
