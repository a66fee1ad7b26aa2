"""The registry: method and order names, and the assembly orders of a selection."""

import pytest

import ctxselect


def test_assembly_orders():
    cands = [{"id": f"c{k}", "source": ["b", "a"][k % 2], "tokens": 10, "relevance": r, "rank": 5 - k,
              "timestamp": 1_700_000_000 + k * 86400} for k, r in enumerate([0.9, 0.5, 0.8, 0.6, 0.7])]
    reqs = {"token_budget": 1000, "now": 1_700_000_000 + 5 * 86400}
    edges = ctxselect.select(cands, reqs, method="greedy").ids
    assert edges[0] == "c0" and edges[-1] == "c2" and edges[len(edges) // 2] == "c1"
    assert ctxselect.select(cands, reqs, method="greedy", order="rank").ids == ["c4", "c3", "c2", "c1", "c0"]
    assert ctxselect.select(cands, reqs, method="greedy", order="source").ids == ["c0", "c2", "c4", "c3", "c1"]
    assert ctxselect.select(cands, reqs, method="greedy", order="chronological").ids == [f"c{k}" for k in range(5)]
    with pytest.raises(ctxselect.InputError, match="field 'order': expected one of edges, rank, source, chronological"):
        ctxselect.select(cands, reqs, order="middle")
    with pytest.raises(ctxselect.InputError, match="field 'method': expected one of greedy, topk, density, mmr, optimal, found 'best'"):
        ctxselect.select(cands, reqs, method="best")

