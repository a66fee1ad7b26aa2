"""The branch and bound on a core smaller than the eligible set (selection/solvers/exact.py with
``core``, run first by cpsat.solve_optimal): the same integer model as CP-SAT's on that core (its
optimum, or its infeasibility), what solve_optimal reports when it proves the core (status
"feasible", the whole problem's bound), and its invariants under hypothesis."""

import itertools
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from ctxselect.evaluate.generate import generate_queries
from ctxselect.selection.api import prepare
from ctxselect.selection.constraints import violations
from ctxselect.selection.problem import score
from ctxselect.selection.solvers import cpsat
from ctxselect.selection.solvers.core import choose_core, upper_bound
from ctxselect.selection.solvers.exact import solve_exact
from ctxselect.selection.solvers.model_data import conflict_fields
from ctxselect.selection.warmup import warm_up
from tests.selection.solvers.test_exact import assert_hard_constraints
from tests.strategies import random_instance, selection_instances

TIERS = [(True, True), (False, True), (False, False)]


def _core(problem, gate_on, core_size):
    """The core solve_optimal builds its model on (no extra selections, no exact_up_to)."""
    return choose_core(problem, core_size, [], 0, problem.capacity(True))


def _exact_on_core(problem, gate_on, sources_on, core, node_limit=10**7):
    return solve_exact(problem, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=True, hint=None,
                       deadline=time.perf_counter() + 600, node_limit=node_limit, core=core)


def _cp_sat_on_core(problem, gate_on, sources_on, core_size, monkeypatch):
    monkeypatch.setattr(cpsat, "EXACT_MAX_CORE", -1)  # CP-SAT alone, on the same core
    try:
        return cpsat.solve_optimal(problem, enforce_gate=gate_on, enforce_sources=sources_on, hint=None,
                                   time_limit=20.0, core_size=core_size, exact_up_to=0, ceiling=True)
    finally:
        monkeypatch.undo()


def _compare(problem, core_size, monkeypatch) -> int:
    """Each tier: the branch and bound's proven optimum of the core is CP-SAT's on the same core,
    as the same integer; a core it proves infeasible CP-SAT finds infeasible. Returns the number of
    tiers compared (the others hit the contradiction-density limit, left to CP-SAT)."""
    compared = 0
    for gate_on, sources_on in TIERS:
        core = _core(problem, gate_on, core_size)
        outcome = _exact_on_core(problem, gate_on, sources_on, core)
        if outcome is None:
            continue
        assert outcome.status != "limit"
        reference = _cp_sat_on_core(problem, gate_on, sources_on, core_size, monkeypatch)
        assert reference.core_is_full == (len(core) == int(problem.eligible.sum()))
        if outcome.status == "infeasible":
            assert reference.status == "infeasible" and outcome.mask is None
        else:
            assert reference.status in ("optimal", "feasible")
            assert round(outcome.objective * cpsat.SCALE) == round(reference.solver_objective * cpsat.SCALE)
            assert not (outcome.mask & ~np.isin(np.arange(problem.n), core)).any()
        compared += 1
    return compared


@pytest.mark.parametrize("n, seed, core_size", [(60, 1, 20), (90, 2, 24), (120, 3, 30), (200, 4, 30),
                                                (300, 5, 40), (300, 6, 24)])
def test_the_core_model_has_cp_sat_s_optimum_on_generated_queries(n, seed, core_size, monkeypatch):
    query = generate_queries(queries=1, candidates=n, seed=seed, gold_share=min(0.15, 30 / n))[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    assert len(_core(problem, True, core_size)) < int(problem.eligible.sum())  # a core, not the whole set
    assert _compare(problem, core_size, monkeypatch) > 0


@pytest.mark.parametrize("seed", range(40))
def test_the_core_model_has_cp_sat_s_optimum_with_every_constraint_kind(seed, monkeypatch):
    """Random problems (gate rows, versions, clusters, source minimums and caps, hard pairs) cut
    to a core (core_size 1-3, plus the best providers of each required aspect and source): gate
    rows, pairs, clusters and agreement groups restricted to it."""
    cands, reqs, weights = random_instance(seed, n_min=8, n_max=14)
    problem = prepare(cands, reqs, weights=weights)
    core_size = 1 + seed % 3
    if len(_core(problem, True, core_size)) >= int(problem.eligible.sum()):
        pytest.skip("too few eligible chunks for a core")
    _compare(problem, core_size, monkeypatch)


def test_a_proven_core_is_reported_as_cp_sat_reports_it_without_cp_sat(monkeypatch):
    """The core's optimum proven by the branch and bound: status "feasible" (never "optimal", the
    core is not the whole problem), core_is_full False, the bound of the whole problem as CP-SAT's
    path computes it, and CP-SAT never runs (on the old code it did: this fails there)."""
    query = generate_queries(queries=1, candidates=200, seed=4, gold_share=0.15)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    reference = _cp_sat_on_core(problem, False, False, 30, monkeypatch)

    def no_cp_sat(*_args):
        raise AssertionError("CP-SAT ran although the branch and bound proved the core")

    monkeypatch.setattr(cpsat, "_solve_proto", no_cp_sat)
    result = cpsat.solve_optimal(problem, enforce_gate=False, enforce_sources=False, hint=None, time_limit=20.0,
                                 core_size=30, exact_up_to=0, ceiling=True)
    assert result.status == "feasible" and not result.core_is_full
    assert result.solver_objective == pytest.approx(reference.solver_objective, abs=1e-9)
    fields = conflict_fields(problem, False)[1]
    assert result.bound == max(upper_bound(problem, problem.capacity(True), fields), result.solver_objective)
    assert result.bound == pytest.approx(reference.bound, abs=1e-9)
    assert set(result.timings) == {"model", "solve"}
    assert score(problem, result.mask) == pytest.approx(result.solver_objective, abs=1e-4)
    assert not violations(problem, result.mask, enforce_gate=False, enforce_sources=False, ceiling=True)


def test_at_its_node_limit_the_core_s_best_is_cp_sat_s_hint(monkeypatch):
    """A core the branch and bound does not prove within its node limit: CP-SAT solves it, its time
    added under "exact", and the result is CP-SAT's (the core's optimum, status "feasible")."""
    query = generate_queries(queries=1, candidates=300, seed=5, gold_share=0.1)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    reference = _cp_sat_on_core(problem, True, True, 40, monkeypatch)
    monkeypatch.setattr(cpsat, "CORE_NODE_LIMIT", 2)
    result = cpsat.solve_optimal(problem, enforce_gate=True, enforce_sources=True, hint=None, time_limit=20.0,
                                 core_size=40, exact_up_to=0, ceiling=True)
    assert set(result.timings) == {"model", "solve", "exact"}
    assert (result.status, result.core_is_full) == ("feasible", False)
    assert round(result.solver_objective * cpsat.SCALE) == round(reference.solver_objective * cpsat.SCALE)
    assert result.bound == pytest.approx(reference.bound, abs=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(selection_instances(n_max=16))
def test_invariants_on_a_core(instance):
    """Whatever the core's search returns (any tier, a node limit too), and whatever solve_optimal
    returns on that path: within the budget, chunks of the core and eligible only, no two chunks
    that may never be together."""
    cands, reqs, weights = instance
    problem = prepare(cands, reqs, weights=weights)
    core = _core(problem, True, 4)
    in_core = np.isin(np.arange(problem.n), core)
    for (gate_on, sources_on), limit in itertools.product(TIERS, (10**6, 5)):
        outcome = _exact_on_core(problem, gate_on, sources_on, core, node_limit=limit)
        result = cpsat.solve_optimal(problem, enforce_gate=gate_on, enforce_sources=sources_on, hint=None,
                                     time_limit=5.0, core_size=4, exact_up_to=0, ceiling=True)
        for mask in (None if outcome is None else outcome.mask, result.mask):
            if mask is None:
                continue
            assert not (mask & ~in_core).any()
            assert_hard_constraints(problem, mask, gate_on)


def test_the_lp_s_core_is_left_to_cp_sat(monkeypatch):
    """From LP_CORE_FROM eligible chunks (the LP's core) the branch and bound does not run on the
    core: CP-SAT alone, as before (no "exact" time), the same result."""
    query = generate_queries(queries=1, candidates=200, seed=4, gold_share=0.15)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    ran = []
    real = cpsat.solve_exact
    monkeypatch.setattr(cpsat, "solve_exact", lambda *a, **k: ran.append(1) or real(*a, **k))
    monkeypatch.setattr(cpsat, "LP_CORE_FROM", int(problem.eligible.sum()))
    result = cpsat.solve_optimal(problem, enforce_gate=True, enforce_sources=True, hint=None, time_limit=20.0,
                                 core_size=30, exact_up_to=0, ceiling=True)
    assert not ran and set(result.timings) == {"model", "solve"} and result.status == "feasible"
    monkeypatch.setattr(cpsat, "LP_CORE_FROM", int(problem.eligible.sum()) + 1)
    cpsat.solve_optimal(problem, enforce_gate=True, enforce_sources=True, hint=None, time_limit=20.0,
                        core_size=30, exact_up_to=0, ceiling=True)
    assert ran


def test_a_late_grace_answers_with_the_branch_and_bounds_best_on_any_core(monkeypatch):
    """quick (a late grace): the branch and bound searches even the LP's core, to the end of the
    time, and its best selection is the answer (CP-SAT does not run); without quick the LP's core
    is left to CP-SAT."""
    warm_up()  # the kernels loaded before the 50 ms start (run alone, loading them took the time)
    query = generate_queries(queries=1, candidates=400, seed=5)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    monkeypatch.setattr(cpsat, "LP_CORE_FROM", 0)  # this core counts as the LP's

    def no_cp_sat(*args, **kwargs):
        raise AssertionError("CP-SAT ran")

    monkeypatch.setattr(cpsat, "_solve_proto", no_cp_sat)
    started = time.perf_counter()
    result = cpsat.solve_optimal(problem, enforce_gate=True, enforce_sources=True, hint=None, time_limit=0.05,
                                 core_size=40, exact_up_to=0, ceiling=True, quick=True)
    assert time.perf_counter() - started < 5.0
    assert result.mask is not None and (result.status, result.core_is_full) == ("feasible", False)
    assert_hard_constraints(problem, result.mask, True)
    assert result.bound >= result.solver_objective - 1e-9
    assert score(problem, result.mask) == pytest.approx(result.solver_objective, abs=1e-4)
    if not result.core_proven:
        fields = conflict_fields(problem, True)[1]
        assert result.bound == pytest.approx(max(upper_bound(problem, problem.capacity(True), fields),
                                                 result.solver_objective))
    with pytest.raises(AssertionError, match="CP-SAT ran"):
        cpsat.solve_optimal(problem, enforce_gate=True, enforce_sources=True, hint=None, time_limit=0.05,
                            core_size=40, exact_up_to=0, ceiling=True)


def test_a_late_grace_searches_cores_above_the_exact_limit_up_to_the_quick_one(monkeypatch):
    """In a late grace the core holds the baselines' selections and can pass EXACT_MAX_CORE (571-576
    chunks for generated queries at n = 2,000): the branch and bound still answers up to
    QUICK_MAX_CORE (the old limit left such cores to CP-SAT, which found nothing in the grace);
    above it CP-SAT runs."""
    warm_up()
    query = generate_queries(queries=1, candidates=400, seed=5)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    monkeypatch.setattr(cpsat, "LP_CORE_FROM", 0)
    monkeypatch.setattr(cpsat, "EXACT_MAX_CORE", 10)  # the core (40 + the baselines') is above it

    def no_cp_sat(*args, **kwargs):
        raise AssertionError("CP-SAT ran")

    monkeypatch.setattr(cpsat, "_solve_proto", no_cp_sat)
    kwargs = dict(enforce_gate=True, enforce_sources=True, hint=None, time_limit=0.05, core_size=40, exact_up_to=0,
                  ceiling=True, quick=True)
    result = cpsat.solve_optimal(problem, **kwargs)
    assert result.mask is not None and result.status == "feasible"
    assert_hard_constraints(problem, result.mask, True)
    monkeypatch.setattr(cpsat, "QUICK_MAX_CORE", 10)
    with pytest.raises(AssertionError, match="CP-SAT ran"):
        cpsat.solve_optimal(problem, **kwargs)
