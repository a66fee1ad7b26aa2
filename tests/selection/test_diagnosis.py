"""Diagnosis: when no selection can pass the gate, each condition out of reach is named."""

import ctxselect


def test_infeasible_gate_is_diagnosed():
    cands = [
        {"id": "p1", "source": "policy", "tokens": 100, "relevance": 0.9, "aspects": ["eligibility"],
         "timestamp": "2026-10-20", "scope": "public"},
        {"id": "s1", "source": "status", "tokens": 50, "relevance": 0.8, "scope": "internal"},
        {"id": "old", "source": "procedure", "tokens": 80, "relevance": 0.7, "timestamp": "2020-01-01",
         "aspects": ["steps"], "scope": "public"},
    ]
    reqs = {"token_budget": 400, "required_sources": ["policy", "status"], "allowed_scopes": ["public"],
            "required_aspects": ["eligibility", "steps", "availability"], "now": "2026-11-01",
            "min_freshness": 0.95}
    sel = ctxselect.select(cands, reqs)
    assert sel.relaxed == ["gate", "sources"]
    text = " | ".join(sel.infeasible)
    assert "no admissible candidate from source `status` (1 required)" in text
    assert "no candidate covers aspect `availability`" in text
    assert "freshness 0.95 is out of reach: the freshest eligible set reaches 0.89" in text
    assert "s1" not in sel.ids and sel.excluded["s1"].startswith("inadmissible")
    assert not sel.report.passed



def test_a_gate_just_out_of_reach_is_written_with_the_digits_that_tell_them_apart():
    """min_freshness 1 with the freshest chunk at 0.9958 read "freshness 1.00 is out of reach: the
    freshest eligible set reaches 1.00"; more decimals are written when two would be equal."""
    chunks = [{"id": "a", "source": "s", "tokens": 5, "relevance": 0.5, "timestamp": "2026-11-01T00:00:00Z"}]
    reqs = {"token_budget": 10, "now": "2026-11-01T10:00:00Z", "gate": {"min_freshness": 1.0}}
    sel = ctxselect.select(chunks, reqs)
    assert "freshness 1.000 is out of reach: the freshest eligible set reaches 0.996" in sel.infeasible, sel.infeasible
    aspects = {"token_budget": 10, "required_aspects": {"a": 1.0, "b": 1e-3}, "gate": {"min_coverage": 1.0}}
    sel = ctxselect.select([{"id": "x", "source": "s", "tokens": 5, "relevance": 0.5, "aspects": ["a"]}], aspects)
    assert ("coverage 1.000 is out of reach: all eligible candidates together cover 0.999"
            in sel.infeasible), sel.infeasible
