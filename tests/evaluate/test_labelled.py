"""Labelled metrics (article 003): recall at depth, gold positions, distractors."""

import pytest

import ctxselect


def test_labelled_metrics():
    query = ctxselect.Query.from_dict({
        "query_id": "q", "requirements": {"token_budget": 100}, "gold": ["g1", "g2"],
        "candidates": [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 1 - k / 100, "rank": k + 1}
                       for k in range(30)] +
                      [{"id": "g1", "source": "s", "tokens": 10, "relevance": 0.5, "rank": 31},
                       {"id": "g2", "source": "s", "tokens": 10, "relevance": 0.5, "rank": 5}]})
    m = ctxselect.labelled_metrics(query, ["c0", "g2", "c1"])
    assert m["recall@20"] == 0.5 and m["hit@20"] == 1.0  # g2 has rank 5, g1 rank 31
    assert m["recall@50"] == 1.0 and m["hit@50"] == 1.0
    assert m["recall@selection"] == 0.5 and m["all_gold"] == 0.0 and m["hit@selection"] == 1.0
    assert m["gold_window_ranks"] == [2] and m["gold_token_offsets"] == [10]
    assert m["gold_middle_third_share"] == 1.0 and m["distractors"] == 2
    summary = ctxselect.summarize_labelled([m, ctxselect.labelled_metrics(query, [])])
    assert summary["queries"] == 2 and summary["evidence_free"] == 0.5
    assert ctxselect.self_consistency(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert ctxselect.self_consistency([], []) == 1.0


def test_recall_at_depth_counts_ties_by_rank():
    query = ctxselect.Query.from_dict({
        "query_id": "q", "requirements": {"token_budget": 100}, "gold": [["a"], ["b", "c"]],
        "candidates": [{"id": k, "source": "s", "tokens": 10, "relevance": 0.5} for k in "abcd"]})
    m = ctxselect.labelled_metrics(query, ["b"], depths=(1,))
    assert m["recall@1"] == 1.0  # relevance ties keep candidate order: a is first, and {a} suffices
    assert m["recall@selection"] == 0.5

