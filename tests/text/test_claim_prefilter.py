"""The compiled prefilter of find_claim_conflicts (ctxselect/text/claim_keys.py): its entries cover
every join key Python's claims have, and the conflicts found with it are the ones found without it
(tests/naive/claims.py ``naive_find_claim_conflicts``, the implementation before it), in the same
order, for drawn texts and sets of texts whose facts repeat."""

import contextlib
import math
import re

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ctxselect.evaluate.generate import generate_queries
from ctxselect.features.contradictions import detect
from ctxselect.kernels.claims import _is_space
from ctxselect.packing import text_buffer
from ctxselect.text import claims as claims_module
from ctxselect.text.claim_keys import candidate_keys, exotic_code_points
from ctxselect.text.claims import MAX_CLAIM_CHARS, find_claim_conflicts
from tests.naive.claims import claim_entries, covered, naive_find_claim_conflicts
from tests.text.claim_texts import CONTEXTS, EXOTIC, claim_texts, fact_text_sets


@contextlib.contextmanager
def claim_chars(limit):
    """MAX_CLAIM_CHARS set to ``limit`` (cuts happen in short texts), the claim cache cleared."""
    saved = claims_module.MAX_CLAIM_CHARS
    claims_module.MAX_CLAIM_CHARS = limit
    claims_module._claims_of.cache_clear()
    try:
        yield
    finally:
        claims_module.MAX_CLAIM_CHARS = saved
        claims_module._claims_of.cache_clear()


def kernel_entries(text, need, max_chars):
    buf, offsets = text_buffer([text])
    indptr, words, units, flags = candidate_keys(buf, offsets[:-1], offsets[1:], need=need, max_chars=max_chars)
    return set(zip(words.tolist(), units.tolist())), int(flags[0])


def same(found, want):
    """Equal dicts, keys in the same order, pairs in the same order."""
    return found == want and [list(d) for d in found] == [list(d) for d in want]


@settings(max_examples=250, deadline=None)
@given(claim_texts(), st.sampled_from([3, 4, 5]), st.sampled_from([MAX_CLAIM_CHARS, 90, 25]))
def test_kernel_entries_cover_every_join_key_python_reads(text, words, limit):
    with claim_chars(limit):
        entries, flag = kernel_entries(text, words, limit)
        want = claim_entries(text, words)
    if flag == 0:
        assert covered(want, entries), (sorted(want), sorted(entries))
    else:  # exotic: read in Python
        assert any(ord(c) in set(exotic_code_points().tolist()) for c in text.lower())


def test_kernel_entries_cover_the_boundaries():
    """Systematically around each cut: the unit's reach after a number, the window before a start
    (a word cut by it, a stopword cut into a content word), and the last character read."""
    texts = []
    for gap in range(25, 46):
        for value in ("5", "5.25", "5 million", "5%", "2021"):
            texts.append("alpha beta gamma delta " + value + " " * gap + "units more")
            texts.append("alpha beta gamma delta " + value + " " * (gap - 20) + "the of " * 3 + "units")
        for stem in ("x" * 60, "the" * 20, "themselves " * 6, "a " * 30):
            texts.append(stem + " " * (gap - 25) + "beta gamma delta 5 units")
            texts.append(stem + "ab cd" + " " * (gap - 25) + "gamma—March 3, 2021 and 3 March, 2021")
    for limit in (MAX_CLAIM_CHARS, 60, 40):
        for text in texts:
            with claim_chars(limit):
                entries, flag = kernel_entries(text, 4, limit)
                assert flag == 0 and covered(claim_entries(text), entries), text
    assert sum(bool(claim_entries(t)) for t in texts) > len(texts) // 2


@settings(max_examples=500, deadline=None)
@given(fact_text_sets(), st.sampled_from([4, 4, 4, 3, 5, 2]), st.sampled_from([MAX_CLAIM_CHARS, MAX_CLAIM_CHARS, 120, 40]),
       st.data())
def test_conflicts_with_the_prefilter_are_the_ones_without(texts, words, limit, data):
    titles = data.draw(st.none() | st.lists(st.sampled_from(["A", "B", None, ("A", "x"), ("A", "y")]),
                                            min_size=len(texts), max_size=len(texts)))
    with claim_chars(limit):
        found = find_claim_conflicts(texts, min_context_words=words, titles=titles)
        want = naive_find_claim_conflicts(texts, min_context_words=words, titles=titles)
        claims = [claims_module.extract_claims(t) for t in texts]
        joined = [sum(map(len, claims_module._aligned_claims(claims, 90.0, words, scoped).values()))
                  for scoped in (None, claims_module.scope_reader(texts, titles))]
    if joined[0]:  # the scope test is exercised: it drops some joined pairs
        event("scope test dropped a pair" if joined[1] < joined[0] else "scope test kept every pair")
    event("joined" if want[0] or want[1] else "nothing joined")
    assert same(found, want)


def test_the_drawn_sets_do_join():
    """The equality above is not vacuous: the fact sets make conflicts and agreements."""
    import random

    from tests.text.claim_texts import seeded_fact_text

    rng = random.Random(3)
    sets = [[seeded_fact_text(rng, 6) for _ in range(8)] for _ in range(60)]  # scopes make fewer sets conflict
    joined = [find_claim_conflicts(texts) for texts in sets]
    assert sum(bool(c) for c, _ in joined) >= 5 and sum(bool(a) for _, a in joined) >= 5
    for texts, result in zip(sets, joined):
        assert same(result, naive_find_claim_conflicts(texts))


def test_long_texts_cut_where_python_stops_reading():
    """Claims straddling MAX_CLAIM_CHARS (50,000) and exotic characters just past what is read."""
    fact = "the storm outage in the northern district affected {} people"
    texts = []
    for shift in (-70, -60, -45, -5, 0, 5):
        head = "filler words " * ((MAX_CLAIM_CHARS + shift - len(fact) + 20) // 13)
        for value in (3559, 4000):
            texts.append(head + fact.format(value) + " and more " * 20)
            texts.append(head + fact.format(value) + " " + EXOTIC[0] + " tail")
            texts.append(head + "x" * 140 + fact.format(value) + EXOTIC[3])
    claims_module._claims_of.cache_clear()
    found = find_claim_conflicts(texts)
    assert found[0] or found[1]
    assert same(found, naive_find_claim_conflicts(texts))


def test_generated_queries_are_equal_and_most_texts_skip_python(monkeypatch):
    texts = [c.text for c in generate_queries(queries=1, candidates=400, seed=2)[0].candidates]
    read = []
    reader = claims_module._claims_of  # every text read in Python goes through the cache
    claims_module._claims_of.cache_clear()
    monkeypatch.setattr(claims_module, "_claims_of", lambda text, *hints: read.append(text) or reader(text, *hints))
    found = find_claim_conflicts(texts, buffer=text_buffer(texts))
    monkeypatch.undo()
    assert same(found, naive_find_claim_conflicts(texts))
    assert 0 < len(read) < len(texts) // 4  # only texts sharing a join key are read in Python


def test_the_buffer_argument_and_the_inputs_the_plain_path_takes():
    texts = ["the storm outage in the northern district affected 3,559 people",
             "the storm outage in the northern district affected 10,000 people", "", "no numbers here"]
    want = naive_find_claim_conflicts(texts)
    assert want[0]
    assert same(find_claim_conflicts(texts, buffer=text_buffer(texts)), want)
    assert same(find_claim_conflicts(tuple(texts)), want)
    assert same(find_claim_conflicts(t for t in texts), want)
    with pytest.raises(ValueError, match="buffer holds"):
        find_claim_conflicts(texts, buffer=text_buffer(texts[:2]))
    for words in (2, 2.5, 3.5, math.inf, math.nan, True):
        assert same(find_claim_conflicts(texts, min_context_words=words),
                    naive_find_claim_conflicts(texts, min_context_words=words))
    surrogate = texts + ["the storm outage in the northern district affected 7 people \ud800"]
    assert same(find_claim_conflicts(surrogate), naive_find_claim_conflicts(surrogate))
    with pytest.raises(TypeError):
        find_claim_conflicts(texts + [5])


def test_claim_pairs_passes_the_members_rows_of_the_buffer(monkeypatch):
    texts = [f"the storm outage in the {w} district affected {v} people" for w in CONTEXTS[0].split()
             for v in (3559, 4000)] + ["filler"] * 5
    red_i, red_j = np.array([0, 2, 4], np.int64), np.array([1, 3, 12], np.int64)
    monkeypatch.setattr(detect, "CLAIM_ALL_TEXTS_LIMIT", 3)
    with_buffer = detect.claim_pairs(texts, red_i, red_j, buffer=text_buffer(texts))
    assert with_buffer[0] and with_buffer == detect.claim_pairs(texts, red_i, red_j)


def test_claim_pairs_refuses_titles_that_are_not_one_per_text_above_the_limit(monkeypatch):
    """Above the limit only the members' titles are read (through a view of their length), so the
    count is checked against all the texts first, as below it."""
    from ctxselect.errors import InputError

    texts = ["the storm outage in the northern district affected 3559 people"] * 3 + ["unrelated"]
    red_i, red_j = np.array([2], np.int64), np.array([3], np.int64)
    for limit in (100, 3):
        monkeypatch.setattr(detect, "CLAIM_ALL_TEXTS_LIMIT", limit)
        with pytest.raises(InputError, match="titles"):
            detect.claim_pairs(texts, red_i, red_j, titles=["A", "B"])
        assert detect.claim_pairs(texts, red_i, red_j, titles=["A"] * 4) == detect.claim_pairs(texts, red_i, red_j)


def test_the_exotic_code_points_are_where_the_kernel_would_misread():
    exotic = set(exotic_code_points().tolist())
    assert {0x307, 0x17F, 0x131, 0x663, 0x2003, 0xD800} <= exotic and not exotic & set(range(128))
    for cp in range(0x80, 0x10000):  # what the kernel sees of a character: its lower-case form
        c, low = chr(cp), chr(cp).lower()
        if any(ord(x) in exotic for x in low):
            continue
        assert len(low) == 1 and bool(re.match(r"\s", c)) == _is_space(ord(low)), hex(cp)
        assert not re.match(r"\d", c) and bool(re.match(r"\w", c)) == bool(re.match(r"\w", low)), hex(cp)
        assert c.isspace() == bool(re.match(r"\s", c)), hex(cp)  # str.split's whitespace is \s


def _claim_rows(claims):
    """Claims with the fields their equality leaves out (start, end)."""
    return [(c.value, c.raw, c.before, c.unit, c.kind, c.start, c.end) for c in claims]


@pytest.mark.parametrize("seed", range(4))
def test_reading_with_the_kernel_hints_reads_what_the_plain_patterns_read(seed):
    """Claims read with claim_hints (the digit and date flags, the number starts) equal the plain
    reading, positions included, on drawn texts (exotic ones read plainly), control characters,
    non-ASCII digits, texts of only numbers and empty texts."""
    import random

    from ctxselect.text.claim_keys import claim_hints
    from tests.text.claim_texts import seeded_fact_text, seeded_text

    rng = random.Random(seed)
    texts = [seeded_fact_text(rng, rng.randint(1, 8)) if rng.random() < 0.6 else seeded_text(rng, rng.randint(0, 30), 0.2)
             for _ in range(150)]
    texts += ["", "7", "1 2 3 4 5 6 7 8 9 10", "3,559 4,000 1.5 2,5", "\x00\x017\x7f 8\t9", "\u0663\u0664 people 5",
              "<p>the storm outage affected <b>3,559</b> people</p>", "2021-03-03 2021-3-4", "x-5 y—6 3 March 2021"]
    hinted = claim_hints(text_buffer(texts), None, MAX_CLAIM_CHARS, MAX_CLAIM_CHARS + 120)
    assert len(hinted) > len(texts) // 2  # most texts take the hinted path
    for k, text in enumerate(texts):
        cut = text[:MAX_CLAIM_CHARS + 120]
        if k in hinted:
            assert _claim_rows(claims_module._read_claims(cut, hinted[k])) == _claim_rows(claims_module._read_claims(cut))
    assert sum(len(claims_module._read_claims(t[:MAX_CLAIM_CHARS + 120])) for t in texts) > 100

