"""The exact selector: CP-SAT on the objective, hard constraints and (optionally) the gate.

data → model → variables → constraints → objective → solve, as the OR-Tools samples go. The
model is built by filling its proto directly (3–4x faster than the Python operators at n = 1,000),
with integer coefficients scaled by :data:`SCALE`. CP-SAT runs with the parameters of
:mod:`ctxselect.selection.solvers.sat_parameters` (one worker, ``linearization_level=2``: the pair
linearisation's LP bound is what proves optimality; a fixed seed: same input, same selection;
branching on the LP's reduced costs) and a time limit, and it is hinted with the best baseline (or the
branch and bound's best selection, when that is better), so ``optimal`` is never worse than that
baseline whenever the baseline satisfies the model.

Large candidate sets are cut to a core: every eligible chunk up to ``exact_up_to`` (the whole
problem, proven optimal); beyond it the ``core_size`` chunks the LP relaxation values most,
plus the baselines' selections and the best providers of every required aspect and source. On a core the result is optimal for the core only,
reported as ``feasible`` with a bound for the whole problem (the LP relaxation of the knapsack under
the per-source caps: :func:`ctxselect.selection.solvers.core.upper_bound`). Our branch and bound
(:mod:`ctxselect.selection.solvers.exact`) runs first on the same model of the same core (the whole
set up to EXACT_MAX_CORE, the values' core below LP_CORE_FROM eligible): its proof is the answer,
else CP-SAT is hinted with the better of its best selection and the best baseline
(:mod:`ctxselect.selection.solvers.hints`: the baselines are made only when read).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ctxselect._config import SOLVER_SCALE
from ctxselect.selection.problem import Problem
from ctxselect.selection.solvers.core import (  # upper_bound re-exported
    LP_CORE_FROM,
    choose_core,
    upper_bound,
)
from ctxselect.selection.solvers.exact import (CORE_NODE_LIMIT, EXACT_MAX_CORE, EXACT_SHARE, NODE_LIMIT, QUICK_MAX_CORE,
                                               solve_exact)
from ctxselect.selection.solvers.hints import better
from ctxselect.selection.solvers.model_data import (
    cluster_parts,
    conflict_fields,
    forbidden_pairs,
    gate_rows,
    one_value_groups,
    penalty_pairs,
    scaled,
)
from ctxselect.selection.solvers.sat_parameters import sat_parameters

__all__ = ["OptimalResult", "load_solver", "solver_loaded", "solve_optimal", "SCALE", "upper_bound",
           "choose_core"]

SCALE = SOLVER_SCALE  # objective coefficients are rounded to 1e-6


def load_solver() -> None:
    """Import OR-Tools now (``select()`` does, before its time limit starts)."""
    _helper()


def _helper():
    """OR-Tools' compiled CP-SAT layer (``cp_model_helper``: the model proto, the parameters and
    the solve), imported on first use in 0.1 s. Its Python front end ``cp_model`` is never
    imported: it imports pandas, 0.4 s of a fresh process's first call, and this module fills the
    proto itself."""
    from ortools.sat.python import cp_model_helper

    return cp_model_helper


def solver_loaded() -> float:
    """Seconds spent importing OR-Tools now, 0.0 when it was imported: the first CP-SAT solve of a
    process that did not load it beforehand (``warm_up()`` does) imports it outside its time limit,
    as ``timings["load"]`` (:func:`solve_optimal`, and the closest freshness's tier)."""
    if "ortools.sat.python.cp_model_helper" in sys.modules:
        return 0.0
    started = time.perf_counter()
    _helper()
    return time.perf_counter() - started


def _solve_proto(proto, parameters):
    """Solve a filled model proto: the response (status, solution, objective, bound)."""
    wrapper = _helper().SolveWrapper()
    wrapper.set_parameters(parameters)
    return wrapper.solve(proto)


@dataclass
class OptimalResult:
    """What CP-SAT returned for one model."""

    mask: np.ndarray | None
    status: str           # "optimal", "feasible", "infeasible", "unknown"
    bound: float
    solver_objective: float
    core_is_full: bool
    timings: dict = field(default_factory=dict)
    core_proven: bool = True  # a "feasible" core result is the core's proven optimum
    core_size: int | None = None  # how many candidates the core solved held (None: not known)


class _ModelBuilder:
    """Fills a CpModelProto: boolean variables, linear constraints, at-most-one, objective."""

    def __init__(self) -> None:
        self.proto = _helper().CpModelProto()
        self.obj_vars: list[int] = []
        self.obj_coeffs: list[int] = []
        self.impossible = False  # set when a constraint can hold for no assignment

    def new_bools(self, count: int) -> int:
        first = len(self.proto.variables)
        for _ in range(count):
            self.proto.variables.add().domain.extend([0, 1])
        return first

    def new_int(self, low: int, high: int) -> int:
        index = len(self.proto.variables)
        self.proto.variables.add().domain.extend([low, high])
        return index

    def linear(self, variables, coeffs, low: int, high: int) -> None:
        if low > high or (not variables and not low <= 0 <= high):
            self.impossible = True
            return
        constraint = self.proto.constraints.add().linear
        constraint.vars.extend(variables)
        constraint.coeffs.extend(coeffs)
        constraint.domain.extend([low, high])

    def at_most_one(self, variables) -> None:
        self.proto.constraints.add().at_most_one.literals.extend(variables)

    def maximize(self, variables, coeffs) -> None:
        self.obj_vars.extend(variables)
        self.obj_coeffs.extend(coeffs)

    def finish(self, hint_vars, hint_values) -> None:
        objective = self.proto.objective
        objective.vars.extend(self.obj_vars)
        objective.coeffs.extend([-c for c in self.obj_coeffs])  # CP-SAT minimises
        objective.scaling_factor = -1.0
        if hint_vars:
            self.proto.solution_hint.vars.extend(hint_vars)
            self.proto.solution_hint.values.extend(hint_values)


_INT64_MAX = 2**62


def solve_optimal(
    problem: Problem,
    *,
    enforce_gate: bool,
    enforce_sources: bool,
    hint: Callable[[], np.ndarray | None] | None,
    time_limit: float,
    core_size: int,
    core_extra: Sequence[np.ndarray] = (),
    exact_up_to: int = 0,
    ceiling: bool | None = None,
    sources_met: int | None = None,
    maximize_sources: bool = False,
    quick: bool = False,
) -> OptimalResult:
    """Build and solve the CP-SAT model of ``problem`` (see the module docstring); ``ceiling``: keep
    to the gate's utilization ceiling (default: when ``enforce_gate``). Best-effort source
    minimums: ``maximize_sources`` maximises met = Σ_s min(chunks of s, its minimum) instead of the
    objective; ``sources_met`` requires met ≥ that many (the objective as usual). ``quick`` (a
    short grace after a late start): the branch and bound alone searches the core until the time
    limit (the LP's core too, up to QUICK_MAX_CORE chunks), and its best selection is the answer;
    CP-SAT runs only when it finds none, does not take the model or the core is larger.

    ``hint`` makes a selection over all candidates (a callable, or None for none): it is called only
    when needed. The branch and bound searches the whole eligible set without a first incumbent (a
    proof needs none), a smaller core from the hint; when the search stops at a limit, CP-SAT is
    hinted with the better of its best selection and the hint. ``core_extra`` (selections the core
    holds) is read only for a core smaller than the eligible set."""
    started = time.perf_counter()
    packed = problem.packed
    reqs = packed.requirements
    gate = reqs.gate
    capacity = problem.capacity(enforce_gate if ceiling is None else ceiling)
    core = choose_core(problem, core_size, core_extra, exact_up_to, capacity)
    core_is_full = len(core) == int(problem.eligible.sum())
    extra: dict = {}  # the branch and bound's time when CP-SAT runs after it
    make_hint = cache(hint) if hint is not None else lambda: None  # the hint, made once when first asked for
    searched = None  # the branch and bound's best, when it hints CP-SAT
    # a core that is not the whole set: only the values' core (below LP_CORE_FROM eligible); the
    # LP's core holds the chunks nearest the LP's price of a token, where the branch and bound's
    # bound is weakest (measured: none of 5 generated queries at n = 20,000 proved in 20,000 nodes,
    # 2 in 51,000-95,000, 200+ ms, where CP-SAT proves them in 50-90 ms; at 50,000 1 of 3 in 24,000)
    # In a late grace (quick) it searches any core to the end: CP-SAT found no selection in 20 ms on
    # the LP's core at n = 50,000, where the branch and bound's best after 20 ms was 99.4-100.1 % of
    # CP-SAT's full-time objective on 3 of 3 queries (the baselines' best: 61-64 %)
    exact_fits = core_is_full or int(problem.eligible.sum()) < LP_CORE_FROM or quick
    small = len(core) <= (QUICK_MAX_CORE if quick else EXACT_MAX_CORE)
    if small and exact_fits and not maximize_sources and sources_met is None:
        first = None if core_is_full and not quick else make_hint()  # a proof of the whole set needs none
        exact = solve_exact(problem, enforce_gate=enforce_gate, enforce_sources=enforce_sources, ceiling=ceiling,
                            hint=first, deadline=started + (time_limit if quick else EXACT_SHARE * time_limit),
                            core=core, node_limit=10**12 if quick else NODE_LIMIT if core_is_full else CORE_NODE_LIMIT)
        if exact is not None and (exact.status == "optimal" or (quick and exact.mask is not None)):
            proven = exact.status == "optimal"  # the core's optimum, as CP-SAT would prove it
            bound = exact.objective if core_is_full and proven else max(
                upper_bound(problem, capacity, conflict_fields(problem, enforce_gate)[1]), exact.objective)
            return OptimalResult(exact.mask, "optimal" if core_is_full and proven else "feasible", bound,
                                 exact.objective, core_is_full, exact.timings, core_proven=proven,
                                 core_size=len(core))
        if exact is not None and exact.status == "infeasible":
            return OptimalResult(None, "infeasible", math.inf, -math.inf, core_is_full, exact.timings)
        if exact is not None:  # a limit: its best selection hints CP-SAT (the hint, when that is better)
            if exact.mask is not None and (first is not None or not better(
                    problem, make_hint(), exact.mask, enforce_gate, enforce_sources, ceiling)):
                searched = exact.mask
            extra = {"exact": sum(exact.timings.values())}
    hint_mask = make_hint() if searched is None else searched
    loading = solver_loaded()  # OR-Tools' import, a process's first time: not counted against time_limit
    if loading:
        started, extra = started + loading, {**extra, "load": loading}
    modelled = time.perf_counter()  # CP-SAT's model starts (after the branch and bound, when it ran)
    var_of = np.full(problem.n, -1, dtype=np.int64)
    var_of[core] = np.arange(len(core))

    b = _ModelBuilder()
    b.new_bools(len(core))
    x = list(range(len(core)))
    tokens = packed.tokens[core].tolist()

    # budget (and the gate's utilization range)
    low_tokens = problem.min_tokens(enforce_gate)
    b.linear(x, tokens, low_tokens, capacity)

    # hard conflicts: chunks carrying a hard field agree on one value, one version per document
    # (a variable per value, O(k) constraints instead of O(k^2) pairs); what that does not imply,
    # pairwise; near-duplicate clusters: at most one
    con = problem.gate_conflicts  # what κ counts; hard fields are per-value codes: _one_value below
    forbid_all, fields = conflict_fields(problem, enforce_gate)
    for f in fields:
        _one_value(b, var_of, core, packed.field_values[:, f])
    if reqs.version_conflicts:
        _one_value(b, var_of, core, packed.version, packed.doc)
    forbidden = forbidden_pairs(problem, var_of, forbid_all, fields)  # what agreement does not imply
    for a, c in sorted(forbidden):
        b.at_most_one([int(var_of[a]), int(var_of[c])])
    for part in cluster_parts(problem, var_of):
        b.at_most_one(part.tolist())

    # per-source caps and minimums, maximum chunk count
    src = packed.source[core]
    met_vars = []  # best effort: y_s <= chunks of s, y_s <= its minimum
    for s in range(len(packed.source_names)):
        members = [k for k in x if src[k] == s]
        cap = int(min(packed.source_max[s], len(members)))
        need = int(packed.source_min[s]) if enforce_sources else 0
        if need > 0 or cap < len(members):  # need > cap makes the model impossible
            b.linear(members, [1] * len(members), need, cap)
        if (maximize_sources or sources_met is not None) and packed.source_min[s] > 0:
            met_vars.append(b.new_int(0, int(packed.source_min[s])))
            b.linear(members + [met_vars[-1]], [1] * len(members) + [-1], 0, _INT64_MAX)
    if sources_met is not None:
        b.linear(met_vars, [1] * len(met_vars), sources_met, _INT64_MAX)
    if reqs.max_chunks is not None and reqs.max_chunks < len(core):
        b.linear(x, [1] * len(x), 0, reqs.max_chunks)

    # required aspects: y_a <= sum of the chunks covering a
    y_vars, y_gain = [], []
    core_covers = problem.covers[core]  # core is sorted: a core row's position is its variable
    for a in range(problem.aspect_gain.size):
        coverers = core_covers[:, a].nonzero()[0].tolist()
        if not coverers:
            continue
        y = b.new_bools(1)
        b.linear(coverers + [y], [1] * len(coverers) + [-1], 0, _INT64_MAX)
        y_vars.append((y, a))
        y_gain.append(problem.aspect_gain[a])

    # the rest of the gate
    if enforce_gate:
        rows = gate_rows(problem, core)
        if rows["nonempty"]:
            b.linear(x, [1] * len(x), 1, len(x))  # an empty context fails the gate
        if rows["coverage"] is not None:
            weights, need = rows["coverage"]
            required = [(y, a) for y, a in y_vars if a < problem.n_required]
            b.linear([y for y, _ in required], [weights[a] for _, a in required], need, _INT64_MAX)
        if rows["fresh"] is not None:
            b.linear(x, rows["fresh"], 0, _INT64_MAX)
        if rows["stale"] is not None:
            b.linear(x, rows["stale"], -_INT64_MAX, 0)

    # objective: values, aspect gains, pair penalties (z >= x_i + x_j - 1)
    b.maximize(x, scaled(problem.value[core]))
    if y_vars:
        b.maximize([y for y, _ in y_vars], scaled(y_gain))
    z_pairs = penalty_pairs(problem, var_of, fields, forbidden)
    if z_pairs:
        first = b.new_bools(len(z_pairs))
        for k, (va, vc, _p) in enumerate(z_pairs):
            b.linear([va, vc, first + k], [1, 1, -1], -_INT64_MAX, 1)
        b.maximize(list(range(first, first + len(z_pairs))), [-c for c in scaled([p for _, _, p in z_pairs])])
    if enforce_gate and gate.max_contradiction_density > 0 and len(con):
        _contradiction_density_limit(b, var_of, con, gate.max_contradiction_density, len(x))

    if maximize_sources:  # this solve only finds how many required chunks can be met
        b.obj_vars, b.obj_coeffs = list(met_vars), [1] * len(met_vars)

    hint_vars, hint_values = [], []
    if hint_mask is not None:
        hint_vars = x
        hint_values = hint_mask[core].astype(int).tolist()
    b.finish(hint_vars, hint_values)
    built = time.perf_counter()

    if b.impossible:
        return OptimalResult(None, "infeasible", math.inf, -math.inf, core_is_full,
                             {"model": built - modelled, "solve": 0.0, **extra})
    cmh = _helper()
    params = sat_parameters(cmh, max(time_limit - (built - started), 0.001))
    response = _solve_proto(b.proto, params)
    status = response.status
    solved = time.perf_counter()
    timings = {"model": built - modelled, "solve": solved - built, **extra}

    if status in (cmh.CpSolverStatus.OPTIMAL, cmh.CpSolverStatus.FEASIBLE):
        mask = np.zeros(problem.n, dtype=bool)
        values = np.asarray(response.solution, dtype=np.int64)[: len(x)]
        mask[core[values.astype(bool)]] = True
        proven = status == cmh.CpSolverStatus.OPTIMAL
        bound = response.best_objective_bound / SCALE
        if not core_is_full:  # the core's bound says nothing about the chunks left out
            bound = max(upper_bound(problem, capacity, fields), response.objective_value / SCALE)
        return OptimalResult(mask, "optimal" if proven and core_is_full else "feasible",
                             bound, response.objective_value / SCALE, core_is_full, timings, core_proven=proven,
                             core_size=len(core))
    if status == cmh.CpSolverStatus.INFEASIBLE:
        return OptimalResult(None, "infeasible", math.inf, -math.inf, core_is_full, timings)
    if status == cmh.CpSolverStatus.MODEL_INVALID:  # a bug of this module, never the user's input
        raise RuntimeError(f"ctxselect built an invalid CP-SAT model: {cmh.CpSatHelper.validate_model(b.proto)}")
    return OptimalResult(None, "unknown", math.inf, -math.inf, core_is_full, timings)


def _one_value(b: _ModelBuilder, var_of: np.ndarray, core: np.ndarray, codes: np.ndarray,
               groups: np.ndarray | None = None) -> None:
    """Selected chunks of ``core`` that carry a code agree on it (within each group, e.g. per
    document): one boolean per (group, code), x_i <= u_code, and at most one u per group."""
    for members, values, distinct in one_value_groups(core, codes, groups):
        first = b.new_bools(len(distinct))
        for k, value in enumerate(distinct.tolist()):
            for i in members[values == value].tolist():
                b.linear([int(var_of[i]), first + k], [1, -1], -1, 0)  # x_i <= u
        b.at_most_one(list(range(first, first + len(distinct))))


def _contradiction_density_limit(b: _ModelBuilder, var_of, con, kappa_max: float, n_vars: int) -> None:
    """κ ≤ κ_max as 2·S·Σ z_ij ≤ round(S·κ_max)·k·(k−1), with k the number of selected chunks."""
    z = []
    for a, c in zip(con.i.tolist(), con.j.tolist()):
        va, vc = int(var_of[a]), int(var_of[c])
        if va < 0 or vc < 0:
            continue
        zk = b.new_bools(1)
        b.linear([va, vc, zk], [1, 1, -1], -_INT64_MAX, 1)
        b.linear([va, zk], [1, -1], 0, 1)  # z <= x_a, z <= x_c: z is exactly the product
        b.linear([vc, zk], [1, -1], 0, 1)
        z.append(zk)
    if not z:
        return
    k = b.new_int(0, n_vars)
    b.linear(list(range(n_vars)) + [k], [1] * n_vars + [-1], 0, 0)
    km1 = b.new_int(-1, n_vars)
    b.linear([k, km1], [1, -1], 1, 1)
    pairs2 = b.new_int(-n_vars, n_vars * n_vars)
    product = b.proto.constraints.add().int_prod
    product.target.vars.append(pairs2)
    product.target.coeffs.append(1)
    for var in (k, km1):
        expr = product.exprs.add()
        expr.vars.append(var)
        expr.coeffs.append(1)
    limit = int(round(kappa_max * SCALE))
    b.linear(z + [pairs2], [2 * SCALE] * len(z) + [-limit], -_INT64_MAX, 0)
