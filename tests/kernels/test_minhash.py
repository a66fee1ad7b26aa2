"""The MinHash kernels against their plain-Python twins (tests/naive/signals.py), called directly.

Both parallel kernels, ``_signatures`` and ``_all_pairs_above``, are called as the parallel
dispatchers (``@parallel``: ``prange`` over threads) and as their serial twins, on the same inputs,
and both must equal the plain-Python twin exactly. The wrappers' choice between them (the
serial/parallel cut-offs) is checked in tests/features/test_similarity.py. Inputs stay small so
these tests also run interpreted (``NUMBA_DISABLE_JIT=1``, the CI step that lets coverage see the
kernel bodies).
"""

import random

import numpy as np
import pytest

from ctxselect.kernels.minhash import (
    EMPTY,
    _all_pairs_above,
    _all_pairs_above_serial,
    _band_keys,
    _lsh_pairs,
    _signature_similarity,
)
from ctxselect.kernels.words import _signatures, _signatures_serial
from ctxselect.packing import text_buffer
from tests.helpers import signature_rows
from tests.naive.signals import (
    naive_band_keys,
    naive_lsh_pairs,
    naive_jaccard,
    naive_pairs_above,
    naive_shingles,
    naive_signature,
    naive_signature_similarity,
    naive_words,
    naive_lsh_pair_list,
    naive_byte_words,
    naive_words_signature,
)

VOCAB = [f"w{k}" for k in range(60)] + ["ünïcode", "naïve", "2024", "3,559"]
SIGNATURES = {"parallel": _signatures, "serial": _signatures_serial}
ALL_PAIRS = {"parallel": _all_pairs_above, "serial": _all_pairs_above_serial}


def random_text(rng, words):
    return " ".join(rng.choice(VOCAB) for _ in range(words))


buffer_of = text_buffer  # the kernels' input: lower-cased UTF-8 bytes (at least one) and offsets


def rows_of(sig):
    return [list(map(int, r)) for r in sig]


def as_dict(i, j, w):
    return {(int(a), int(b)): float(x) for a, b, x in zip(i, j, w)}


def sign(kernel, texts, k=3, bins=128):
    """(signatures, word counts) of ``texts`` by ``kernel``."""
    buf, offsets = buffer_of(texts)
    return kernel(buf, offsets, k, signature_rows(offsets, bins))


def signed(texts, k=3, bins=128):
    return sign(_signatures_serial, texts, k, bins)[0]


EDGE_TEXTS = ["", "   ...  ", "one", "Same words here", "same WORDS here!", "ünïcode naïve 3,559 people",
              "a b", "x " * 200]


def test_words_are_the_one_word_over_all_of_unicode():
    """Each code point between two letters: the kernel's word count is that of ``model.tokens.WORD``
    on the lower-cased text (the kernel reads the lower-cased buffer), for every code point."""
    from ctxselect.model.tokens import WORD

    texts = [f"a{chr(cp)}b" for cp in range(1, 0x110000)]
    _, words = sign(_signatures_serial, texts, 1, 4)
    want = np.array([len(WORD.findall(t.lower())) for t in texts])
    wrong = np.flatnonzero(words != want)
    assert wrong.size == 0, [hex(cp + 1) for cp in wrong[:10]]
    assert set(want.tolist()) == {1, 2}  # precondition: both joiners and separators were seen


@pytest.mark.parametrize("kernel", SIGNATURES.values(), ids=SIGNATURES.keys())
@pytest.mark.parametrize("k,bins", [(1, 16), (3, 128), (5, 64)])
def test_signatures_match_twin_exactly(kernel, k, bins):
    rng = random.Random(3)
    texts = EDGE_TEXTS + [random_text(rng, rng.randint(1, 80)) for _ in range(30)]
    sig, words = sign(kernel, texts, k, bins)
    assert sig.shape == (len(texts), bins) and sig.dtype == np.uint64
    for t, text in enumerate(texts):
        assert sig[t].tolist() == naive_signature(text, k, bins), (t, k)
    assert words.tolist() == [len(naive_words(text)) for text in texts]


def test_parallel_and_serial_signatures_are_identical_on_many_texts():
    """More texts than threads, so ``prange`` splits the rows: each row is still its own text's."""
    rng = random.Random(8)
    texts = [random_text(rng, rng.randint(0, 40)) for _ in range(97)]
    parallel, parallel_words = sign(_signatures, texts, 3, 32)
    serial, serial_words = sign(_signatures_serial, texts, 3, 32)
    np.testing.assert_array_equal(parallel, serial)
    np.testing.assert_array_equal(parallel_words, serial_words)
    assert rows_of(parallel)[41] == naive_signature(texts[41], 3, 32)


def test_signature_similarity_matches_twin():
    rng = random.Random(5)
    texts = [random_text(rng, 40) for _ in range(12)] + [""]
    sig = signed(texts)
    i, j = np.triu_indices(len(texts), 1)
    got = _signature_similarity(sig, i.astype(np.int64), j.astype(np.int64))
    rows = rows_of(sig)
    want = [naive_signature_similarity(rows[a], rows[b]) for a, b in zip(i, j)]
    np.testing.assert_allclose(got, want)


def _near_duplicate_texts(seed, n_base, words=30):
    rng = random.Random(seed)
    texts = [random_text(rng, words) for _ in range(n_base)]
    texts += [t + " w1" for t in texts[: n_base // 3]] + ["", ""]
    return texts


@pytest.mark.parametrize("kernel", ALL_PAIRS.values(), ids=ALL_PAIRS.keys())
@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.9, 1.0])
def test_all_pairs_above_matches_twin(kernel, threshold):
    sig = signed(_near_duplicate_texts(2, 40))
    got = as_dict(*kernel(sig, threshold))
    want = naive_pairs_above(rows_of(sig), threshold)
    assert got == want
    assert list(got) == sorted(got)  # row-major order


@pytest.mark.parametrize("kernel", ALL_PAIRS.values(), ids=ALL_PAIRS.keys())
def test_all_pairs_above_edges(kernel):
    empty = np.empty((0, 128), dtype=np.uint64)
    assert len(kernel(empty, 0.5)[0]) == 0
    one = signed(["a b c d"])
    assert len(kernel(one, 0.5)[0]) == 0
    same = signed(["a b c d", "a b c d", "", "a b c d"])
    assert as_dict(*kernel(same, 1.0)) == {(0, 1): 1.0, (0, 3): 1.0, (1, 3): 1.0}  # the empty text: nothing


def test_minhash_estimates_jaccard_within_stated_error():
    """Stated error: mean |estimate - exact| <= 0.04 and max <= 0.20 with 128 bins."""
    rng = random.Random(11)
    base = [random_text(rng, 120) for _ in range(20)]
    texts = []
    for text in base:  # variants at many overlap levels
        words = text.split()
        for keep in (1.0, 0.9, 0.7, 0.5, 0.3):
            cut = int(len(words) * keep)
            texts.append(" ".join(words[:cut] + [rng.choice(VOCAB) for _ in range(len(words) - cut)]))
    sig = signed(texts)
    i, j = np.triu_indices(len(texts), 1)
    est = _signature_similarity(sig, i.astype(np.int64), j.astype(np.int64))
    shingles = [naive_shingles(text, 3) for text in texts]  # naive_jaccard, each text's shingles once
    exact = np.array([len(shingles[a] & shingles[b]) / len(shingles[a] | shingles[b]) for a, b in zip(i, j)])
    assert exact[:4].tolist() == [naive_jaccard(texts[0], texts[b], 3) for b in range(1, 5)]
    errors = np.abs(est - exact)
    assert exact.max() > 0.75 and exact.min() < 0.1  # precondition: the sample spans the range
    assert errors.mean() <= 0.04 and errors.max() <= 0.20, (errors.mean(), errors.max())


@pytest.mark.parametrize("bands", [1, 4, 32, 128])
def test_band_keys_match_twin(bands):
    sig = signed(_near_duplicate_texts(4, 20))
    assert _band_keys(sig, bands).tolist() == naive_band_keys(rows_of(sig), bands)


def _per_band(i, j, keys, max_bucket):
    """The kernel's pairs split back into bands (each band's pairs come in one run, bands in
    order; a run ends where the next band's first pair begins)."""
    pairs = list(zip(i.tolist(), j.tolist()))
    bands, start = [], 0
    for band_keys in keys:
        want = 0
        buckets = {}
        for key in band_keys.tolist():
            if key != int(EMPTY):
                buckets[key] = buckets.get(key, 0) + 1
        for size in buckets.values():
            want += 0 if size < 2 else size * (size - 1) // 2 if size <= max_bucket else size - 1
        bands.append(pairs[start:start + want])
        start += want
    assert start == len(pairs)
    return bands


@pytest.mark.parametrize("max_bucket", [1, 2, 3, 400])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lsh_pairs_match_twin(max_bucket, seed):
    """Random keys with large buckets (chains below ``max_bucket``), empty texts, several bands."""
    rng = np.random.default_rng(100 * max_bucket + seed)
    keys = rng.integers(0, 6, (3, 40)).astype(np.uint64)
    keys[rng.random((3, 40)) < 0.2] = EMPTY  # empty texts share no bucket
    keys[1] = rng.integers(0, 2**63, 40).astype(np.uint64)  # a band of (mostly) distinct hashes
    keys[1, 5:9] = keys[1, 30]
    i, j = _lsh_pairs(keys, max_bucket)
    assert i.dtype == np.int64 and j.dtype == np.int64 and bool((i < j).all())
    got = _per_band(i, j, keys, max_bucket)
    for band, pairs in enumerate(got):
        assert len(pairs) == len(set(pairs))  # no pair twice within one band
    assert [set(p) for p in got] == naive_lsh_pairs([[int(k) for k in band] for band in keys], max_bucket)


def test_lsh_pairs_edges():
    """No texts, one text, all empty, one bucket of everything (a chain), keys colliding in the table."""
    for keys in (np.empty((4, 0), np.uint64), np.zeros((2, 1), np.uint64), np.full((2, 5), EMPTY)):
        i, j = _lsh_pairs(keys, 400)
        assert len(i) == len(j) == 0
    same = np.zeros((1, 600), np.uint64)
    i, j = _lsh_pairs(same, 400)
    assert list(zip(i.tolist(), j.tolist())) == [(t, t + 1) for t in range(599)]
    colliding = (np.arange(50, dtype=np.uint64) * np.uint64(1 << 20))[None, :].repeat(2, axis=0)  # one slot
    colliding[0, 10] = colliding[0, 20] = colliding[0, 30]
    i, j = _lsh_pairs(colliding, 400)
    assert sorted(zip(i.tolist(), j.tolist())) == [(10, 20), (10, 30), (20, 30)]
    many = np.repeat(np.arange(300, dtype=np.uint64) % np.uint64(7), 1)[None, :]  # output grows past its start
    i, j = _lsh_pairs(many, 400)
    assert len(i) == sum(c * (c - 1) // 2 for c in np.bincount(np.arange(300) % 7))


@pytest.mark.parametrize("kernel", SIGNATURES.values(), ids=SIGNATURES.keys())
def test_signed_words_follow_the_byte_classes_on_any_bytes(kernel):
    """Random bytes (invalid UTF-8: stray continuation bytes after letters, after separators, after a
    word's lead) are signed as the words of the one-loop byte-class reading (naive_byte_words),
    one text or many."""
    rng = np.random.default_rng(5)
    parts = []
    for size in (0, 1, 2, 3, 50, 4000):
        data = rng.integers(0, 256, size).astype(np.uint8)
        data[rng.random(size) < 0.3] = 0x80  # many continuation bytes
        parts.append(data)
        for k, bins in ((1, 64), (3, 128)):
            offsets = np.array([0, size])
            sig, words = kernel(data if size else np.zeros(1, np.uint8), offsets, k, signature_rows(offsets, bins))
            want = naive_byte_words(data.tolist())
            assert words.tolist() == [len(want)]
            assert rows_of(sig) == [naive_words_signature(want, k, bins)]
    offsets = np.cumsum([0] + [len(p) for p in parts])
    sig, words = kernel(np.concatenate(parts), offsets, 3, signature_rows(offsets, 128))
    assert words.tolist() == [len(naive_byte_words(p.tolist())) for p in parts]
    assert rows_of(sig) == [naive_words_signature(naive_byte_words(p.tolist()), 3, 128) for p in parts]
    assert naive_byte_words(list(b"ab\x80 \xc3\xa9\x80x")) == naive_byte_words(list(b"ab")) + naive_byte_words(
        list(b"\xc3\xa9\x80x"))  # not vacuous: the stray byte after "b" separates, after "é" it joins


@pytest.mark.parametrize("kernel", ALL_PAIRS.values(), ids=ALL_PAIRS.keys())
@pytest.mark.parametrize("bins", [128, 300])
def test_all_pairs_above_when_low_bytes_agree(kernel, bins):
    """Bins that differ only above their low byte pass the low-byte filter: the pair is still decided
    on the whole bins (the filter only rejects). 300 bins: 38 words of prints, counted in chunks."""
    rng = np.random.default_rng(9)
    base = rng.integers(0, 2**62, bins).astype(np.uint64)
    rows = np.repeat(base[None, :], 6, axis=0)
    for t, differing in enumerate((0, 40, bins // 2 - 1, bins // 2, bins // 2 + 1, bins)):
        rows[t, :differing] += np.uint64(1 << 40)  # same low byte, another value
    rows[5, :] = EMPTY  # an empty text
    for threshold in (0.0, 0.49, 0.5, 0.51, 0.7, 1.0):
        got = as_dict(*kernel(rows, threshold))
        assert got == naive_pairs_above(rows_of(rows), threshold)
        assert list(got) == sorted(got)
    got = as_dict(*kernel(rows, 0.5))  # not vacuous: (0, 4) agrees on every low byte, on half the bins less one
    assert (0, 3) in got and (0, 4) not in got and len(got) == 9


def test_lsh_pairs_come_in_bucket_order_with_half_equal_keys():
    """Pairs in the documented order (band, then bucket by first text, then members in text order)
    with keys that share the table slot and one 32-bit half of another bucket's key."""
    rng = np.random.default_rng(3)
    halves = np.array([0, 1 << 32, (1 << 32) + 1, 1, 7 << 40, (7 << 40) + (1 << 20)], dtype=np.uint64)
    keys = rng.choice(halves, (3, 60)).astype(np.uint64)
    keys[rng.random((3, 60)) < 0.1] = EMPTY
    for max_bucket in (1, 5, 400):
        i, j = _lsh_pairs(keys, max_bucket)
        want = naive_lsh_pair_list([[int(k) for k in band] for band in keys], max_bucket)
        assert list(zip(i.tolist(), j.tolist())) == want
        assert len(want) > 60
