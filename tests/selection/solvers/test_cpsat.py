"""CP-SAT against brute force over every subset (n <= 12..14) of the twin's own problem, built
from the raw candidates (tests/naive/select.py); no baseline that meets the same constraints
beats it; the core and the time limit."""

import numpy as np
import pytest

import ctxselect
from tests.helpers import SUPERSESSION_BUG, seeds_with_known_bug
from tests.naive.select import brute_force, mask_of, naive_feasible, naive_objective, raw_problem
from tests.strategies import random_instance

METHODS = ["greedy", "topk", "density", "mmr"]


@pytest.mark.parametrize("seed", seeds_with_known_bug(range(120), {45, 93}, SUPERSESSION_BUG))
def test_optimal_matches_brute_force(seed):
    cands, reqs, weights = random_instance(seed)
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin)
    sel = ctxselect.select(cands, reqs, method="optimal", weights=weights, time_limit=10.0)
    assert sel.status == "optimal", sel.status_reason
    assert sel.relaxed == relaxed
    assert sel.objective == pytest.approx(best, abs=1e-4)
    assert sel.bound >= sel.objective and sel.gap == pytest.approx(0.0, abs=1e-4)
    mask = mask_of(twin, sel.ids)
    assert sel.objective == pytest.approx(float(naive_objective(twin, mask[None, :])[0]), abs=1e-9)
    gate_on, sources_on = "gate" not in relaxed, "sources" not in relaxed
    assert naive_feasible(twin, mask[None, :], gate_on=gate_on, sources_on=sources_on)[0]
    if relaxed:
        assert sel.infeasible, "a relaxed selection must say why"
    # no baseline that satisfies the same constraints beats it
    for method in METHODS:
        other = ctxselect.select(cands, reqs, method=method, weights=weights)
        other_mask = mask_of(twin, other.ids)
        assert other.objective == pytest.approx(float(naive_objective(twin, other_mask[None, :])[0]), abs=1e-9)
        if naive_feasible(twin, other_mask[None, :], gate_on=gate_on, sources_on=sources_on)[0]:
            assert other.objective <= sel.objective + 1e-6, method


@pytest.mark.parametrize("seed", seeds_with_known_bug(range(1000, 1012), {1001}, SUPERSESSION_BUG))
def test_optimal_matches_brute_force_n14(seed):
    cands, reqs, weights = random_instance(seed, n_min=13, n_max=14)
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin)
    sel = ctxselect.select(cands, reqs, weights=weights, time_limit=10.0)
    assert sel.status == "optimal" and sel.relaxed == relaxed
    assert sel.objective == pytest.approx(best, abs=1e-4)


@pytest.mark.parametrize("seed", range(200, 230))
def test_without_gate_no_baseline_beats_optimal(seed):
    cands, reqs, weights = random_instance(seed)
    reqs = dict(reqs, required_sources={})
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin, enforce_gate=False)
    sel = ctxselect.select(cands, reqs, weights=weights, enforce_gate=False, time_limit=10.0)
    assert sel.objective == pytest.approx(best, abs=1e-4) and relaxed == []
    for method in METHODS:
        other = ctxselect.select(cands, reqs, method=method, weights=weights)
        assert naive_feasible(twin, mask_of(twin, other.ids)[None, :], gate_on=False, sources_on=False)[0], method
        assert other.objective <= sel.objective + 1e-6, method


def test_core_above_exact_limit_reports_feasible_with_a_valid_bound():
    rng = np.random.default_rng(4)
    cands = [{"id": f"c{k}", "source": "s", "tokens": int(rng.integers(10, 60)),
              "relevance": float(rng.random())} for k in range(40)]
    reqs = {"token_budget": 200}
    proven = ctxselect.select(cands, reqs)
    assert proven.status == "optimal"
    cored = ctxselect.select(cands, reqs, core_size=8, exact_up_to=10)
    assert cored.status == "feasible" and "core of 8 candidates" in cored.status_reason
    assert cored.objective <= proven.objective + 1e-9 <= cored.bound + 1e-9  # the bound covers the optimum
    with pytest.raises(ctxselect.InputError, match="field 'exact_up_to'"):
        ctxselect.select(cands, reqs, exact_up_to=-1)



def test_the_time_limit_bounds_every_solver_call(monkeypatch):
    """A tiny limit on a large instance: every CP-SAT call gets at most the limit as its own time
    budget (``max_time_in_seconds``), and whatever the status, the selection is valid and a
    status short of optimal names the limit. No wall-clock assertion: how long this machine takes
    is not what the limit promises (an ``elapsed < 30`` check could only fail on a slow machine)."""
    from ortools.sat.python import cp_model

    budgets = []
    solve = cp_model.CpSolver.solve

    def recording_solve(self, *args, **kwargs):
        budgets.append(self.parameters.max_time_in_seconds)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(cp_model.CpSolver, "solve", recording_solve)
    rng = np.random.default_rng(0)
    n = 3000
    cands = [{"id": str(k), "source": f"s{k % 7}", "tokens": int(rng.integers(20, 300)),
              "relevance": float(rng.random()), "aspects": [f"a{int(x)}" for x in rng.integers(0, 40, 2)],
              "fields": {"f": int(rng.integers(0, 50))} if k % 3 == 0 else {}} for k in range(n)]
    reqs = {"token_budget": 4000, "required_aspects": [f"a{k}" for k in range(40)],
            "conflict_fields": {"f": 0.5}, "min_coverage": 0.0, "min_freshness": 0.0}
    limit = 0.05
    sel = ctxselect.select(cands, reqs, time_limit=limit)
    assert budgets and all(0 < b <= limit for b in budgets), budgets
    # 3,000 eligible candidates (more than exact_up_to): CP-SAT solves a core, never proves optimality
    assert sel.status in ("feasible", "fallback"), sel.status
    if sel.status == "fallback":  # the limit ran out before CP-SAT found a selection
        assert sel.status_reason.startswith(f"time limit of {limit:g} s reached before CP-SAT found a selection")
        assert sel.bound is None
    else:
        assert sel.status_reason.startswith("optimal on a core of 300 candidates"), sel.status_reason
        assert sel.bound >= sel.objective
    chosen = set(sel.ids)
    assert len(chosen) == len(sel.ids)
    assert sum(c["tokens"] for c in cands if c["id"] in chosen) <= 4000
    assert set(sel.excluded) == {c["id"] for c in cands} - chosen
