"""The term and year kernels against their plain-Python twins (tests/naive/query_terms.py).

The twin reads each original text with the regexes of ``ctxselect.text.words`` (words matched on
the text, then lower-cased one by one); the kernels read the lower-cased UTF-8 buffer. Texts mix
the structures that matter: stopwords, stemming cases, Unicode letters (é, ß, İ, CJK, Greek),
characters that are *not* word characters (NBSP and U+0080–U+00BF, astral letters and emoji),
Unicode digits, years and near-years, punctuation. Texts with a capital sigma Σ are the one
documented exception (their terms may differ; the kernel must flag them).

Every parallel kernel is called as the parallel dispatcher and as its serial twin. Inputs stay
small so these tests also run interpreted (``NUMBA_DISABLE_JIT=1``).
"""

import random
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxselect.kernels.terms import (
    _key_table,
    _membership,
    _membership_serial,
    _probe_table,
    _state_keys,
    _stop_bits,
)
from ctxselect.kernels.words import (
    _CHUNKS,
    _hash_each,
    _scan_words,
    _scan_words_serial,
    _text_terms,
    _text_terms_serial,
)
from ctxselect.kernels.years import _time_match, _time_match_serial
from ctxselect.packing import text_buffer
from ctxselect.text.words import STOPWORDS
from tests.helpers import signature_rows
from tests.naive.query_terms import (
    WORD,
    naive_content_terms,
    naive_term_hash,
    naive_text_terms,
    naive_time_match,
    naive_years,
)
from tests.naive.signals import FNV_OFFSET, FNV_PRIME, MASK, mix64



def probes_by(scan):
    """The word scan reading probes only (no signatures): (buf, offsets, *stopword arguments, probes)
    -> (member, sigma), as query_features calls it."""
    def text_probes(buf, offsets, *arguments):
        *stop, probes = arguments
        sig, words, member, sigma = scan(buf, offsets, 3, signature_rows(offsets, 0), *stop, *_probe_table(probes),
                                         len(probes))
        assert sig.shape == (len(offsets) - 1, 0) and not words.any()  # nothing signed
        return member, sigma
    return text_probes


_text_probes, _text_probes_serial = probes_by(_scan_words), probes_by(_scan_words_serial)
TERMS = {"parallel": _text_terms, "serial": _text_terms_serial}
TIME = {"parallel": _time_match, "serial": _time_match_serial}
MEMBERSHIP = {"parallel": _membership, "serial": _membership_serial}
PROBES = {"parallel": _text_probes, "serial": _text_probes_serial}

# -- inputs: texts built from the structures the kernels must read as the regexes do ---------------

ASCII_WORDS = ["the", "The", "THE", "and", "said", "Reports", "whose", "yourselves", "a", "I", "x", "it's",
               "cities", "Cities", "flies", "ties", "lies", "series", "classes", "boss", "gas", "bus", "his",
               "yes", "analysis", "news", "ies", "dies", "pies", "species", "ss", "sss", "s", "is", "us",
               "river", "rivers", "Zimbabwe", "w123", "2nd", "3,559", "U.S.", "e-mail", "O'Neil"]
UNICODE_WORDS = ["café", "Straße", "STRASSE", "İstanbul", "İ", "İs", "ıi", "Ωmega", "naïve", "ÀÉÎ", "×÷",
                 "中文", "東京", "Привет", "Σ", "ΑΣ", "ΣΑ", "ΟΔΟΣ", "σοφία", "λόγος", "ς", "ǅemal",
                 "Ÿves", "\u212aelvin", "\u212b", "e\u0301", "\u0301", "\ufffd", "\uffff", "\u00c0", "ﬁle",
                 "ﬀs", "ŉ"]
NON_WORD = ["\u00a0", "\u0080", "\u00bf", "\u00b5", "\u00aa", "©", "«", "»", "😀", "𐐀", "𝐀", "🇫🇷",
            "\U0001d7ce"]
DIGITS = ["٣", "۵", "३", "０", "\U0001d7ce", "٠١٢٣", "১৯৯৯"]
YEARS = ["1999", "2024", "1500", "2099", "1499", "2100", "12345", "199", "0199", "19٩٩", "1٩99", "١٩٩٩",
         "２０２０", "1999s", "x1999", "1999-2001", "19991", "2001:", "1\u00a02000"]
PUNCT = ["", " ", " ", " ", ".", ", ", "'", "-", "\n", "\t", "—", "…", "/", ":", "’", "\u00a0"]

pieces = st.one_of(
    st.sampled_from(ASCII_WORDS),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789", min_size=1, max_size=9),
    st.sampled_from(UNICODE_WORDS),
    st.sampled_from(NON_WORD + DIGITS + YEARS),
    st.integers(0, 99999).map(str),
    st.characters(blacklist_categories=("Cs",)),
)
texts = st.lists(st.tuples(pieces, st.sampled_from(PUNCT)), max_size=20).map(
    lambda parts: "".join(a + b for a, b in parts))


def random_text(rng, words):
    pool = ASCII_WORDS + UNICODE_WORDS + NON_WORD + DIGITS + YEARS
    return "".join(rng.choice(pool) + rng.choice(PUNCT) for _ in range(words))


EDGE_TEXTS = ["", "   ", "a", "ab", "the and of", " ".join(sorted(STOPWORDS)), "x " * 50, "cities flies ties",
              "İ", "😀😀", "\u00a0\u00a0word\u00a0", "中", "中文", "1999", "The 1999 report, 2024!", "éé",
              "ends with s", "boss bosses", "ΑΣ'Β σς"]


buffer_of = text_buffer  # the kernels' input: lower-cased UTF-8 bytes (at least one) and offsets


def stop_arguments():
    """The stopword arguments of the terms kernel, built from ``STOPWORDS``."""
    words = sorted(STOPWORDS)
    buf, offsets = buffer_of(words)
    hashes = _hash_each(buf, offsets)
    return (_stop_bits(hashes), *_key_table(hashes, 4), buf, offsets, max(len(w) for w in words))


def rows_of(indptr, hashes):
    return [sorted(hashes[indptr[t]:indptr[t + 1]].tolist()) for t in range(len(indptr) - 1)]


def assert_terms_match(kernel, batch):
    indptr, hashes, sigma = kernel(*buffer_of(batch), *stop_arguments())
    assert indptr.dtype == np.int64 and hashes.dtype == np.uint64 and len(indptr) == len(batch) + 1
    rows = rows_of(indptr, hashes)
    for t, text in enumerate(batch):
        assert len(rows[t]) == len(set(rows[t])), text  # distinct within a row
        assert bool(sigma[t]) == ("σ" in text.lower() or "ς" in text.lower()), text
        if "Σ" not in text:  # the one exception, routed to Python by the caller
            assert rows[t] == naive_text_terms(text), (t, text)


# -- the Unicode facts the kernels rely on -----------------------------------------------------------

def test_lowercasing_first_changes_no_word_and_no_digit_except_capital_sigma():
    """Over all of Unicode: lower-casing never turns a word character into a non-word one or back,
    never touches a decimal digit, and only Σ lower-cases differently by its neighbours."""
    changed = [c for c in map(chr, range(0x110000)) if not 0xD800 <= ord(c) <= 0xDFFF and c.lower() != c]
    assert 1000 < len(changed) < 3000  # precondition: the loop saw the cased letters
    for c in changed:
        lowered = c.lower()
        assert all(bool(WORD.fullmatch(x)) == bool(WORD.fullmatch(c)) for x in lowered), hex(ord(c))
        assert not c.isdecimal() and not any(x.isdecimal() for x in lowered), hex(ord(c))
    contexts = [("", ""), ("a", ""), ("", "a"), ("a'", ""), ("a", "a"), ("a.", ".a")]
    sensitive = {c for c in changed for before, after in contexts
                 if (before + c + after).lower() != before.lower() + c.lower() + after.lower()}
    assert sensitive == {"Σ"}


# -- terms -------------------------------------------------------------------------------------------

def test_words_are_the_one_word_over_all_of_unicode():
    """Each code point between "ab" and "cd": the kernel finds one term where ``model.tokens.WORD``
    finds one word in the lower-cased text, two where it finds two, for every code point."""
    from ctxselect.model.tokens import WORD as THE_WORD

    texts = [f"ab{chr(cp)}cd" for cp in range(1, 0x110000)]
    indptr, _, _ = _text_terms_serial(*buffer_of(texts), *stop_arguments())
    want = np.array([len(THE_WORD.findall(t.lower())) for t in texts])
    wrong = np.flatnonzero(np.diff(indptr) != want)
    assert wrong.size == 0, [hex(cp + 1) for cp in wrong[:10]]
    assert set(want.tolist()) == {1, 2}  # precondition: both joiners and separators were seen


@pytest.mark.parametrize("kernel", TERMS.values(), ids=TERMS.keys())
def test_terms_match_twin_on_fixed_and_random_texts(kernel):
    rng = random.Random(4)
    assert_terms_match(kernel, EDGE_TEXTS + [random_text(rng, rng.randint(0, 30)) for _ in range(40)])


@pytest.mark.parametrize("kernel", TERMS.values(), ids=TERMS.keys())
def test_terms_of_no_text_and_of_empty_texts(kernel):
    buf = np.zeros(1, dtype=np.uint8)
    indptr, hashes, sigma = kernel(buf, np.zeros(1, dtype=np.int64), *stop_arguments())
    assert indptr.tolist() == [0] and len(hashes) == 0 and len(sigma) == 0
    indptr, hashes, sigma = kernel(buf, np.zeros(4, dtype=np.int64), *stop_arguments())
    assert indptr.tolist() == [0, 0, 0, 0] and not sigma.any()


def test_stemming_and_filters_by_characters_not_bytes():
    """Lengths count characters: "éés" (3 characters, 5 bytes) keeps its s; "ééés" drops it; "ié"
    is a word of two characters; one-character words go, whatever their byte length; -sses
    becomes -ss only when three characters remain ("classes"), else -s goes ("bosses")."""
    batch = ["éés", "ééés", "ééies", "éééies", "ié", "中", "ß", "cities", "ties", "classes", "asses",
             "bosses", "éésses", "ééésses", "address", "ss"]
    indptr, hashes, _ = _text_terms_serial(*buffer_of(batch), *stop_arguments())
    rows = rows_of(indptr, hashes)
    expected = [{"éés"}, {"ééé"}, {"ééie"}, {"éééy"}, {"ié"}, set(), set(), {"city"}, {"tie"}, {"class"},
                {"asse"}, {"bosse"}, {"éésse"}, {"éééss"}, {"address"}, {"ss"}]
    assert rows == [sorted(naive_term_hash(t) for t in terms) for terms in expected]
    assert [naive_content_terms(t) for t in batch] == expected  # the twin agrees on the strings


def test_capital_sigma_is_flagged_where_the_kernel_and_the_regex_differ():
    text = "ΑΣ'Β and ΟΔΟΣ.ΚΑΙ"
    indptr, hashes, sigma = _text_terms_serial(*buffer_of([text]), *stop_arguments())
    assert sigma.tolist() == [True]
    assert rows_of(indptr, hashes)[0] != naive_text_terms(text)  # why the caller routes it to Python


def test_parallel_and_serial_terms_are_identical_on_many_texts():
    rng = random.Random(9)
    batch = [random_text(rng, rng.randint(0, 25)) for _ in range(97)]
    got = [k(*buffer_of(batch), *stop_arguments()) for k in (_text_terms, _text_terms_serial)]
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kernel", TERMS.values(), ids=TERMS.keys())
def test_terms_of_texts_sharing_a_chunk(kernel):
    """More texts than chunks: a chunk reads several texts with one table of seen terms, and a
    term seen in one text must still count in the next."""
    rng = random.Random(12)
    batch = [" ".join(rng.choice(["river", "rivers", "city", "cities", "Zimbabwe", "the", "中文"])
                      for _ in range(rng.randint(0, 6))) for _ in range(3 * _CHUNKS + 5)]
    assert_terms_match(kernel, batch)


def test_stopwords_are_matched_by_bytes_not_only_by_hash():
    """A word whose hash is a stopword's but whose bytes differ stays (a collision, forced here by
    filing "river"'s hash under the bytes of "rivet")."""
    buf, offsets = buffer_of(["rivet"])
    hashes = np.array([naive_term_hash("river")], dtype=np.uint64)
    fake = (_stop_bits(hashes), *_key_table(hashes, 4), buf, offsets, 5)
    indptr, got, _ = _text_terms_serial(*buffer_of(["river rivet", "the"]), *fake)
    assert rows_of(indptr, got) == [sorted([naive_term_hash("river"), naive_term_hash("rivet")]),
                                    [naive_term_hash("the")]]
    real = (_stop_bits(hashes), *_key_table(hashes, 4), *buffer_of(["river"]), 5)
    indptr, got, _ = _text_terms_serial(*buffer_of(["river rivet"]), *real)
    assert rows_of(indptr, got) == [[naive_term_hash("rivet")]]


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6))
def test_terms_match_twin_on_drawn_texts(batch):
    assert_terms_match(_text_terms_serial, batch)


def test_hash_each_matches_twin():
    terms = ["", "a", "river", "café", "中文", "😀", "x" * 300]
    assert _hash_each(*buffer_of(terms)).tolist() == [naive_term_hash(t) for t in terms]


# -- years -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def digit_value():
    """Decimal value of each code point that is a decimal digit (``re``'s ``\\d``), else -1."""
    table = np.full(0x110000, -1, dtype=np.int8)
    for cp in range(0x110000):
        c = chr(cp)
        if c.isdecimal():
            table[cp] = unicodedata.decimal(c)
    return table


SPANS = [(2000, 2000), (1990, 2005), (1500, 1500), (2099, 2099), (1800, 1900), (2030, 2040)]


@pytest.mark.parametrize("kernel", TIME.values(), ids=TIME.keys())
def test_time_match_matches_twin(kernel, digit_value):
    rng = random.Random(6)
    batch = EDGE_TEXTS + YEARS + [" ".join(YEARS), "١٩٩٩ 19٩٩ 1999"] + [random_text(rng, 12) for _ in range(40)]
    assert any(naive_years(t) for t in batch) and any(not naive_years(t) for t in batch)
    for lo, hi in SPANS:
        got = kernel(*buffer_of(batch), digit_value, lo, hi)
        want = [naive_time_match([lo, hi], naive_years(t)) for t in batch]
        assert got.tolist() == pytest.approx(want, rel=1e-13, abs=0), (lo, hi)


def test_unicode_digits_are_read_as_the_regex_reads_them(digit_value):
    """A Unicode digit continues a number (no year inside "19991" nor "1999٣") and counts as a
    year's last digits ("19٩٩" is 1999); the first two digits must be ASCII."""
    batch = ["19٩٩", "1999٣", "٣1999", "١٩٩٩", "1٩99", "２０２０", "x\U0001d7ce2000"]
    assert [naive_years(t) for t in batch] == [[1999], [], [], [], [], [], []]
    got = _time_match_serial(*buffer_of(batch), digit_value, 1999, 1999)
    assert got.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_years_are_read_within_their_own_text_and_after_any_code_point(digit_value):
    """The year scan reads only where "15".."20" starts: the code point before it is read back to
    its lead byte (one to four bytes), and neither look reaches into the next or previous text of
    the buffer."""
    batch = ["1999", "5", "x 2", "000", "中1999", "é2000", "\U0001f6002001", "٣1999", "1999٣", "20", "2000x",
             "119999", "1499 2100", "19 99", "1999,5", "a2000b", ""]
    want = [naive_time_match([1999, 2000], naive_years(t)) for t in batch]
    assert [naive_years(t) for t in batch][:9] == [[1999], [], [], [], [1999], [2000], [2001], [], []]
    assert _time_match_serial(*buffer_of(batch), digit_value, 1999, 2000).tolist() == pytest.approx(want, rel=1e-13)


@settings(max_examples=100, deadline=None)
@given(st.lists(texts, min_size=1, max_size=5), st.integers(1490, 2110), st.integers(0, 30))
def test_time_match_matches_twin_on_drawn_texts(digit_value, batch, lo, width):
    got = _time_match_serial(*buffer_of(batch), digit_value, lo, lo + width)
    want = [naive_time_match([lo, lo + width], naive_years(t)) for t in batch]
    assert got.tolist() == pytest.approx(want, rel=1e-13, abs=0)


# -- membership --------------------------------------------------------------------------------------

def csr_of(rows):
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    return indptr, np.array([h for r in rows for h in r], dtype=np.uint64)


@pytest.mark.parametrize("kernel", MEMBERSHIP.values(), ids=MEMBERSHIP.keys())
def test_membership_matches_sets(kernel):
    """A row holds a probe when its terms do; its row sums count a row's terms among the probes."""
    rng = np.random.default_rng(2)
    pool = rng.integers(0, 2**63, 300, dtype=np.uint64) * np.uint64(2)
    rows = [set(rng.choice(pool, rng.integers(0, 30), replace=False).tolist()) for _ in range(37)] + [set()]
    probes = np.concatenate([pool[:40], pool[:5] + np.uint64(1)])  # present and absent
    got = kernel(*csr_of(rows), probes)
    assert got.shape == (len(rows), len(probes)) and got.dtype == np.bool_
    assert got.tolist() == [[int(p) in a for p in probes] for a in rows]
    assert kernel(*csr_of(rows), np.zeros(0, dtype=np.uint64)).shape == (len(rows), 0)
    assert kernel(*csr_of([]), probes).shape == (0, len(probes))
    small = [[1, 2, 3], [], [4], [2, 5, 6, 7]]
    assert kernel(*csr_of(small), np.array([2, 4, 7, 9], dtype=np.uint64)).sum(axis=1).tolist() == [1, 0, 1, 2]


def test_key_table_probes_past_collisions():
    """Keys equal in their low bits share a first slot: lookups must probe on to the right key."""
    keys = np.array([k << 40 for k in range(1, 60)], dtype=np.uint64)
    table_keys, table_index = _key_table(keys, 32)
    size = len(table_keys)
    assert size & (size - 1) == 0 and size >= 2 * len(keys)

    def lookup(h):
        slot = int(h) & (size - 1)
        while table_index[slot] >= 0:
            if table_keys[slot] == h:
                return int(table_index[slot])
            slot = (slot + 1) & (size - 1)
        return -1

    assert [lookup(k) for k in keys] == list(range(len(keys)))
    assert lookup(np.uint64(61 << 40)) == -1 and lookup(np.uint64(0)) == -1
    assert _membership_serial(*csr_of([keys.tolist(), [0, 61 << 40]]), keys).sum(axis=1).tolist() == [59, 0]


# -- the question's terms found in each text, without listing them (_text_probes) --------------------

def probes_of(batch, extra=()):
    """Probe hashes: every term of the texts without Σ, some of them stopwords' hashes (``the``, a
    stem's: ``who``), and terms no text holds."""
    terms = sorted({h for t in batch if "Σ" not in t for h in naive_text_terms(t)})
    terms += [naive_term_hash(w) for w in ("the", "who", "zzzz", "citie", *extra)]
    return np.array(sorted(set(terms)), dtype=np.uint64)


def assert_probes_match(kernel, batch, probes):
    member, sigma = kernel(*buffer_of(batch), *stop_arguments(), probes)
    assert member.dtype == np.bool_ and member.shape == (len(batch), len(probes))
    assert sigma.dtype == np.bool_ and sigma.shape == (len(batch),)
    for t, text in enumerate(batch):
        assert bool(sigma[t]) == ("σ" in text.lower() or "ς" in text.lower()), text
        if "Σ" not in text:  # the one exception, routed to Python by the caller
            have = set(naive_text_terms(text))
            assert member[t].tolist() == [int(p) in have for p in probes], (t, text)
    return member


@pytest.mark.parametrize("kernel", PROBES.values(), ids=PROBES.keys())
def test_probes_match_twin_on_fixed_and_random_texts(kernel):
    rng = random.Random(5)
    batch = EDGE_TEXTS + [random_text(rng, rng.randint(0, 30)) for _ in range(40)]
    member = assert_probes_match(kernel, batch, probes_of(batch))
    assert member.any() and not member.all()  # precondition: both outcomes were checked
    few = probes_of(batch)[::7]  # a handful of probes, as a question has
    assert_probes_match(kernel, batch, few)


@pytest.mark.parametrize("kernel", PROBES.values(), ids=PROBES.keys())
def test_probes_of_no_text_no_probe_and_stopwords_only(kernel):
    buf = np.zeros(1, dtype=np.uint8)
    member, sigma = kernel(buf, np.zeros(1, dtype=np.int64), *stop_arguments(), probes_of([]))
    assert member.shape == (0, len(probes_of([]))) and sigma.shape == (0,)
    member, sigma = kernel(buf, np.zeros(4, dtype=np.int64), *stop_arguments(), probes_of([]))
    assert member.shape == (3, len(probes_of([]))) and not member.any() and not sigma.any()
    batch = ["the and of", "Who whos", "rivers\x00the\x07river\u200b<b>river</b>", "ΑΣ'Β σς"]
    member, _ = kernel(*buffer_of(batch), *stop_arguments(), np.zeros(0, dtype=np.uint64))
    assert member.shape == (4, 0)
    stops = np.array(sorted(naive_term_hash(w) for w in ("the", "and", "of", "who")), dtype=np.uint64)
    assert not assert_probes_match(kernel, batch[:1], stops).any()  # stopwords are no terms
    assert_probes_match(kernel, batch, probes_of(batch, ("b", "river", "x00the")))


def test_probes_see_a_stem_that_is_a_stopword_only_where_it_is_stemmed():
    """"whos" stems to "who", a stopword: the probe of "who" is held by "whos", not by "who"."""
    who = np.array([naive_term_hash("who")], dtype=np.uint64)
    member, _ = _text_probes_serial(*buffer_of(["who", "whos", "who whos", "whom"]), *stop_arguments(), who)
    assert member[:, 0].tolist() == [False, True, True, False]
    assert naive_content_terms("whos") == {"who"}  # the twin agrees


def test_probes_follow_stemming_and_characters_not_bytes():
    batch = ["éés", "ééés", "ééies", "éééies", "ié", "中", "ß", "cities", "ties", "classes", "asses",
             "bosses", "éésses", "ééésses", "address", "ss", "Σ", "ΟΔΟΣ σοφία ς"]
    assert_probes_match(_text_probes_serial, batch, probes_of(batch, ("éé", "ééie", "éééie", "citie", "bos")))


@pytest.mark.parametrize("kernel", PROBES.values(), ids=PROBES.keys())
def test_probes_of_texts_sharing_a_chunk(kernel):
    rng = random.Random(13)
    batch = [" ".join(rng.choice(["river", "rivers", "city", "cities", "Zimbabwe", "the", "中文", "whos"])
                      for _ in range(rng.randint(0, 6))) for _ in range(3 * _CHUNKS + 5)]
    assert_probes_match(kernel, batch, probes_of(batch))


def test_parallel_and_serial_probes_are_identical_on_many_texts():
    rng = random.Random(10)
    batch = [random_text(rng, rng.randint(0, 25)) for _ in range(97)]
    probes = probes_of(batch)
    got = [k(*buffer_of(batch), *stop_arguments(), probes) for k in (_text_probes, _text_probes_serial)]
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)


def test_probes_are_membership_of_the_listed_terms():
    """The fused kernel equals listing each text's terms, then their membership."""
    rng = random.Random(11)
    batch = EDGE_TEXTS + [random_text(rng, rng.randint(0, 30)) for _ in range(60)]
    probes = probes_of(batch)
    indptr, hashes, sigma = _text_terms_serial(*buffer_of(batch), *stop_arguments())
    member, sigma_probes = _text_probes_serial(*buffer_of(batch), *stop_arguments(), probes)
    np.testing.assert_array_equal(member, _membership_serial(indptr, hashes, probes))
    np.testing.assert_array_equal(sigma, sigma_probes)


def test_probe_stopword_check_is_by_bytes_not_only_by_hash():
    """A probe word whose hash is a stopword's but whose bytes differ is found (a forced collision:
    "river"'s hash filed under the bytes of "rivet")."""
    river = np.array([naive_term_hash("river")], dtype=np.uint64)
    fake = (_stop_bits(river), *_key_table(river, 4), *buffer_of(["rivet"]), 5)
    member, _ = _text_probes_serial(*buffer_of(["river rivet", "the"]), *fake, river)
    assert member[:, 0].tolist() == [True, False]
    real = (_stop_bits(river), *_key_table(river, 4), *buffer_of(["river"]), 5)
    member, _ = _text_probes_serial(*buffer_of(["river rivet", "rivers"]), *real, river)
    assert member[:, 0].tolist() == [False, True]  # "rivers" is no stopword; its stem is river


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), st.lists(texts, max_size=2))
def test_probes_match_twin_on_drawn_texts(batch, others):
    assert_probes_match(_text_probes_serial, batch, probes_of(batch + others))


def test_state_keys_invert_the_finaliser():
    """The probes are keyed by the FNV-1a state of their bytes (halves swapped): _state_keys of a
    term's hash is that, for words and for random 64-bit states."""
    def state(term):
        h = FNV_OFFSET
        for b in term.encode("utf-8"):
            h = ((h ^ b) * FNV_PRIME) & MASK
        return h

    swap = lambda h: ((h >> 32) | (h << 32)) & MASK  # noqa: E731
    terms = ["", "river", "café", "中文", "x" * 40] + [random_text(random.Random(k), 3) for k in range(50)]
    hashes = np.array([naive_term_hash(t) for t in terms], dtype=np.uint64)
    assert _state_keys(hashes).tolist() == [swap(state(t)) for t in terms]
    raw = np.random.default_rng(1).integers(0, 2**64 - 1, 500, dtype=np.uint64, endpoint=True)
    mixed = np.array([mix64(int(x)) for x in raw], dtype=np.uint64)
    assert _state_keys(mixed).tolist() == [swap(int(x)) for x in raw]
    assert _state_keys(np.zeros(0, dtype=np.uint64)).shape == (0,)
