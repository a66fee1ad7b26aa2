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

