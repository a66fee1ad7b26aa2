"""Raw retriever scores read as relevance: minmax, sigmoid and rank against hand-computed values,
the inputs never changed, the default refusing them with a message that names the option."""

import math

import pytest

import ctxselect
from ctxselect.model.scores import Relevance, normalise_relevance

RAW = [12.5, 9.0, 3.0, -2.0, 9.0]


def _chunks():
    return [{"id": f"c{k}", "source": "s", "relevance": s, "tokens": 20, "text": f"note {w}"}
            for k, (s, w) in enumerate(zip(RAW, ["amber", "birch", "cedar", "dune", "ember"]))]


@pytest.mark.parametrize("mode, expected", [
    ("minmax", [1.0, 11 / 14.5, 5 / 14.5, 0.0, 11 / 14.5]),
    ("sigmoid", [1 / (1 + math.exp(-s)) for s in RAW]),
    ("rank", [1.0, 0.8, 0.4, 0.2, 0.8]),  # equal scores share the best of their ranks
])
def test_each_mode_against_hand_computed_values(mode, expected):
    chunks = _chunks()
    out = normalise_relevance(chunks, Relevance(mode))
    assert [c["relevance"] for c in out] == pytest.approx(expected)
    assert [c["relevance"] for c in chunks] == RAW  # the inputs are copied, never changed
    assert normalise_relevance([dict(c, relevance=7.0) for c in chunks[:2]], Relevance.MINMAX)[0]["relevance"] == 1.0


def test_select_reads_raw_scores_and_returns_the_raw_objects():
    chunks = _chunks()
    sel = ctxselect.select(chunks, {"token_budget": 100}, relevance="minmax", method="greedy")
    assert sel.chunks[0] is chunks[0] and sel.chunks[0]["relevance"] == 12.5
    assert ctxselect.ContextSelector(budget=100, relevance="rank").select(chunks).ids


def test_the_default_refuses_raw_scores_naming_the_option():
    with pytest.raises(ctxselect.InputError, match=r"candidate 'c0', field 'relevance': expected a number in "
                                                   r"\[0, 1\] \(raw scores: relevance='minmax', 'sigmoid' or 'rank'\)"):
        ctxselect.select(_chunks(), {"token_budget": 100})
    with pytest.raises(ctxselect.InputError, match="field 'relevance': expected one of as_is, minmax, sigmoid, rank"):
        ctxselect.select(_chunks(), {"token_budget": 100}, relevance="zscore")
    with pytest.raises(ctxselect.InputError, match="candidate 'c0', field 'relevance': expected a finite number"):
        ctxselect.select([dict(_chunks()[0], relevance="high")], {"token_budget": 100}, relevance="minmax")


def test_minmax_over_a_range_wider_than_the_largest_float():
    """1e308 - (-1e308) is inf: every score became nan (or 0) and select() refused its own output
    ("expected a number in [0, 1] ... found nan"); the range is now halved first (exact)."""
    big = 1.7976931348623157e308
    chunks = [{"id": "a", "relevance": 1e308, "tokens": 5}, {"id": "b", "relevance": -1e308, "tokens": 5},
              {"id": "c", "relevance": 0.0, "tokens": 5}, {"id": "d", "relevance": big, "tokens": 5},
              {"id": "e", "relevance": -big, "tokens": 5}]
    out = [c["relevance"] for c in normalise_relevance(chunks, Relevance.MINMAX)]
    assert out == [pytest.approx(0.5 + 1e308 / big / 2), pytest.approx(0.5 - 1e308 / big / 2), 0.5, 1.0, 0.0]
    assert [c["relevance"] for c in normalise_relevance(chunks[:3], Relevance.MINMAX)] == [1.0, 0.0, 0.5]
    sel = ctxselect.select(chunks[:3], {"token_budget": 10}, "q", "greedy", relevance="minmax")
    assert sel.ids == ["a", "c"]
