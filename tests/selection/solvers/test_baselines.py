"""The baseline selectors' own behaviour: top-k stops at the first chunk that does not fit."""

import ctxselect


def test_topk_stops_and_reasons():
    cands = [{"id": "a", "source": "s", "tokens": 60, "relevance": 0.9},
             {"id": "b", "source": "s", "tokens": 60, "relevance": 0.8},
             {"id": "c", "source": "s", "tokens": 10, "relevance": 0.1}]
    reqs = {"token_budget": 100}
    top = ctxselect.select(cands, reqs, method="topk")
    assert top.ids == ["a"]
    assert top.excluded["b"] == "does not fit: 60 tokens, 40 left in the budget"
    assert top.excluded["c"].startswith("not reached: top-k stopped at `b`")
    assert sorted(ctxselect.select(cands, reqs, method="greedy").ids) == ["a", "c"]

