"""Relevance aggregation and bands (article 001)."""

import pytest

import ctxselect


def test_article_001_aggregation():
    scores = {0: 0.9, 1: 0.6, 2: 0.2}
    assert round(ctxselect.aggregate_relevance(scores, "mean"), 3) == 0.567
    assert round(ctxselect.aggregate_relevance(scores, "min"), 3) == 0.2
    assert round(ctxselect.aggregate_relevance(scores, "weighted"), 3) == 0.472  # the article prints 0.467
    assert ctxselect.aggregate_relevance([], "mean") == 0.0
    assert [ctxselect.relevance_band(x) for x in (0.85, 0.8, 0.6, 0.45, 0.1)] == \
        ["high", "high", "moderate", "low", "low"]
    with pytest.raises(ctxselect.InputError, match="field 'method': expected one of mean, min, weighted"):
        ctxselect.aggregate_relevance([0.5], "median")
    with pytest.raises(ctxselect.InputError, match=r"field 'scores\[1\]'"):
        ctxselect.aggregate_relevance([0.5, 1.5])

