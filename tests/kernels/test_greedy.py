"""The greedy selectors' kernels (kernels/greedy.py) against their plain-Python twins
(tests/naive/baselines.py): the same selections and notes, to the bit, on fixed, random, generated
and edge instances; NumPy's summation order; the one marginal gain."""

import dataclasses

import numpy as np
import pytest

import ctxselect
from ctxselect.evaluate.generate import generate_queries
from ctxselect.kernels.greedy import _gains, _pairwise_sum
from ctxselect.selection.api import prepare
from ctxselect.selection.problem import marginal_gains
from ctxselect.selection.solvers import baselines
from tests.naive.baselines import NAIVE_BASELINES, naive_marginal_gain
from tests.strategies import random_instance


def assert_same(problem, lambda_=0.7):
    for name, twin in NAIVE_BASELINES.items():
        args = (lambda_,) if name == "mmr" else ()
        mask, notes = getattr(baselines, name)(problem, *args)
        want_mask, want_notes = twin(problem, *args)
        assert mask.dtype == bool and mask.shape == (problem.n,)
        assert np.array_equal(mask, want_mask), name
        assert notes == want_notes, name


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 16, 127, 128, 129, 200, 257, 1000, 4099])
def test_the_pairwise_sum_is_numpys_sum_to_the_bit(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.random(n + 3) * 10.0 ** rng.integers(-6, 6, n + 3)
        assert _pairwise_sum(a, 3, n) == float(a[3:].sum())


def test_a_fixed_instance_by_hand():
    """Budget 100: greedy takes a (60), skips b (60 more do not fit), then takes c (10); top-k
    stops at b and notes c; density and mmr as their twins."""
    cands = [{"id": "a", "source": "s", "tokens": 60, "relevance": 0.9},
             {"id": "b", "source": "s", "tokens": 60, "relevance": 0.8},
             {"id": "c", "source": "s", "tokens": 10, "relevance": 0.1}]
    problem = prepare(cands, {"token_budget": 100})
    assert np.flatnonzero(baselines.greedy(problem)[0]).tolist() == [0, 2]
    mask, notes = baselines.topk(problem)
    assert np.flatnonzero(mask).tolist() == [0]
    assert notes == {2: "not reached: top-k stopped at `b`, the first chunk that did not fit"}
    assert_same(problem)


@pytest.mark.parametrize("seed", range(40))
def test_the_kernels_are_the_twins_on_random_instances(seed):
    cands, reqs, weights = random_instance(seed, 1, 30)
    for severity in (1.0, 0.4):
        for on_unresolved in ("drop_both", "keep_both"):
            problem = prepare(cands, reqs, weights=weights, hard_conflict_severity=severity,
                              on_unresolved=on_unresolved)
            assert_same(problem, lambda_=(0.7, 0.3)[seed % 2])


@pytest.mark.parametrize("seed", range(3))
def test_the_kernels_are_the_twins_on_generated_queries_with_a_question(seed):
    query = generate_queries(queries=1, candidates=400, seed=seed, gold_share=0.1)[0]
    for reqs in (query.requirements, dataclasses.replace(query.requirements, max_chunks=5)):
        problem = prepare(query.candidates, reqs, query.query)
        assert problem.aspect_gain.size  # the question's terms join the aspects
        assert_same(problem)


def test_edges_nothing_eligible_no_budget_for_any_and_all_identical():
    cands = [{"id": f"c{k}", "source": "s", "tokens": 50, "relevance": 0.5, "scope": "secret"} for k in range(4)]
    problem = prepare(cands, {"token_budget": 100, "allowed_scopes": ["public"]})
    assert not problem.eligible.any()
    assert_same(problem)
    for name in NAIVE_BASELINES:
        assert not getattr(baselines, name)(problem)[0].any()
    big = [{"id": f"c{k}", "source": "s", "tokens": 500, "relevance": 0.5} for k in range(3)]
    assert_same(prepare(big, {"token_budget": 100}))
    same = [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5, "text": "one and the same text here"}
            for k in range(5)]
    problem = prepare(same, {"token_budget": 100})
    assert_same(problem)
    assert baselines.greedy(problem)[0].sum() == 1  # one near-duplicate cluster: one member


def test_density_notes_the_chunk_that_stopped_it_and_the_rest():
    cands = [{"id": "a", "source": "s", "tokens": 10, "relevance": 0.9},
             {"id": "b", "source": "s", "tokens": 10, "relevance": 0.0},
             {"id": "c", "source": "s", "tokens": 20, "relevance": 0.0}]
    problem = prepare(cands, {"token_budget": 100})
    mask, notes = baselines.density(problem)
    assert np.flatnonzero(mask).tolist() == [0]
    assert notes[1].startswith("adds no value: marginal gain -0.")
    assert notes[2] == "adds no value once the better chunks are in"
    assert_same(problem)


@pytest.mark.parametrize("seed", range(5))
def test_the_one_marginal_gain_is_the_twins(seed):
    query = generate_queries(queries=1, candidates=150, seed=seed, gold_share=0.1)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    rng = np.random.default_rng(seed)
    covered = rng.random(problem.aspect_gain.size) < 0.4
    penalty = rng.random(problem.n) * (rng.random(problem.n) < 0.3)
    rows = np.arange(problem.n)
    got = marginal_gains(problem, rows, covered, penalty)
    assert got.tolist() == [naive_marginal_gain(problem, i, covered, penalty) for i in rows]
    empty = _gains(np.zeros(0, np.int64), problem.value, penalty, problem.aspect_gain,
                   np.ascontiguousarray(problem.covers), covered)
    assert empty.shape == (0,)


def test_select_runs_every_baseline_through_the_kernels():
    query = generate_queries(queries=1, candidates=60, seed=3)[0]
    for method in ("greedy", "topk", "density", "mmr"):
        sel = ctxselect.select(query.candidates, query.requirements, query.query, method=method)
        problem = prepare(query.candidates, query.requirements, query.query)
        want = NAIVE_BASELINES[method](problem)[0]
        assert sorted(sel.ids) == sorted(problem.packed.ids[i] for i in np.flatnonzero(want))
