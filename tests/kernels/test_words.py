"""The one word scan (ctxselect/kernels/words.py): signatures and probes read in one pass equal each
reader alone and their plain-Python twins.

``_scan_words`` reads each text's words once for the MinHash signature and the probe terms; it must
give exactly the signature of ``_signatures`` (twin: tests/naive/signals.py) and the membership of
a probes-only scan (twin: the terms of tests/naive/query_terms.py), for any shingle size and
number of bins, with the parallel dispatcher and its serial twin. Inputs stay small so these tests
also run interpreted (``NUMBA_DISABLE_JIT=1``).
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxselect.kernels.terms import _probe_table
from ctxselect.kernels.words import (_CHUNKS, _scan_words, _scan_words_serial, _signatures, _signatures_serial,
                                     _text_terms, _text_terms_serial)
from tests.helpers import signature_rows
from tests.kernels.test_terms import EDGE_TEXTS, buffer_of, probes_of, random_text, stop_arguments, texts
from tests.naive.query_terms import naive_text_terms
from tests.naive.signals import naive_signature

SCANS = {"parallel": _scan_words, "serial": _scan_words_serial}
SIGNATURES = {"parallel": _signatures, "serial": _signatures_serial}


def scan(kernel, batch, probes, k=3, bins=128):
    buf, offsets = buffer_of(batch)
    return kernel(buf, offsets, k, signature_rows(offsets, bins), *stop_arguments(), *_probe_table(probes),
                  len(probes))


def assert_scan_matches(kernel, batch, probes, k=3, bins=128):
    """One scan's four outputs against the readers alone and the twins."""
    sig, words, member, sigma = scan(kernel, batch, probes, k, bins)
    n = len(batch)
    assert sig.shape == (n, bins) and sig.dtype == np.uint64 and words.shape == (n,)
    assert member.shape == (n, len(probes)) and member.dtype == np.bool_ and sigma.shape == (n,)
    alone_sig, alone_words = _signatures_serial(*buffer_of(batch), k, signature_rows(buffer_of(batch)[1], bins))
    np.testing.assert_array_equal(sig, alone_sig)
    np.testing.assert_array_equal(words, alone_words)
    _, no_words, alone_member, alone_sigma = scan(_scan_words_serial, batch, probes, k, 0)  # probes only
    np.testing.assert_array_equal(member, alone_member)
    np.testing.assert_array_equal(sigma, alone_sigma)
    assert not no_words.any()
    for t, text in enumerate(batch):
        assert [int(v) for v in sig[t]] == naive_signature(text, k, bins), (t, text)
        assert bool(sigma[t]) == ("σ" in text.lower() or "ς" in text.lower()), text
        if "Σ" not in text:  # the one exception, routed to Python by the caller
            have = set(naive_text_terms(text))
            assert member[t].tolist() == [int(p) in have for p in probes], (t, text)
    return sig, member


@pytest.mark.parametrize("kernel", SCANS.values(), ids=SCANS.keys())
@pytest.mark.parametrize("k, bins", [(3, 128), (1, 64), (5, 100), (3, 8)])
def test_one_scan_equals_its_readers_alone_on_fixed_and_random_texts(kernel, k, bins):
    rng = random.Random(21)
    batch = EDGE_TEXTS + [random_text(rng, rng.randint(0, 40)) for _ in range(50)]
    sig, member = assert_scan_matches(kernel, batch, probes_of(batch), k, bins)
    assert member.any() and not member.all()  # precondition: both outcomes were checked
    assert len({tuple(r) for r in sig.tolist()}) > 40  # signatures differ between texts
    assert_scan_matches(kernel, batch, probes_of(batch)[::9], k, bins)  # a handful, as a question has


@pytest.mark.parametrize("kernel", SCANS.values(), ids=SCANS.keys())
def test_one_scan_of_no_text_no_probe_and_empty_texts(kernel):
    no_text = np.zeros(1, dtype=np.uint8), np.zeros(1, dtype=np.int64)
    sig, words, member, sigma = kernel(*no_text, 3, signature_rows(no_text[1], 128), *stop_arguments(),
                                       *_probe_table(probes_of([])), 4)
    assert sig.shape == (0, 128) and words.shape == (0,) and member.shape == (0, 4) and sigma.shape == (0,)
    batch = ["", "   ", "a", "the and of", "ΑΣ'Β σς"]
    sig, member = assert_scan_matches(kernel, batch, np.zeros(0, dtype=np.uint64))
    assert member.shape == (5, 0)
    assert (sig[:2] == np.uint64(0xFFFFFFFFFFFFFFFF)).all()  # no words: every bin empty
    assert_scan_matches(kernel, batch, probes_of(batch, ("the", "σς")))


@pytest.mark.parametrize("kernel", SCANS.values(), ids=SCANS.keys())
def test_one_scan_of_texts_sharing_a_chunk(kernel):
    """More texts than the parallel kernel's chunks: each chunk's scratch (words, rows) is its own."""
    rng = random.Random(23)
    vocabulary = ["river", "rivers", "city", "cities", "Zimbabwe", "the", "中文", "whos", "flooded", "3,559"]
    batch = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 12))) for _ in range(3 * _CHUNKS + 5)]
    assert_scan_matches(kernel, batch, probes_of(batch))


def test_parallel_and_serial_scans_and_signatures_are_identical_on_many_texts():
    rng = random.Random(24)
    batch = [random_text(rng, rng.randint(0, 30)) for _ in range(600)]
    probes = probes_of(batch)
    for a, b in zip(scan(_scan_words, batch, probes), scan(_scan_words_serial, batch, probes)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(*(kernel(*buffer_of(batch), 3, signature_rows(buffer_of(batch)[1], 128))
                      for kernel in SIGNATURES.values())):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=120, deadline=None)
@given(st.lists(texts, min_size=1, max_size=6), st.lists(texts, max_size=2), st.sampled_from([(3, 128), (2, 16)]))
def test_one_scan_matches_twins_on_drawn_texts(batch, others, shape):
    assert_scan_matches(_scan_words_serial, batch, probes_of(batch + others), *shape)


def test_listing_a_text_of_more_distinct_terms_than_the_first_table_holds():
    """40,000 distinct terms: the text's table of seen terms grows past 65,536 slots (4x up to
    there, then 2x the terms); every term is listed once, in order of first appearance."""
    from ctxselect.kernels.words import _text_terms_serial

    text = " ".join(f"w{k}x" for k in range(40_000)) + " w7x w39999x"
    indptr, hashes, _ = _text_terms_serial(*buffer_of([text, "rivers"]), *stop_arguments())
    assert indptr.tolist() == [0, 40_000, 40_001]
    assert sorted(hashes[:40_000].tolist()) == naive_text_terms(text)
    assert hashes[:3].tolist() == [int(h) for h in (naive_text_terms("w0x")[0], naive_text_terms("w1x")[0],
                                                    naive_text_terms("w2x")[0])]


@pytest.mark.parametrize("kernel", [*SCANS.values(), *SIGNATURES.values()])
def test_a_signature_matrix_without_a_row_per_text_is_refused(kernel):
    """The caller allocates the matrix (NumPy: huge pages); a kernel has no bounds checks, so one
    with too few rows would be written past: refused."""
    buf, offsets = buffer_of(["one text", "two texts"])
    short = signature_rows(offsets[:2], 16)
    args = (*stop_arguments(), *_probe_table(probes_of([])), 0) if kernel in SCANS.values() else ()
    with pytest.raises(ValueError, match="one row per text"):
        kernel(buf, offsets, 3, short, *args)


def raw_buffer(texts):
    """The kernels' input from raw byte strings (any bytes: not necessarily UTF-8 nor lower case)."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in texts])
    return np.frombuffer(b"".join(texts) + b"\0", dtype=np.uint8).copy(), offsets


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from([b"a", b"Z", b"s", b"ies", b"7", b" ", b",", b"\x00", b"\x7f"]),
                                   st.binary(min_size=1, max_size=3)), max_size=90).map(b"".join),
                min_size=1, max_size=5))
def test_a_separator_before_any_bytes_changes_no_word(batch):
    """Any bytes (invalid UTF-8, stray continuation bytes, capitals: what the twins, which take
    strings, never see): a text and the same text after a no-break space (a separator, after which
    a continuation byte separates as at the text's start) have the same signature, word count,
    probe hits and σ flag."""
    probes = probes_of(["rivers", "ies", "aaa", "zz", "café"])
    plain, spaced = raw_buffer(batch), raw_buffer([b"\xc2\xa0" + x for x in batch])
    for kernel in SCANS.values():
        for a, b in zip(*(kernel(*buffer, 3, signature_rows(buffer[1], 32), *stop_arguments(), *_probe_table(probes),
                                 len(probes)) for buffer in (plain, spaced))):
            np.testing.assert_array_equal(a, b)
    for kernel in (_text_terms, _text_terms_serial):
        for a, b in zip(*(kernel(*buffer, *stop_arguments()) for buffer in (plain, spaced))):
            np.testing.assert_array_equal(a, b)
