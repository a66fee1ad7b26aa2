"""Query-aware signals and the default objective's use of them."""

import math

import pytest

import ctxselect
from ctxselect.features.query_terms import query_features
from ctxselect.text.words import content_terms, years_in


def cand(cid, text, relevance=0.5, **kw):
    return {"id": cid, "source": kw.pop("source", "wiki"), "tokens": kw.pop("tokens", 20),
            "relevance": relevance, "text": text, **kw}


def test_text_helpers():
    assert content_terms("The Rivers of Zimbabwe, and its waterfalls!") == {"river", "zimbabwe", "waterfall"}
    assert years_in("From Aug 2017 to 2018, not 12345 or 999") == [2017, 2018]


def test_time_match_values():
    packed = ctxselect.pack([cand("in", "He served there in 2004."),
                             cand("around", "He served from 1999 to 2010."),
                             cand("near", "He moved in 2008."),
                             cand("none", "No years here.")], {"token_budget": 100})
    f = query_features(packed, "Where did he serve from 2004 to 2005?")
    assert f.time_match.tolist() == pytest.approx([1.0, 0.8, math.exp(-1.0), 0.0])
    assert query_features(packed, "Where did he serve?").time_match.tolist() == [0, 0, 0, 0]


def test_source_title_and_terms():
    packed = ctxselect.pack([
        cand("a", "Bubye River is a tributary of the Limpopo in Zimbabwe.", 1.0, title="Bubye River"),
        cand("b", "Victoria Falls is a waterfall on the Zambezi.", 0.3, title="Zimbabwe"),
        cand("c", "Other text about rivers.", 0.4, title="Roaring River", source="The Verge"),
    ], {"token_budget": 100})
    f = query_features(packed, "What waterfall is in the country of the Bubye River, says The Verge?")
    assert f.source_match.tolist() == [0.0, 0.0, 1.0]
    assert f.title_link[1] == 1.0  # "Zimbabwe" is named by the most relevant chunk
    assert set(f.terms) == {"bubye", "river", "waterfall"}  # question words no candidate has are dropped
    assert f.covers[1, f.terms.index("waterfall")] and not f.covers[0, f.terms.index("waterfall")]
    assert f.term_weight.sum() == pytest.approx(1.0)
    empty = query_features(packed, None)
    assert empty.terms == () and empty.covers.shape == (3, 0)


def test_default_objective_prefers_the_chunk_in_the_asked_years():
    cands = [cand("top", "The company ran a channel from 2009 to 2011 under another owner.", 1.0, tokens=60),
             cand("gold", "In 2017 the parent company GMM bought the channel.", 0.6, tokens=60),
             cand("other", "The channel broadcasts shows at 8 pm.", 0.5, tokens=60)]
    reqs = {"token_budget": 70}
    query = "Who owned the channel from 2017 to 2018?"
    assert ctxselect.select(cands, reqs, method="greedy").ids == ["top"]
    assert ctxselect.select(cands, reqs, query=query).ids == ["gold"]
    assert ctxselect.select(cands, reqs).ids == ["top"]  # without the question, relevance decides


def test_sharpening_keeps_one_strong_chunk_over_two_weak_ones():
    cands = [cand("strong", "alpha", 0.9, tokens=100), cand("weak1", "beta", 0.5, tokens=50),
             cand("weak2", "gamma", 0.5, tokens=50)]
    reqs = {"token_budget": 100}
    assert ctxselect.select(cands, reqs).ids == ["strong"]  # 0.9^4 = 0.66 > 2 x 0.5^4 = 0.125
    assert sorted(ctxselect.select(cands, reqs, weights={"sharpen": 1}).ids) == ["weak1", "weak2"]


def test_relative_freshness_keeps_old_but_equal_candidates():
    cands = [cand(str(k), f"text {k}", 0.8, timestamp="2023-01-01") for k in range(3)]
    reqs = {"token_budget": 100, "now": "2026-11-01"}
    sel = ctxselect.select(cands, reqs)
    assert len(sel.ids) == 3 and "gate" in sel.relaxed  # the gate's absolute freshness cannot pass
    absolute = ctxselect.select(cands, reqs, weights={"relative_freshness": 0})
    assert absolute.ids == []  # every value is below the token cost
    assert any("freshness" in line for line in sel.infeasible)
