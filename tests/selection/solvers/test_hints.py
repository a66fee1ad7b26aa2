"""The solver's hints (selection/solvers/hints.py): the baselines are made only when read, a proof
of the whole eligible set needs none of them, and after a node limit CP-SAT is hinted with the
better of the search's best selection and the baselines'."""

import numpy as np
import pytest

import ctxselect
from ctxselect.evaluate.generate import generate_queries
from ctxselect.selection.api import prepare
from ctxselect.selection.constraints import satisfies
from ctxselect.selection.problem import score
from ctxselect.selection.solvers import cpsat
from ctxselect.selection.solvers.hints import Baselines, better, best_hint
from ctxselect.selection.solvers.registry import BASELINES, Method


def _query(n=40, seed=3):
    q = generate_queries(queries=1, candidates=n, seed=seed)[0]
    return q.candidates, q.requirements, q.query


@pytest.fixture
def baseline_calls(monkeypatch):
    """The baselines the optimizer runs, counted (the registry's functions, wrapped), after the
    process's loading (which runs every kernel once)."""
    ctxselect.warm_up()
    calls = []
    for method in Baselines.METHODS:
        def counted(problem, _run=BASELINES[method], _method=method):
            calls.append(_method)
            return _run(problem)
        monkeypatch.setitem(BASELINES, method, counted)
    return calls


def test_the_baselines_are_made_once_and_only_when_read(baseline_calls):
    problem = prepare(*_query())
    timings = {}
    masks = Baselines(problem, timings)
    assert len(masks) == 2 and not baseline_calls and "baselines" not in timings
    first = masks[0]
    assert baseline_calls == [Method.GREEDY, Method.DENSITY] and timings["baselines"] >= 0
    assert masks[0] is first and list(masks)[1] is masks.selections()[1] and len(baseline_calls) == 2
    assert np.array_equal(first, BASELINES[Method.GREEDY](problem)[0])


def test_a_proof_of_the_whole_eligible_set_runs_no_baseline(baseline_calls):
    sel = ctxselect.select(*_query())
    assert sel.status == "optimal" and sel.status_reason == "proven optimal"
    assert baseline_calls == [] and "baselines" not in sel.timings


def test_a_node_limit_makes_the_baselines_and_hints_cp_sat_with_the_better(monkeypatch, baseline_calls):
    """With the search stopped at its first node, the baselines are made and CP-SAT is hinted; the
    answer is CP-SAT's proof, never below a baseline that meets the model."""
    hints = []
    finish = cpsat._ModelBuilder.finish

    def recording_finish(self, hint_vars, hint_values):
        hints.append(list(hint_values))
        return finish(self, hint_vars, hint_values)

    monkeypatch.setattr(cpsat, "NODE_LIMIT", 1)
    monkeypatch.setattr(cpsat._ModelBuilder, "finish", recording_finish)
    candidates, requirements, question = _query()
    sel = ctxselect.select(candidates, requirements, question)
    assert baseline_calls and "baselines" in sel.timings and hints and hints[0]
    assert sel.status == "optimal"
    problem = prepare(candidates, requirements, question)
    for method in Baselines.METHODS:
        mask = BASELINES[method](problem)[0]
        if satisfies(problem, mask):
            assert sel.objective >= score(problem, mask) - 1e-9


def test_better_takes_a_hint_only_when_it_meets_the_model_and_scores_higher():
    problem = prepare(*_query())
    found = Baselines(problem, {})[0]
    assert satisfies(problem, found, enforce_gate=False, enforce_sources=False)
    nothing = np.zeros(problem.n, dtype=bool)
    assert not better(problem, None, found, False, False, False)
    assert not better(problem, nothing, found, False, False, False)  # scores lower
    assert not better(problem, found, found, False, False, False)  # not higher
    assert better(problem, found, nothing, False, False, False)
    over = []  # the greedy selection and one more chunk: a higher score, over the budget
    for k in (problem.eligible & ~found).nonzero()[0]:
        bigger = found.copy()
        bigger[k] = True
        if score(problem, bigger) > score(problem, found) and not satisfies(problem, bigger, enforce_gate=False,
                                                                              enforce_sources=False):
            over.append(bigger)
    assert over, "no higher-scoring selection that breaks the model"
    assert not any(better(problem, bigger, found, False, False, False) for bigger in over)


def test_best_hint_prefers_a_selection_that_meets_the_model():
    problem = prepare(*_query())
    everything = problem.eligible.copy()  # breaks the budget
    nothing = np.zeros(problem.n, dtype=bool)  # meets the hard tier
    assert best_hint(problem, [everything, nothing], False, False, False) is nothing
    assert best_hint(problem, [everything], False, False, False) is everything  # none meets it: the highest
