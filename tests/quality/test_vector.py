"""inspect() against its plain-Python twin, and hypothesis properties of the metrics."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.quality.vector import quality_vector
from tests.naive.quality import naive_metrics
from tests.strategies import api_chunks, candidate_lists, requirement_dicts

RANGES = {
    "coverage": (0, 1), "coverage_weighted": (0, 1), "token_utilization": (0, math.inf),
    "utilization_risk": (0, 1), "source_starvation": (0, 1), "contradiction_density": (0, 1),
    "contradiction_density_weighted": (0, 1), "freshness": (0, 1), "stale_risk": (0, 1),
    "policy_admissibility": (0, 1),
}


@settings(max_examples=150, deadline=None)
@given(candidate_lists(), requirement_dicts())
def test_inspect_matches_naive_twin(chunks, reqs):
    report = ctxselect.inspect(api_chunks(chunks), reqs)
    expected = naive_metrics(chunks, reqs)
    for name, value in expected.items():
        assert report.metrics[name] == pytest.approx(value, abs=1e-9), name


@settings(max_examples=150, deadline=None)
@given(candidate_lists(), requirement_dicts())
def test_metrics_stay_in_range(chunks, reqs):
    report = ctxselect.inspect(api_chunks(chunks), reqs)
    for name, (low, high) in RANGES.items():
        assert low <= report.metrics[name] <= high + 1e-12, name
    assert report.passed == (not report.failures)


@settings(max_examples=150, deadline=None)
@given(candidate_lists(), requirement_dicts(), st.sampled_from(["internal", None]))
def test_adding_an_inadmissible_chunk_never_raises_admissibility(chunks, reqs, scope):
    reqs = dict(reqs, allowed_scopes=["public", "support"])
    before = ctxselect.inspect(api_chunks(chunks), reqs).metrics["policy_admissibility"]
    extra = {"id": "intruder", "source": "wiki", "tokens": 10, "relevance": 0.5}
    if scope is not None:
        extra["scope"] = scope
    after = ctxselect.inspect(api_chunks(chunks) + [extra], reqs).metrics["policy_admissibility"]
    assert after == pytest.approx(before * len(chunks) / (len(chunks) + 1), abs=1e-12)  # one more, inadmissible


@settings(max_examples=150, deadline=None)
@given(candidate_lists(min_size=1), requirement_dicts(), st.data())
def test_removing_a_chunk_never_raises_conflict_count(chunks, reqs, data):
    drop = data.draw(st.integers(0, len(chunks) - 1))
    before = ctxselect.inspect(api_chunks(chunks), reqs).conflicting_pairs
    rest = chunks[:drop] + chunks[drop + 1:]
    after = ctxselect.inspect(api_chunks(rest), reqs).conflicting_pairs
    assert len(after) <= len(before)
    assert {(p.a, p.b) for p in after} <= {(p.a, p.b) for p in before}


def test_empty_context():
    report = ctxselect.inspect([], {"token_budget": 100, "required_aspects": ["a"],
                                    "required_sources": ["s"]})
    m = report.metrics
    assert (m["coverage"], m["token_utilization"], m["source_starvation"], m["freshness"],
            m["policy_admissibility"], m["contradiction_density"]) == (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    assert not report.passed


def test_zero_relevance_freshness_is_the_plain_mean():
    reqs = {"token_budget": 100, "now": 86400.0 * 100, "decay_lambda": 0.01}
    chunks = [{"id": "a", "source": "s", "tokens": 5, "relevance": 0.0, "timestamp": 86400.0 * 100},
              {"id": "b", "source": "s", "tokens": 5, "relevance": 0.0, "timestamp": 0.0}]
    m = ctxselect.inspect(chunks, reqs).metrics
    assert m["freshness"] == pytest.approx((1.0 + math.exp(-1.0)) / 2)


def test_missing_timestamp_policy():
    chunks = [{"id": "a", "source": "s", "tokens": 5, "relevance": 1.0}]
    fresh = ctxselect.inspect(chunks, {"token_budget": 9}).metrics["freshness"]
    stale = ctxselect.inspect(chunks, {"token_budget": 9, "missing_timestamp": "stale"}).metrics["freshness"]
    assert (fresh, stale) == (1.0, 0.0)


def test_per_source_decay_and_half_life():
    day = 86400.0
    chunks = [{"id": "a", "source": "news", "tokens": 5, "relevance": 1.0, "timestamp": 0.0}]
    half = ctxselect.inspect(chunks, {"token_budget": 9, "now": 30 * day, "half_life_days": 30})
    assert half.metrics["freshness"] == pytest.approx(0.5)
    override = ctxselect.inspect(chunks, {"token_budget": 9, "now": 30 * day, "half_life_days": 30,
                                          "source_decay": {"news": 0.0}})
    assert override.metrics["freshness"] == 1.0


def test_conflicts_computed_once_give_the_same_vector_and_report():
    """quality_vector and report_for given what κ counts (kappa_conflicts, or the per-problem copy
    select() keeps: constraints.context_conflicts) equal the vector and report that compute it."""
    from ctxselect.evaluate.generate import generate_queries
    from ctxselect.quality.report import report_for
    from ctxselect.quality.vector import kappa_conflicts
    from ctxselect.selection.api import prepare
    from ctxselect.selection.constraints import _MASKS_KEPT, context_conflicts

    rng = np.random.default_rng(7)
    for contradictions in ("fields", "all"):
        query = generate_queries(queries=1, candidates=300, seed=7, gold_share=0.1)[0]
        reqs = dataclasses.replace(query.requirements, contradictions=contradictions)
        problem = prepare(query.candidates, reqs, query.query)
        packed, fresh = problem.packed, problem.signals.freshness
        masks = [rng.random(problem.n) < share for share in (0.0, 0.05, 0.2, 0.6, 1.0) for _ in range(3)]
        counted = 0
        for mask in masks:
            known = context_conflicts(problem, mask)
            assert context_conflicts(problem, mask.copy()) is known  # kept for the problem
            assert known == kappa_conflicts(packed, mask)
            for list_claims in (True, False):
                assert (quality_vector(packed, mask, fresh, list_claims=list_claims, conflicts=known)
                        == quality_vector(packed, mask, fresh, list_claims=list_claims))
            report = report_for(packed, mask, None, fresh, known)
            assert report == report_for(packed, mask, None, fresh)
            report.conflicting_pairs.clear()  # the report's list is its own
            assert known.pairs == kappa_conflicts(packed, mask).pairs
            counted += known.count
        assert counted > 0  # precondition: conflicts were counted
        assert len(masks) > _MASKS_KEPT and context_conflicts(problem, masks[0]) == kappa_conflicts(packed, masks[0])



@pytest.mark.parametrize("huge, ordinary, partly", [
    ({"a": 1e308, "b": 1e308, "c": 1e308}, {"a": 1.0, "b": 1.0, "c": 1.0}, 2 / 3),
    ({"a": 1e308, "b": 1e308, "c": 5e307}, {"a": 2.0, "b": 2.0, "c": 1.0}, 0.8)])
def test_aspect_weights_summing_past_the_largest_float_are_read_by_their_ratios(huge, ordinary, partly):
    """Weights of 1e308 sum to inf: the weighted coverage was inf / inf = nan, which the gate passed
    (nan < 0.9 is false) and JSON wrote as NaN; now they mean what their ratios mean."""
    for covers, expected in ((["a", "b"], partly), (["a", "b", "c"], 1.0)):
        chunks = [{"id": "c0", "relevance": 0.9, "tokens": 5, "aspects": covers},
                  {"id": "c1", "relevance": 0.5, "tokens": 5}]
        huge_report, ordinary_report = (
            ctxselect.inspect(chunks, {"token_budget": 20, "required_aspects": w, "gate": {"min_coverage": 0.9}})
            for w in (huge, ordinary))
        assert huge_report.metrics == ordinary_report.metrics
        assert huge_report.metrics["coverage_weighted"] == pytest.approx(expected)
        assert huge_report.passed is ordinary_report.passed is (expected == 1.0)
