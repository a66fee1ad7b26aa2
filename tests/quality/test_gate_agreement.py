"""One gate truth: a selection select() returns with the gate enforced passes inspect() under the
same requirements, or ``relaxed`` and ``infeasible`` name every condition it fails — over generated
dumps of many shapes and the bundled example."""

from pathlib import Path

import pytest

import ctxselect
from ctxselect.evaluate.generate import generate_queries

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_desk.jsonl"
SHAPES = {
    "default": {},
    "tight budget, stale and forbidden": {"budget_factor": 0.4, "stale_rate": 0.7, "inadmissible_rate": 0.3},
    "many aspects, conflicts, duplicates": {"aspects": 10, "conflict_rate": 0.5, "duplicate_rate": 0.3},
    "every source required, skewed": {"required_sources": 4, "sources": 4, "source_skew": 3.0},
    "versions and stale": {"version_rate": 0.3, "stale_rate": 0.4, "seed": 5},
}


def _queries(shape):
    if shape == "example":
        return ctxselect.read_dump(EXAMPLE)
    return generate_queries(queries=12, candidates=30, **{"seed": 1, **SHAPES[shape]})


@pytest.mark.parametrize("shape", [*SHAPES, "example"])
def test_select_and_inspect_judge_the_gate_alike(shape):
    relaxed_seen = 0
    for q in _queries(shape):
        sel = ctxselect.select(q.candidates, q.requirements, query=q.query)
        by_id = {c.id: c for c in q.candidates}
        report = ctxselect.inspect([by_id[i] for i in sel.ids], q.requirements)
        assert report.passed == sel.report.passed, q.query_id
        if not sel.relaxed:
            assert report.passed, (q.query_id, [f.message for f in report.failures])
            continue
        relaxed_seen += 1
        if not report.passed:  # inspect() fails it: the optimizer said the gate could not be met, and why
            assert "gate" in sel.relaxed, (q.query_id, sel.relaxed)
            diagnosis = [line for line in sel.infeasible if not line.startswith("the selection returned")]
            assert diagnosis, q.query_id
        assert "max_token_utilization" not in [f.condition for f in report.failures]  # the ceiling always holds
    if shape in ("tight budget, stale and forbidden", "many aspects, conflicts, duplicates"):
        assert relaxed_seen  # precondition: these shapes reach the relaxed branch


def test_the_default_gate_keeps_ten_percent_of_the_budget_free():
    cands = [{"id": f"c{k}", "source": "s", "relevance": 0.9, "tokens": 30, "text": f"fact {k}"} for k in range(4)]
    sel = ctxselect.select(cands, {"token_budget": 100})
    assert len(sel.ids) == 3 and sel.report.metrics["token_utilization"] == pytest.approx(0.9)
    assert ctxselect.inspect([c for c in cands if c["id"] in sel.ids], {"token_budget": 100}).passed
    assert "under the gate's utilization ceiling (90 of the 100-token budget)" in sel.excluded["c3"]
    whole = {"token_budget": 100, "gate": {"max_token_utilization": None}}
    assert len(ctxselect.select(cands, whole).ids) == 3  # 4 x 30 > 100 either way
    assert ctxselect.select(cands[:3] + [dict(cands[3], tokens=10)], whole).report.metrics["token_utilization"] == 1.0
    assert len(ctxselect.select(cands, {"token_budget": 100}, enforce_gate=False).ids) == 3
