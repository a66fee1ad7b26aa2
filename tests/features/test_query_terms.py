"""Query-aware signals: time match, source and title links, the question's terms."""

import math

import pytest

import ctxselect
from ctxselect.features.query_terms import query_features


def cand(cid, text, relevance=0.5, **kw):
    return {"id": cid, "source": kw.pop("source", "wiki"), "tokens": kw.pop("tokens", 20),
            "relevance": relevance, "text": text, **kw}


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


