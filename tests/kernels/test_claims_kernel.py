"""The claim-key kernel (ctxselect/kernels/claims.py) against its plain-Python twin
(tests/naive/claims.py ``naive_claim_keys``), called directly.

The twin reads the same rules another way (regular expressions over the lower-cased text, the
words before each start re-read from the window), so the entries must be equal, not just covering.
The parallel kernel and its serial twin run on the same inputs. Inputs stay small so these tests
also run interpreted (``NUMBA_DISABLE_JIT=1``). That the entries cover the claims Python reads is
tests/text/test_claim_prefilter.py's business.
"""

import random

import numpy as np
import pytest

from ctxselect.kernels.claims import UNIT_ANY, UNIT_DATE, UNIT_NONE, UNIT_PERCENT, _claim_keys, _claim_keys_serial
from ctxselect.kernels.scan_bounds import _scan_bounds
from ctxselect.packing import text_buffer
from ctxselect.text.claim_keys import _stopword_table, byte_words, candidate_keys, exotic_code_points, key_of, word_hash
from tests.kernels.test_scan_bounds import _at_address
from tests.naive.claims import naive_claim_keys, naive_scan_bounds
from tests.text.claim_texts import EXOTIC, seeded_fact_text, seeded_text

KERNELS = {"parallel": _claim_keys, "serial": _claim_keys_serial}
EDGE_TEXTS = [
    "", " ", "7", "a 7", "storm outage district affected", "storm outage district affected 3,559 people",
    "storm outage district affected 2021", "storm outage district affected 2021 million people",
    "storm outage district affected 45 % of", "storm outage district affected 12 per cent",
    "storm outage district affected 1.5 million people", "storm outage district affected 9 million-fold rise",
    "storm outage district affected 3 March, 2021", "alpha beta gamma war—March 3, 2021",
    "alpha beta gamma delta 2021-03-03", "alpha beta gamma delta.2021-03-03", "alpha beta gamma delta,5 units",
    "alpha beta gamma delta 5", "alpha beta gamma delta 5" + " " * 40 + "units",
    "alpha beta gamma delta 5" + " " * 30 + "units",
    "x" * 79 + " ab cd ef 5 units", "ab cd ef 5 units", "ΣΊΣΥΦΟΣ ΟΔΟΣ total losses were 5 units", "İstanbul traffic fell 5 units",
    "the of in a I per 5 units", "naïve café owners’ union 5 units", "😀 😀 alpha beta gamma 5 units",
]
# the scan starts at the first digit or byte from 0x80 on, or at the month name before it: names before
# it, with and without ".", ",", whitespace (tabs, NBSP, NEL), glued to a word or a digit, at the start
MONTH_TEXTS = [
    "March 3, 2021 storm outage district", "  March 3", "alpha beta gamma delta March.,  5 units",
    "alpha beta gamma delta Mar.\t\n 3 units", "alpha beta gamma delta March,3 units", "alpha beta gamma delta March 3",
    "alpha beta gamma delta_March 3, 2021", "alpha beta gamma delta xMarch 3", "alpha beta gamma delta March3 units",
    "alpha beta gamma delta March\u00a03, 2021", "alpha beta gamma delta March\u00853 units",
    "alpha beta gamma delta March \u00a0 3 units", "alpha beta gamma delta Marché 3 units", "May June July 4 units",
    "alpha beta gamma delta sept. 9 units", "alpha beta gamma delta ,. 5 units", "alpha beta gamma delta dec .5 units",
    "alpha beta gamma delta. 2021 March 3, 2021", "alpha beta gamma delta jan, 7 units and feb 8 units",
]


def entries(kernel, texts, max_chars=50_000, need=4, cap_bytes=4):
    buf, offsets = text_buffer(texts)
    buf = buf if len(buf) else np.zeros(1, np.uint8)
    args = (buf, *_scan_bounds(buf, *byte_words(buf), offsets[:-1], offsets[1:]), offsets[:-1], offsets[1:], max_chars,
            80, need, *_stopword_table(), exotic_code_points(), cap_bytes)
    indptr, words, units, flags = kernel(*args)
    assert indptr.shape == (len(texts) + 1,) and words.shape == units.shape == (indptr[-1],)
    return [sorted(set(zip(words[a:b].tolist(), units[a:b].tolist()))) for a, b in zip(indptr[:-1], indptr[1:])], flags


def check(kernel, texts, **options):
    got, flags = entries(kernel, texts, **options)
    for t, text in enumerate(texts):
        want, flag = naive_claim_keys(text, max_chars=options.get("max_chars", 50_000), need=options.get("need", 4))
        assert (got[t], int(flags[t])) == (want, flag), (t, text)


@pytest.mark.parametrize("kernel", KERNELS.values(), ids=KERNELS.keys())
def test_edge_texts_match_twin(kernel):
    check(kernel, EDGE_TEXTS)
    check(kernel, EDGE_TEXTS, need=3)
    check(kernel, EDGE_TEXTS, max_chars=30)


@pytest.mark.parametrize("kernel", KERNELS.values(), ids=KERNELS.keys())
def test_month_names_before_the_first_digit_match_twin(kernel):
    check(kernel, MONTH_TEXTS)
    check(kernel, MONTH_TEXTS, need=3)
    check(kernel, MONTH_TEXTS, max_chars=26)
    got, _ = entries(kernel, MONTH_TEXTS)
    dated = [t for t, row in enumerate(got) if UNIT_DATE in [u for _, u in row]]
    assert dated == [2, 3, 5, 9, 10, 11, 14, 17, 18]  # the names read where the scan starts at them


@pytest.mark.parametrize("kernel", KERNELS.values(), ids=KERNELS.keys())
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_texts_match_twin(kernel, seed):
    rng = random.Random(seed)
    texts = [seeded_text(rng, rng.randint(0, 30)) for _ in range(25)] + [seeded_fact_text(rng, 4) for _ in range(10)]
    for need, max_chars in ((4, 50_000), (3, 120), (5, 60), (6, 50_000)):
        check(kernel, texts, need=need, max_chars=max_chars)


def test_the_unit_and_kind_are_what_the_claim_can_have():
    context = key_of("district", "affected")
    got = dict(zip(EDGE_TEXTS, entries(_claim_keys_serial, EDGE_TEXTS)[0]))
    assert got["storm outage district affected 3,559 people"] == [(context, word_hash("people"))]
    assert got["storm outage district affected 2021"] == []  # a bare year is not a claim
    assert got["storm outage district affected 2021 million people"] == sorted(
        [(context, word_hash("million")), (context, word_hash("people"))])
    assert sorted(got["storm outage district affected 12 per cent"]) == sorted(
        [(context, word_hash("cent")), (context, int(UNIT_PERCENT))])
    assert got["storm outage district affected 9 million-fold rise"] == sorted(
        [(context, word_hash("million-fold")), (context, int(UNIT_ANY))])  # "-fold" may be the unit
    # the day may start a date, or be a number whose unit is "march"; "2021" then is a bare year
    assert got["storm outage district affected 3 March, 2021"] == sorted(
        [(context, int(UNIT_DATE)), (context, word_hash("march"))])
    # the month name starts a date: its window ends inside "war—March"; "3" may be a number
    assert got["alpha beta gamma war—March 3, 2021"] == sorted(
        [(key_of("gamma", "war—"), int(UNIT_DATE)), (key_of("gamma", "war—march"), int(UNIT_NONE))])
    assert got["alpha beta gamma delta 5"] == [(key_of("gamma", "delta"), int(UNIT_NONE))]  # the text ends
    assert got["alpha beta gamma delta 5" + " " * 40 + "units"] == [(key_of("gamma", "delta"), int(UNIT_ANY))]
    assert got["alpha beta gamma delta,5 units"] == []  # after a comma: neither a number nor a date
    # after ".", "2021" may start a date, not a number; the "03"s may be numbers (if the date is not valid)
    assert got["alpha beta gamma delta.2021-03-03"] == sorted(
        [(key_of("gamma", "delta"), int(UNIT_DATE)), (key_of("gamma", "delta"), int(UNIT_NONE))])
    # the window cuts "xx...x" to 70 x's: still a content word, the fourth
    assert got["x" * 79 + " ab cd ef 5 units"] == [(key_of("cd", "ef"), word_hash("units"))]
    assert got["storm outage district affected 2021"] == got["ab cd ef 5 units"] == []  # three words only
    assert got["the of in a I per 5 units"] == []


def test_exotic_texts_are_flagged_without_entries():
    texts = [f"alpha beta gamma delta 5 units {e}" for e in EXOTIC] + ["alpha beta gamma delta 5 units ok"]
    got, flags = entries(_claim_keys_serial, texts)
    assert flags.tolist() == [1] * len(EXOTIC) + [0]
    assert got[:-1] == [[]] * len(EXOTIC) and got[-1]
    late = "alpha beta gamma delta 5 units " + "x" * 200 + EXOTIC[0]  # past what Python reads
    assert entries(_claim_keys_serial, [late], max_chars=100)[1].tolist() == [0]


def test_a_text_beyond_its_slice_is_flagged_for_python():
    tag = [chr(97 + k % 26) + chr(97 + k // 26) for k in range(40)]
    text = " ".join(f"alpha{t} beta{t} gamma{t} delta{t} {k} units{t}" for k, t in enumerate(tag))
    got, flags = entries(_claim_keys_serial, [text, "alpha beta gamma delta 5 units"], cap_bytes=4096)
    assert flags.tolist() == [2, 0] and got[0] == [] and got[1]
    got, flags = entries(_claim_keys_serial, [text])
    assert flags.tolist() == [0] and len(got[0]) == 40


def test_texts_beyond_their_slice_are_read_again_with_room_for_all(monkeypatch):
    from ctxselect.text import claim_keys

    rng = random.Random(6)
    texts = [seeded_fact_text(rng, rng.randint(0, 6)) for _ in range(40)]
    buf, offsets = text_buffer(texts)
    roomy = candidate_keys(buf, offsets[:-1], offsets[1:], max_chars=50_000)
    monkeypatch.setattr(claim_keys, "CAP_BYTES", 1 << 30)  # four entries a text: many overflow
    retried = candidate_keys(buf, offsets[:-1], offsets[1:], max_chars=50_000)
    assert (np.diff(roomy[0]) > 4).sum() >= 5
    for a, b in zip(roomy, retried):
        np.testing.assert_array_equal(a, b)
    got, flags = entries(_claim_keys_serial, texts, cap_bytes=0)  # room for any text
    assert 2 not in flags.tolist() and got == entries(_claim_keys_serial, texts)[0]


def test_parallel_and_serial_are_identical_on_many_texts():
    rng = random.Random(9)
    texts = [seeded_fact_text(rng, rng.randint(0, 5)) for _ in range(97)]
    (parallel, parallel_flags), (serial, serial_flags) = entries(_claim_keys, texts), entries(_claim_keys_serial, texts)
    assert parallel == serial and parallel_flags.tolist() == serial_flags.tolist()
    assert sum(map(len, parallel)) > 50


def test_blocks_and_the_parallel_path_of_the_wrapper(monkeypatch):
    from ctxselect.text import claim_keys

    rng = random.Random(4)
    texts = [seeded_fact_text(rng, 3) for _ in range(60)]
    buf, offsets = text_buffer(texts)
    whole = candidate_keys(buf, offsets[:-1], offsets[1:], max_chars=50_000)
    monkeypatch.setattr(claim_keys, "BLOCK_BYTES", 500)  # several launches
    monkeypatch.setattr(claim_keys, "SERIAL_BYTES", 0)  # each of them parallel
    blocks = candidate_keys(buf, offsets[:-1], offsets[1:], max_chars=50_000)
    for a, b in zip(whole, blocks):
        np.testing.assert_array_equal(a, b)


# --- the claim hints kernel (ctxselect/kernels/claim_hints.py) against naive_claim_hints ---

HINT_EDGE_TEXTS = EDGE_TEXTS + [
    "12345", "1 2 3 4", "1.2,3_4 a5 _6 .7 ,8 -9", "3,559", "\x00\x01 7\x7f8 <b>9</b>", "jan", "ja", "JAN 5", "Dec.",
    "x-ray", "december", "\u0663\u0664 people", "٣ 4", "ſept 5", "İ 5", "K 5 decade", "\u00a07\u20035", "café7 é8",
    "a😀5 😀6", "5" * 300, "may" * 50, "\n".join(["7 x"] * 40), "decimals 3.14 and 2,5 and 1,234,567",
    "abcdjan", "abcdejan", "ma\u00e9r mar", "m-ar ma1r maé", "xjunx", "ma", "ju", "fooapr", "décembre", "😀oct", "s.sep"]


def hints(texts, max_chars=50_000, read_chars=50_120):
    from ctxselect.kernels.claim_hints import _claim_hints
    buf, offsets = text_buffer(texts)
    indptr, where, flags = _claim_hints(buf if len(buf) else np.zeros(1, np.uint8), offsets[:-1], offsets[1:],
                                        max_chars, read_chars, exotic_code_points())
    return [(int(flags[t]), where[indptr[t]:indptr[t + 1]].tolist()) for t in range(len(texts))]


@pytest.mark.parametrize("cut", [(50_000, 50_120), (3, 5), (1, 1), (0, 4), (7, 7)])
def test_claim_hints_match_the_twin_on_fixed_and_edge_texts(cut):
    from tests.naive.claims import naive_claim_hints
    max_chars, read_chars = cut
    got = hints(HINT_EDGE_TEXTS, max_chars, read_chars)
    want = [naive_claim_hints(t, max_chars=max_chars, read_chars=read_chars) for t in HINT_EDGE_TEXTS]
    assert got == want
    if cut == (50_000, 50_120):  # not vacuous: every flag and some positions
        assert {f for f, _ in got} >= {0, 1, 2, 3, 4} and sum(len(p) for _, p in got) > 50


@pytest.mark.parametrize("seed", range(6))
def test_claim_hints_match_the_twin_on_random_texts(seed):
    from tests.naive.claims import naive_claim_hints
    rng = random.Random(seed)
    texts = [seeded_text(rng, rng.randint(0, 40), exotic=0.2) if rng.random() < 0.5 else seeded_fact_text(rng, 4)
             for _ in range(40)]
    texts += ["".join(chr(rng.choice([rng.randint(0, 0x7f), rng.randint(0x80, 0x7ff), rng.randint(0x800, 0xd7ff)]))
                      for _ in range(rng.randint(0, 60))) for _ in range(40)]  # any code points, control characters
    max_chars, read_chars = rng.choice([(50_000, 50_120), (20, 40), (5, 9)])
    want = [naive_claim_hints(t, max_chars=max_chars, read_chars=read_chars) for t in texts]
    assert hints(texts, max_chars, read_chars) == want
    assert any(f == 4 for f, _ in want) and any(f & 1 for f, _ in want)


@pytest.mark.parametrize("kernel", KERNELS.values(), ids=KERNELS.keys())
def test_every_alignment_of_texts_and_buffer_matches_twin(kernel):
    """The first and last digit or lead byte are found eight bytes a step from the buffer's first aligned
    address: texts shifted by 0 to 15 bytes, in a buffer that starts at each of eight addresses mod 8."""
    base = ["alpha beta gamma delta March 3, 2021 and 45 units", "alpha beta gamma delta epsilon zeta eta theta 7",
            "7 alpha beta gamma delta epsilon zeta eta theta iota kappa", "no digits here at all, only words and words",
            "alpha beta gamma delta naïve 12 units élan", "alpha beta gamma delta 5 units" + " ab" * 9]
    base += ["alpha beta gamma delta 5 units " + word + " ab cd" for word in EXOTIC]  # flagged: a lead byte last
    texts = [" " * k + t for k in range(16) for t in base]
    data, offsets = text_buffer(texts)
    tables = (*_stopword_table(), exotic_code_points())
    for shift in range(8):
        buf = _at_address(data, shift)  # the buffer's first byte at an address of this remainder mod 8
        words, align = byte_words(buf)
        assert align == (-shift) % 8 and words.ctypes.data % 8 == 0
        bounds = _scan_bounds(buf, words, align, offsets[:-1], offsets[1:])
        assert [b.tolist() for b in bounds] == naive_scan_bounds(buf.tobytes(), offsets)
        indptr, keys, units, flags = kernel(buf, *bounds, offsets[:-1], offsets[1:], 50_000, 80, 4, *tables, 4)
        got = [sorted(set(zip(keys[a:b].tolist(), units[a:b].tolist()))) for a, b in zip(indptr[:-1], indptr[1:])]
        for t, text in enumerate(texts):
            assert (got[t], int(flags[t])) == naive_claim_keys(text, max_chars=50_000, need=4), (shift, t, text)
        assert flags.tolist().count(1) == 16 * len(EXOTIC)  # each exotic text, at every shift
