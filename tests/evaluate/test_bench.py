"""The benchmark runner: gold metrics by hand, and the same records with several processes."""

import pytest

import ctxselect
from ctxselect.evaluate.bench import gold_metrics, run_bench
from ctxselect.evaluate.generate import generate_queries


@pytest.fixture(scope="module")
def generated():
    return generate_queries(queries=4, candidates=30, seed=5)


def test_bench_jobs_give_the_same_records(generated):
    queries = generated
    one = run_bench(queries, ["greedy", "optimal"])
    two = run_bench(queries, ["greedy", "optimal"], jobs=2)
    assert [(r.query_id, r.method, r.ids, r.objective) for r in one.records] == \
        [(r.query_id, r.method, r.ids, r.objective) for r in two.records]


def test_gold_metrics_by_hand():
    query = ctxselect.Query.from_dict({
        "query_id": "q", "requirements": {"token_budget": 100}, "gold": [["a", "b"], ["c"]],
        "candidates": [{"id": k, "source": "s", "tokens": 10, "relevance": 0.5} for k in "abcd"]})
    g = gold_metrics(query, ["d", "a", "c"])
    assert g["recall"] == 1.0 and g["all_gold"] == 1.0  # the set {c} is fully selected
    assert g["precision"] == pytest.approx(2 / 3) and g["distractors"] == 1.0
    assert g["middle_third"] == pytest.approx(0.5)  # a sits in the middle third, c at the end

