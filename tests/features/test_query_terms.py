"""Query-aware signals: time match, source and title links, the question's terms.

The compiled path (ctxselect/kernels/words.py, terms.py and years.py through ``query_features``,
its probes found by ``query_features`` itself and by ``signals``) must equal the plain-Python
twin, tests/naive/query_terms.py, the implementation it replaced: on fixed inputs, edge inputs,
drawn candidates (hypothesis) and generated queries, below and above the parallel cut-off.
"""

import math
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.evaluate.generate import generate_queries
from ctxselect.features import query_terms
from ctxselect.features.query_terms import query_features
from tests.kernels.test_terms import ASCII_WORDS, NON_WORD, UNICODE_WORDS, YEARS, texts
from tests.naive.query_terms import naive_query_features


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


# -- the compiled path against the plain-Python twin (tests/naive/query_terms.py) -------------------

FIELDS = ("expansion", "title_link", "time_match", "source_match")


def assert_same(packed, query, feedback=1, via_signals=True):
    """query_features equals the twin: the same terms, covers, and floats to 1e-12; and so does it
    with the probes that signals() found (``via_signals``)."""
    got = query_features(packed, query, feedback=feedback)
    want = naive_query_features(packed, query, feedback=feedback)
    n = packed.n
    assert got.terms == want["terms"]
    assert got.covers.dtype == np.bool_ and got.covers.shape == (n, len(want["terms"]))
    assert got.covers.tolist() == want["covers"]
    assert got.term_weight.dtype == np.float64 and got.term_weight.shape == (len(want["terms"]),)
    np.testing.assert_allclose(got.term_weight, want["term_weight"], rtol=1e-12, atol=1e-12)
    for name in FIELDS:
        value = getattr(got, name)
        assert value.dtype == np.float64 and value.shape == (n,), name
        np.testing.assert_allclose(value, want[name], rtol=1e-12, atol=1e-12, err_msg=name)
    valid = query is None or not any(0xD800 <= ord(c) <= 0xDFFF for c in query)  # signals() refuses the rest
    # the hits signals() finds: with the signatures, or alone
    for similarity in ("minhash", "none") if valid and via_signals else ():
        probes = ctxselect.signals(packed, query, similarity=similarity, claims=False).query_probes
        assert (probes is None) == (not query or not query.strip() or n == 0)
        assert probes is None or probes.hits.shape == (n, len(probes.probes))
        again = query_features(packed, query, feedback=feedback, probes=probes)
        assert again.terms == got.terms and again.covers.tolist() == got.covers.tolist()
        for name in ("term_weight", *FIELDS):
            np.testing.assert_array_equal(getattr(again, name), getattr(got, name), err_msg=name)
    return got


def packed_of(texts, titles=None, sources=None, relevance=None, **requirements):
    titles = titles or [None] * len(texts)
    cands = []
    for i, text in enumerate(texts):
        c = cand(f"c{i}", text, relevance[i] if relevance else (i * 37 % 100) / 100,
                 source=sources[i] if sources else "wiki")
        if titles[i] is not None:
            c["title"] = titles[i]
        cands.append(c)
    return ctxselect.pack(cands, {"token_budget": 100, **requirements})


EDGE_TEXTS = ["Bubye River is a tributary of the Limpopo in Zimbabwe.", "", "the and of it was",
              "Victoria Falls is a waterfall on the Zambezi, 1855.", "Cities and rivers of Zimbabwe",
              "café Straße İstanbul 中文 東京\u00a0naïve 😀 ©", "1999 to 2010 and 19٩٩; ١٩٩٩",
              "ΑΣ'Β ΟΔΟΣ.ΚΑΙ σοφία"]


@pytest.mark.parametrize("query", [None, "", "   ", "the and of", "unknown words only zzz",
                                   "Which waterfall in Zimbabwe?", "rivers of Zimbabwe from 1990 to 2000",
                                   "café istanbul 中文 naïve", "ας οδος και", "1855",
                                   "Bubye River 2010 1999 1500"])
def test_fixed_queries_match_twin(query):
    packed = packed_of(EDGE_TEXTS, titles=["Bubye River", None, 7, "Zimbabwe", "", "Café", "ΟΔΟΣ", ["x"]],
                       sources=["wiki", "The Verge", "Limpopo Times", "abc", "a.b.c.d", "wiki", "wiki", "wiki"])
    assert_same(packed, query)


@pytest.mark.parametrize("feedback", [0, 1, 3, 50])
def test_feedback_sizes_match_twin(feedback):
    packed = packed_of(EDGE_TEXTS * 3, relevance=[0.5] * 24)  # ties: the stable order decides
    assert_same(packed, "Which waterfall in Zimbabwe, the rivers of 1999?", feedback)


def test_edge_inputs_match_twin():
    assert query_features(packed_of([]), "rivers").covers.shape == (0, 0)
    assert_same(packed_of(["Only one candidate about rivers."]), "rivers")
    assert_same(packed_of(["", "", ""]), "rivers")
    assert_same(packed_of(["the and of", "it was the"]), "the rivers")
    assert_same(packed_of(["rivers"] * 4), "rivers")  # every candidate has the term: df = n
    assert_same(packed_of(["a b c", "x y"], titles=["a", "ab\ud800cd"]), "ab\ud800cd")  # a surrogate title
    f = assert_same(packed_of(["no match here"]), "rivers")
    assert f.terms == () and f.covers.shape == (1, 0) and f.term_weight.shape == (0,)


def test_capital_sigma_texts_take_the_python_path(monkeypatch):
    calls = []
    original = query_terms.content_terms
    monkeypatch.setattr(query_terms, "content_terms", lambda text: calls.append(text) or original(text))
    texts = ["ΑΣ'Β", "σοφία ς", "plain", "ΟΔΟΣ.ΚΑΙ", "Σ."]  # replaced rows: first, inner, last (empty)
    packed = packed_of(texts, titles=["ΣΑ'Σ", "σ", None, None, None])
    f = assert_same(packed, "ας οδος σοφία")
    assert set(f.terms) == {"ας", "οδος", "σοφία"}
    # content_terms ran on the question and on the texts and titles with a Σ, nothing else (once for
    # query_features' own scan, once each for the scans of signals() with and without signatures)
    assert sorted(calls) == sorted(["ας οδος σοφία", "ΑΣ'Β", "ΟΔΟΣ.ΚΑΙ", "Σ.", "ΣΑ'Σ"] * 3)


def test_digit_table_is_the_regex_digit_class():
    table = query_terms._digit_values()
    digit = re.compile(r"\d")
    want = {cp: int(chr(cp)) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF and digit.match(chr(cp))}
    assert {int(cp): int(table[cp]) for cp in np.flatnonzero(table >= 0)} == want
    assert len(want) > 600  # precondition: Unicode digits, not only ASCII


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_drawn_candidates_match_twin(data):
    n = data.draw(st.integers(1, 8))
    words = st.sampled_from(ASCII_WORDS + UNICODE_WORDS + YEARS + NON_WORD)
    batch = data.draw(st.lists(texts, min_size=n, max_size=n))
    titles = data.draw(st.lists(st.one_of(st.none(), st.just(""), words, texts, st.integers()), min_size=n, max_size=n))
    sources = data.draw(st.lists(st.sampled_from(["wiki", "The Verge", "abc", "New-York Times", "café"]),
                                 min_size=n, max_size=n))
    relevance = data.draw(st.lists(st.sampled_from([0.0, 0.3, 0.5, 1.0]), min_size=n, max_size=n))
    found = [w for t in batch + [t for t in titles if isinstance(t, str)] for w in t.split()]
    parts = data.draw(st.lists(st.one_of(words, texts, st.sampled_from(found or ["x"])), max_size=8))
    query = " ".join(parts + data.draw(st.sampled_from([[], ["from 1990 to 2005"], ["The Verge"]])))
    assert_same(packed_of(batch, titles, sources, relevance), query, data.draw(st.sampled_from([1, 2])))


def test_generated_queries_match_twin():
    for q in generate_queries(queries=3, candidates=120, seed=5):
        packed = ctxselect.pack(q.candidates, q.requirements)
        assert_same(packed, q.query)
        assert_same(packed, q.query + " in 2019 or 2021")


def test_large_inputs_take_the_parallel_kernels_and_match_twin(monkeypatch):
    """Above the cut-off (bytes of text) the parallel kernels run; below it the serial twins."""
    monkeypatch.setattr(query_terms, "SERIAL_BYTES", 200_000)  # the real cut-off would need 32 MB of text
    calls = []
    for name in ("_text_terms", "_text_terms_serial", "_scan_words", "_scan_words_serial", "_membership",
                 "_membership_serial", "_time_match", "_time_match_serial"):
        kernel = getattr(query_terms, name)
        monkeypatch.setattr(query_terms, name, lambda *a, _k=kernel, _n=name: calls.append(_n) or _k(*a))
    rng = random.Random(1)
    pool = ASCII_WORDS + UNICODE_WORDS + YEARS
    big = [" ".join(rng.choice(pool) for _ in range(40)) for _ in range(1200)]
    packed = packed_of(big, titles=[rng.choice(pool) for _ in big])
    assert len(packed.text_buffer[0]) > query_terms.SERIAL_BYTES  # precondition
    assert_same(packed, "rivers of Zimbabwe, İstanbul and 中文 from 1999 to 2001", via_signals=False)
    # the texts: parallel; the most relevant text's terms and the titles' (small): serial
    assert sorted(calls) == ["_membership", "_membership_serial", "_scan_words", "_text_terms_serial",
                             "_text_terms_serial", "_time_match"]
    calls.clear()
    assert_same(packed_of(big[:20]), "rivers of Zimbabwe from 1999 to 2001", via_signals=False)
    assert sorted(calls) == ["_scan_words_serial", "_text_terms_serial", "_time_match_serial"]


def test_markup_control_characters_and_a_sigma_text_on_top_match_twin():
    """Markup, control characters and zero-width characters in texts; the most relevant text has a
    capital Σ (its terms, which feed the expansion, come from the Python path)."""
    batch = ["<p>Rivers of <b>Zimbabwe</b></p>\x00\x07 &amp; cities", "ΟΔΟΣ ΚΑΙ σοφία rivers\u200bof İstanbul",
             "tab\there\r\nnew\x0bline \x1f rivers", "ΑΣ'Β and cities of Zimbabwe", "plain text about whos"]
    for top in range(len(batch)):
        relevance = [1.0 if i == top else 0.2 for i in range(len(batch))]
        assert_same(packed_of(batch, relevance=relevance), "rivers of ΟΔΟΣ <b>cities</b> σοφία\x00")
        assert_same(packed_of(batch, relevance=relevance), "the and of who")  # stopwords only
        assert_same(packed_of(batch, relevance=relevance), "")


def test_titles_are_read_only_when_a_candidate_has_extra_fields():
    """No candidate with ``extra``: no title buffer; extra fields without a title, or a title that is
    not a string: as no title."""
    batch = ["Bubye River in Zimbabwe", "Victoria Falls on the Zambezi", "rivers"]
    assert query_terms._titles(packed_of(batch).candidates) is None
    packed = ctxselect.pack([cand("a", batch[0], 0.9, note="x"), cand("b", batch[1], title=3),
                             cand("c", batch[2], title="Zambezi")], {"token_budget": 100})
    assert query_terms._titles(packed.candidates) == ["", "", "Zambezi"]
    assert_same(packed, "Which river in Zimbabwe, the Zambezi?")
    packed = ctxselect.pack([cand("a", batch[0], 0.9, note="x"), cand("b", batch[1], title=None)],
                            {"token_budget": 100})
    assert query_terms._titles(packed.candidates) == ["", ""]
    assert_same(packed, "Which river in Zimbabwe?")


def test_probes_are_reused_only_for_their_own_candidates_question_and_feedback():
    """Hits found by signals() for other candidates (even as many, of other texts), another question
    or another feedback are never read: the features equal a fresh computation."""
    ours = packed_of(["rivers of Zimbabwe", "Victoria Falls", "the Zambezi river", "cities"])
    other = packed_of(["nothing alike", "Victoria Falls", "more text", "rivers and rivers"])
    question = "Which rivers of Zimbabwe?"
    fresh = query_features(ours, question)
    for probes, feedback in ((ctxselect.signals(other, question).query_probes, 1),  # same n, other texts
                             (ctxselect.signals(ours, "Victoria Falls").query_probes, 1),
                             (ctxselect.signals(ours, question).query_probes, 2)):
        got = query_features(ours, question, probes=probes, feedback=feedback)
        want = fresh if feedback == 1 else query_features(ours, question, feedback=2)
        assert got.terms == want.terms and got.covers.tolist() == want.covers.tolist()
        for name in ("term_weight", *FIELDS):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    stale = ctxselect.signals(other, question).query_probes
    assert query_features(ours, question, probes=stale).covers.tolist() != query_features(
        other, question).covers.tolist()  # not vacuous: the other candidates' hits differ


def test_select_scans_for_the_question_only_when_a_weight_reads_it_and_keeps_no_hits(monkeypatch):
    from ctxselect.selection.api import prepare

    calls = []
    original = query_terms.query_probes
    monkeypatch.setattr(query_terms, "query_probes", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    from ctxselect.features import compute
    monkeypatch.setattr(compute, "query_probes", query_terms.query_probes)
    cands = [cand(f"c{i}", f"rivers of Zimbabwe number {i}", source="wiki") for i in range(6)]
    silent = dict.fromkeys(("query_coverage", "expansion", "title_link", "time_match", "source_match"), 0.0)
    problem = prepare(cands, {"token_budget": 100}, "rivers?", weights=silent)
    assert not any(calls)  # no weight reads the question: its terms are not looked for
    problem = prepare(cands, {"token_budget": 100}, "rivers?")
    assert [q for q in calls if q] == ["rivers?"]  # once, in the signatures' pass; query_features reuses the hits
    assert problem.signals.query_probes is None  # read, then not kept in the problem
