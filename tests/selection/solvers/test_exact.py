"""The branch and bound on the exact model (selection/solvers/exact.py): against brute force over
every subset (n <= 14) of random problems with every constraint kind, against CP-SAT's proven
objective on generated queries (n = 50-300), and its invariants under hypothesis."""

import itertools
import json
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from ctxselect.evaluate.generate import generate_queries
from ctxselect.kernels.bnb import _evaluate
from ctxselect.selection.api import prepare
from ctxselect.selection.constraints import violations
from ctxselect.selection.problem import score
from ctxselect.selection.solvers import cpsat
from ctxselect.selection.solvers.exact import exact_arrays, solve_exact
from ctxselect.selection.solvers.model_data import conflict_fields, forbidden_pairs
from tests.strategies import random_instance, selection_instances

TIERS = [(True, True), (False, True), (False, False)]


def _exact(problem, gate_on, sources_on, hint=None, node_limit=10**8):
    return solve_exact(problem, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=True, hint=hint,
                       deadline=time.perf_counter() + 600, node_limit=node_limit)


def _subsets(problem):
    eligible = np.flatnonzero(problem.eligible)
    for size in range(len(eligible) + 1):
        for chosen in itertools.combinations(eligible.tolist(), size):
            mask = np.zeros(problem.n, dtype=bool)
            mask[list(chosen)] = True
            yield mask


@pytest.mark.parametrize("seed", range(60))
def test_the_integer_model_against_brute_force(seed):
    """Every subset of the eligible chunks scored on the kernel's integer model (the arrays built from
    the Problem): the branch and bound finds the best integer objective, or proves there is none."""
    cands, reqs, weights = random_instance(seed, n_max=14)
    problem = prepare(cands, reqs, weights=weights)
    for gate_on, sources_on in TIERS:
        outcome = _exact(problem, gate_on, sources_on)
        if outcome is None:  # the contradiction-density limit over conflicts in the core: CP-SAT's
            assert gate_on and problem.packed.requirements.gate.max_contradiction_density > 0
            continue
        built = exact_arrays(problem, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=True, hint=None)
        best = None
        if not isinstance(built, str):
            core, args = built
            for mask in _subsets(problem):
                ok, value = _evaluate(mask[core], *args[:-1])
                if ok and (best is None or value > best):
                    best = value
        if best is None:
            assert outcome.status == "infeasible" and outcome.mask is None
        else:
            assert outcome.status == "optimal" and round(outcome.objective * 1e6) == best


@pytest.mark.parametrize("seed", range(60, 120))
def test_the_problem_against_brute_force(seed):
    """Every subset scored by score() and checked by violations() (exact arithmetic): the optimum
    the branch and bound proves is the best feasible score, to the rounding of the coefficients."""
    cands, reqs, weights = random_instance(seed, n_max=12)
    problem = prepare(cands, reqs, weights=weights)
    for gate_on, sources_on in TIERS:
        outcome = _exact(problem, gate_on, sources_on)
        if outcome is None:
            continue
        feasible = [m for m in _subsets(problem)
                    if not violations(problem, m, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=True)]
        if outcome.status == "infeasible":
            assert not feasible
            continue
        assert outcome.status == "optimal"
        assert not violations(problem, outcome.mask, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=True)
        assert score(problem, outcome.mask) == pytest.approx(outcome.objective, abs=1e-4)
        assert outcome.objective == pytest.approx(max(score(problem, m) for m in feasible), abs=1e-4)


@pytest.mark.parametrize("n, seed", [(50, 1), (80, 2), (120, 3), (200, 4), (200, 5), (300, 6)])
def test_the_same_optimum_as_cp_sat_on_generated_queries(n, seed, monkeypatch):
    query = generate_queries(queries=1, candidates=n, seed=seed, gold_share=min(0.15, 30 / n))[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    for gate_on, sources_on in TIERS:
        outcome = _exact(problem, gate_on, sources_on, node_limit=3_000_000)
        monkeypatch.setattr(cpsat, "EXACT_MAX_CORE", -1)  # CP-SAT alone
        reference = cpsat.solve_optimal(problem, enforce_gate=gate_on, enforce_sources=sources_on, hint=None,
                                        time_limit=20.0, core_size=10**6, exact_up_to=10**6, ceiling=True)
        monkeypatch.undo()
        assert outcome is not None and reference.status in ("optimal", "infeasible")
        if outcome.status == "limit":
            continue
        assert outcome.status == reference.status
        if reference.status == "optimal":
            assert outcome.objective == pytest.approx(reference.solver_objective, abs=1e-9)


def test_solve_optimal_takes_the_exact_path_and_keeps_its_timing_keys():
    query = generate_queries(queries=1, candidates=60, seed=9)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    result = cpsat.solve_optimal(problem, enforce_gate=False, enforce_sources=False, hint=None, time_limit=5.0,
                                 core_size=10**6, exact_up_to=10**6)
    assert result.status == "optimal" and result.bound == result.solver_objective
    assert set(result.timings) == {"model", "solve"}
    assert score(problem, result.mask) == pytest.approx(result.solver_objective, abs=1e-4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(selection_instances(n_max=16))
def test_invariants(instance):
    """Whatever it returns (any tier, a node limit too): within the budget, eligible chunks only,
    no two chunks that may never be together."""
    cands, reqs, weights = instance
    problem = prepare(cands, reqs, weights=weights)
    for (gate_on, sources_on), limit in itertools.product(TIERS, (10**6, 5)):
        outcome = _exact(problem, gate_on, sources_on, node_limit=limit)
        if outcome is None or outcome.mask is None:
            continue
        assert_hard_constraints(problem, outcome.mask, gate_on)


def assert_hard_constraints(problem, mask, gate_on: bool) -> None:
    """Within the budget (the utilization ceiling), eligible chunks only, no forbidden pair, at most
    one chunk of a near-duplicate cluster, one value of each hard field."""
    assert problem.packed.tokens[mask].sum() <= problem.capacity(True)
    assert not (mask & ~problem.eligible).any()
    forbid_all, fields = conflict_fields(problem, gate_on)
    for a, c in forbidden_pairs(problem, np.arange(problem.n), forbid_all, fields):
        assert not (mask[a] and mask[c])
    for group in problem.groups:
        assert mask[group].sum() <= 1
    for f in fields:
        values = problem.packed.field_values[mask, f]
        assert len(set(values[values >= 0].tolist())) <= 1
    assert not violations(problem, mask, enforce_gate=False, enforce_sources=False, ceiling=True)


def test_select_loads_the_kernels_before_its_time_limit():
    """``_load_once`` compiles (or loads) the branch and bound's kernels for the argument types a call
    uses: a first optimal call compiles nothing more (a fresh process)."""
    code = """
import json
from ctxselect.selection import api
from ctxselect.kernels import bnb, bnb_bound
from ctxselect.evaluate.generate import generate_queries
kernels = [bnb._search, bnb._evaluate, bnb_bound._root_multipliers, bnb_bound._reduced]
api._load_once()
loaded = [len(k.signatures) for k in kernels]
query = generate_queries(queries=1, candidates=40, seed=3)[0]
sel = api.select(query.candidates, query.requirements, query.query)
print(json.dumps([loaded, [len(k.signatures) for k in kernels], sel.status]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    loaded, after, status = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == [1, 1, 1, 1] and after == loaded and status == "optimal"


def test_objectives_too_large_for_the_floats_of_the_bound_are_left_to_cp_sat():
    cands, reqs, _ = random_instance(3, n_min=6)
    problem = prepare(cands, reqs, weights={"relevance": 1e6, "coverage": 1e6})
    assert _exact(problem, False, False) is None
    assert _exact(prepare(cands, reqs), False, False) is not None


def test_a_deadline_already_past_stops_at_the_first_node():
    """The clock is read at the first node (and every CLOCK_EVERY after): a deadline in the past ends
    the search there with status "limit", the hint kept as the best found; never a false proof."""
    query = generate_queries(queries=1, candidates=120, seed=3)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    outcome = solve_exact(problem, enforce_gate=True, enforce_sources=True, ceiling=True, hint=None,
                          deadline=time.perf_counter() - 1.0, node_limit=10**8)
    assert outcome is not None and outcome.status == "limit" and outcome.nodes == 1
