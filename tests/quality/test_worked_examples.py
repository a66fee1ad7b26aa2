"""The worked examples of article 000 (listed in design.md as 'must hold'), through inspect()."""

from datetime import datetime, timedelta

import pytest

import ctxselect

NOW = datetime(2026, 11, 1)


def chunk(cid, **kw):
    base = {"id": cid, "source": "s", "tokens": 100, "relevance": 1.0}
    base.update(kw)
    return base


def test_token_utilization_within_range():
    chunks = [chunk(str(i), tokens=t) for i, t in enumerate([2200, 1800, 6000, 1200])]
    m = ctxselect.inspect(chunks, {"token_budget": 20000}).metrics
    assert m["token_utilization"] == pytest.approx(0.56, abs=5e-4)
    assert m["utilization_risk"] == 0.0


def test_token_utilization_over_range_is_a_risk():
    m = ctxselect.inspect([chunk("a", tokens=19400)], {"token_budget": 20000}).metrics
    assert m["token_utilization"] == pytest.approx(0.97, abs=5e-4)
    assert m["utilization_risk"] == 1.0


def test_coverage_three_of_four_and_weighted():
    reqs = {"token_budget": 1000,
            "required_aspects": {"eligibility": 0.40, "effective_date": 0.20, "steps": 0.25,
                                 "availability": 0.15}}
    chunks = [chunk("a", aspects=["eligibility", "effective_date"]), chunk("b", aspects=["steps"])]
    m = ctxselect.inspect(chunks, reqs).metrics
    assert round(m["coverage"], 3) == 0.75
    assert round(m["coverage_weighted"], 3) == 0.85


def test_source_starvation_one_of_three():
    chunks = [chunk("a", source="policy"), chunk("b", source="policy"), chunk("c", source="procedure")]
    report = ctxselect.inspect(chunks, {"token_budget": 1000,
                                        "required_sources": ["policy", "procedure", "status"]})
    assert round(report.metrics["source_starvation"], 3) == 0.333
    assert report.starved_sources == [{"source": "status", "selected": 0, "required": 1}]


def test_freshness_ages_10_60_1():
    chunks = [chunk(str(i), relevance=r, timestamp=NOW - timedelta(days=age))
              for i, (age, r) in enumerate([(10, 0.9), (60, 0.8), (1, 0.7)])]
    m = ctxselect.inspect(chunks, {"token_budget": 1000, "now": NOW, "decay_lambda": 0.01}).metrics
    assert round(m["freshness"], 3) == 0.811


def test_stale_risk_two_of_three_valid():
    chunks = [chunk("a"), chunk("b", valid_to="2026-10-01"), chunk("c", valid_from="2026-01-01")]
    m = ctxselect.inspect(chunks, {"token_budget": 1000, "now": NOW}).metrics
    assert round(m["stale_risk"], 3) == 0.333


def test_contradiction_one_pair_among_four():
    chunks = [chunk("a", effective_date="2026-01-01"), chunk("b", effective_date="2025-01-01"),
              chunk("c"), chunk("d")]
    m = ctxselect.inspect(chunks, {"token_budget": 1000,
                                   "conflict_fields": {"effective_date": 0.8}}).metrics
    assert round(m["contradiction_density"], 3) == 0.167
    assert round(m["contradiction_density_weighted"], 3) == 0.133


def test_policy_admissibility_four_of_five():
    chunks = [chunk(str(i), scope="public") for i in range(4)] + [chunk("x", scope="internal")]
    report = ctxselect.inspect(chunks, {"token_budget": 1000, "allowed_scopes": ["public"]})
    assert round(report.metrics["policy_admissibility"], 3) == 0.8
    assert report.inadmissible_ids == ["x"]
    assert not report.passed
    assert [f.condition for f in report.failures] == ["min_policy_admissibility"]


def _article_context(status_chunks):
    """The article's passing package: ρ=1, τ in range, δ=0, κ=0, φ≥0.7, π=1."""
    chunks = [
        chunk("p", source="policy", tokens=4000, aspects=["eligibility", "effective_date"],
              timestamp=NOW - timedelta(days=5), scope="public"),
        chunk("q", source="procedure", tokens=4000, aspects=["steps"],
              timestamp=NOW - timedelta(days=5), scope="public"),
    ]
    if status_chunks:
        chunks.append(chunk("s", source="status", tokens=1000, aspects=["availability"],
                            timestamp=NOW - timedelta(days=1), scope="public"))
    return chunks


ARTICLE_CONFIG = {
    "token_budget": 20000,
    "required_aspects": ["eligibility", "effective_date", "steps", "availability"],
    "required_sources": ["policy", "procedure", "status"],
    "allowed_scopes": ["public"],
    "conflict_fields": ["effective_date"],
    "min_coverage": 0.80, "min_token_utilization": 0.10, "max_token_utilization": 0.90,
    "max_source_starvation": 0.0, "max_contradiction_density": 0.0, "min_freshness": 0.70,
    "now": NOW,
}


def test_gate_passes_article_package():
    report = ctxselect.inspect(_article_context(True), ARTICLE_CONFIG)
    assert report.passed, report.failures
    assert report.failures == []


def test_gate_fails_on_starvation_alone():
    config = dict(ARTICLE_CONFIG, required_aspects=["eligibility", "effective_date", "steps"])
    report = ctxselect.inspect(_article_context(False), config)
    assert not report.passed
    assert [f.condition for f in report.failures] == ["max_source_starvation"]
    failure = report.failures[0]
    assert round(failure.value, 3) == 0.333 and failure.threshold == 0.0
    assert "`status` (0 of 1)" in failure.message


def test_article_config_with_min_chunks_by_source():
    config = {"token_budget": 1000, "required_sources": ["policy", "status"],
              "min_chunks_by_source": {"policy": 2}}
    report = ctxselect.inspect([chunk("a", source="policy"), chunk("b", source="status")], config)
    assert report.starved_sources == [{"source": "policy", "selected": 1, "required": 2}]
    assert report.metrics["source_starvation"] == 0.5


def test_metrics_have_exactly_the_documented_keys():
    report = ctxselect.inspect([chunk("a")], {"token_budget": 10})
    assert set(report.metrics) == {
        "coverage", "coverage_weighted", "token_utilization", "utilization_risk",
        "source_starvation", "contradiction_density", "contradiction_density_weighted",
        "freshness", "stale_risk", "policy_admissibility"}
    as_dict = report.to_dict()
    assert set(as_dict["diagnostics"]) == {"starved_sources", "conflicting_pairs", "claim_conflicts", "stale_ids",
                                           "inadmissible_ids"}
