"""CP-SAT against brute force over every subset (n <= 12..14) of the twin's own problem, built
from the raw candidates (tests/naive/select.py); no baseline that meets the same constraints
beats it."""

import pytest

import ctxselect
from tests.naive.select import (
    all_subsets,
    brute_force,
    mask_of,
    naive_feasible,
    naive_objective,
    naive_sources_met,
    raw_problem,
)
from tests.strategies import random_instance

METHODS = ["greedy", "topk", "density", "mmr"]


def proven(sel) -> bool:
    """Proven optimal; an empty optimum says so in its status ("empty"), the proof in its reason."""
    return sel.status == "optimal" or (sel.status == "empty" and sel.status_reason.endswith("(optimal: proven optimal)")
                                       and sel.ids == [])


@pytest.mark.parametrize("seed", range(120))
def test_optimal_matches_brute_force(seed):
    cands, reqs, weights = random_instance(seed)
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin)
    sel = ctxselect.select(cands, reqs, method="optimal", weights=weights, time_limit=10.0)
    assert proven(sel), sel.status_reason
    assert sel.relaxed == relaxed
    assert sel.objective == pytest.approx(best, abs=1e-4)
    assert sel.bound >= sel.objective and sel.gap == pytest.approx(0.0, abs=1e-4)
    mask = mask_of(twin, sel.ids)
    assert sel.objective == pytest.approx(float(naive_objective(twin, mask[None, :])[0]), abs=1e-9)
    gate_on, sources_on = "gate" not in relaxed, "sources" not in relaxed
    assert naive_feasible(twin, mask[None, :], gate_on=gate_on, sources_on=sources_on, ceiling=True)[0]
    if relaxed:
        assert sel.infeasible, "a relaxed selection must say why"
    held = naive_sources_met(twin, mask[None, :])[0]  # with the minimums relaxed: as many as any subset holds
    if not sources_on:
        X = all_subsets(twin.n)
        assert held == naive_sources_met(twin, X)[naive_feasible(twin, X, gate_on=False, sources_on=False,
                                                                 ceiling=True)].max()
    # no baseline that satisfies the same constraints (and holds as many required chunks) beats it
    for method in METHODS:
        other = ctxselect.select(cands, reqs, method=method, weights=weights)
        other_mask = mask_of(twin, other.ids)
        assert other.objective == pytest.approx(float(naive_objective(twin, other_mask[None, :])[0]), abs=1e-9)
        if (naive_feasible(twin, other_mask[None, :], gate_on=gate_on, sources_on=sources_on, ceiling=True)[0]
                and naive_sources_met(twin, other_mask[None, :])[0] >= held):
            assert other.objective <= sel.objective + 1e-6, method


@pytest.mark.parametrize("seed", range(60))
def test_cp_sat_alone_matches_brute_force(seed, monkeypatch):
    """CP-SAT's own search (its parameters: selection/solvers/sat_parameters.py) on the models the
    branch and bound would otherwise prove first: the same optimum as every subset."""
    from ctxselect.selection.solvers import cpsat

    solves = []
    real = cpsat._solve_proto
    monkeypatch.setattr(cpsat, "solve_exact", lambda *a, **k: None)
    monkeypatch.setattr(cpsat, "_solve_proto", lambda *a: solves.append(1) or real(*a))
    cands, reqs, weights = random_instance(seed)
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin)
    sel = ctxselect.select(cands, reqs, method="optimal", weights=weights, time_limit=10.0)
    assert proven(sel) and sel.relaxed == relaxed, sel.status_reason
    assert sel.objective == pytest.approx(best, abs=1e-4)
    assert solves, "CP-SAT did not solve"


def test_the_parameter_table_is_what_cp_sat_gets():
    """Every entry of SAT_PARAMETERS differs from OR-Tools' default (as the table says) and reaches the
    parameters CP-SAT solves with; the search branches on the LP's reduced costs."""
    from ctxselect.selection.solvers.cpsat import _helper
    from ctxselect.selection.solvers.sat_parameters import SAT_PARAMETERS, sat_parameters

    helper = _helper()
    default, params = helper.SatParameters(), sat_parameters(helper, 0.25)
    for name in SAT_PARAMETERS:
        assert getattr(params, name) != getattr(default, name), name
    assert params.search_branching == helper.SatParameters.LP_SEARCH and params.max_time_in_seconds == 0.25
    assert params.num_workers == 1 and not params.catch_sigint_signal and params.linearization_level == 2


@pytest.mark.parametrize("seed", range(1000, 1012))
def test_optimal_matches_brute_force_n14(seed):
    cands, reqs, weights = random_instance(seed, n_min=13, n_max=14)
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin)
    sel = ctxselect.select(cands, reqs, weights=weights, time_limit=10.0)
    assert proven(sel) and sel.relaxed == relaxed
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


def _closest_instance(seed):
    cands, reqs, weights = random_instance(seed, gate_loose=False)
    return cands, dict(reqs, freshness_fallback="closest", gate=dict(reqs["gate"], min_freshness=0.999)), weights


def test_the_closest_freshness_instances_do_lower_the_floor():
    """Precondition of the test below: the lowered floor is what many of its instances exercise."""
    lowered = sum(any("the floor is lowered" in line for line in ctxselect.select(*_closest_instance(seed)[:2],
                                                                                  time_limit=10.0).infeasible)
                  for seed in range(300, 340))
    assert lowered >= 10


@pytest.mark.parametrize("seed", range(300, 340))
def test_closest_freshness_matches_brute_force(seed):
    """An unreachable freshness floor with freshness_fallback="closest": the twin lowers it to the
    freshest subset meeting everything else, by enumeration; the library by Dinkelbach steps."""
    cands, reqs, weights = _closest_instance(seed)
    twin = raw_problem(cands, reqs, weights)
    best, relaxed, _ = brute_force(twin)
    sel = ctxselect.select(cands, reqs, weights=weights, time_limit=10.0)
    assert sel.relaxed == relaxed
    assert sel.objective == pytest.approx(best, abs=1e-4), sel.infeasible


def test_ctrl_c_still_raises_keyboard_interrupt_after_a_cp_sat_solve():
    # OR-Tools' CP-SAT put SIGINT back to the OS default after each solve (its catch_sigint_signal):
    # Ctrl-C then killed the process, skipping `finally` blocks (the CLI left its temporary output file)
    import subprocess
    import sys

    probe = (
        "import os, signal, time\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal (a background job ignores it)\n"
        "import ctxselect\n"
        "import ctxselect.selection.solvers.cpsat as cpsat\n"
        "cpsat.solve_exact = lambda *a, **k: None  # CP-SAT solves even what the branch and bound would\n"
        "chunks = [{'id': f'c{i}', 'source': f's{i % 3}', 'relevance': 0.1 + i / 20, 'tokens': 5 + i,\n"
        "           'text': f'chunk {i} about floods'} for i in range(12)]\n"
        "sel = ctxselect.select(chunks, {'token_budget': 40}, 'floods')\n"
        "assert 'solve' in sel.timings and sel.status == 'optimal', (sel.timings, sel.status)\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(2)\n"
        "    print('no interrupt')\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt')\n"
        "finally:\n"
        "    print('finally ran')\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert (out.returncode, out.stdout.split()) == (0, ["KeyboardInterrupt", "finally", "ran"]), out.stderr[-2000:]
