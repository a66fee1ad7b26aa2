"""Every signal kernel against its plain-Python twin: fixed, random and edge inputs."""

import random

import numpy as np
import pytest
from tests.naive.signals import (
    naive_components,
    naive_cosine_pairs,
    naive_differing_code_pairs,
    naive_freshness,
    naive_jaccard,
    naive_signature,
    naive_signature_similarity,
)

from ctxselect.errors import InputError
from ctxselect.kernels.minhash import EMPTY, _signature_similarity
from ctxselect.kernels.pairs import _components, _differing_code_pairs, _freshness
from ctxselect.features.similarity import (
    cosine_pairs,
    lsh_bands,
    minhash_pairs,
    text_signatures,
)

VOCAB = [f"w{k}" for k in range(60)] + ["ünïcode", "naïve", "2024", "3,559"]


def random_text(rng, words):
    return " ".join(rng.choice(VOCAB) for _ in range(words))


def as_dict(i, j, w):
    return {(int(a), int(b)): float(x) for a, b, x in zip(i, j, w)}


# -- freshness ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 7, 200])
@pytest.mark.parametrize("zero_outside", [False, True])
def test_freshness_matches_twin(n, zero_outside):
    rng = np.random.default_rng(n)
    decay = rng.uniform(0, 0.05, n)
    age = rng.uniform(0, 500, n)
    has = rng.random(n) < 0.7
    valid = rng.random(n) < 0.8
    got = _freshness(decay, age, has, valid, 0.25, zero_outside)
    want = naive_freshness(decay, age, has, valid, 0.25, zero_outside)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# -- cosine ------------------------------------------------------------------------------------
def _assert_pairs_match(got, want, threshold, tol):
    """Equal pair sets and weights, except pairs within ``tol`` of the threshold (float32)."""
    for key in set(got) ^ set(want):
        value = want.get(key, got.get(key))
        assert abs(value - threshold) <= tol, (key, value)
    for key in set(got) & set(want):
        assert got[key] == pytest.approx(want[key], abs=tol)


@pytest.mark.parametrize("n,dim,threshold,block", [(2, 3, 0.5, 1024), (40, 8, 0.3, 7), (150, 16, 0.2, 64),
                                                   (150, 16, -1.0, 1024), (33, 4, 0.9, 5)])
def test_cosine_pairs_match_twin(n, dim, threshold, block):
    rng = np.random.default_rng(n * dim)
    emb = rng.normal(size=(n, dim))
    emb[3 % n] = emb[0] * 2.5  # a parallel copy: cosine 1
    got = as_dict(*cosine_pairs(emb, threshold, block=block))
    want = naive_cosine_pairs(emb.tolist(), threshold)
    _assert_pairs_match(got, want, threshold, 1e-5)
    keys = list(as_dict(*cosine_pairs(emb, threshold, block=block)))
    assert keys == sorted(keys)


def test_cosine_edges():
    assert len(cosine_pairs(np.zeros((0, 4)), 0.5)[0]) == 0
    assert len(cosine_pairs(np.ones((1, 4)), 0.5)[0]) == 0
    zero = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    assert as_dict(*cosine_pairs(zero, 0.5)) == pytest.approx({(1, 2): 1.0})
    ties = np.ones((5, 3))
    assert len(cosine_pairs(ties, 1.0)[0]) == 10  # all equal: every pair, exactly at threshold
    with pytest.raises(InputError, match="embedding.*NaN or infinity"):
        cosine_pairs(np.array([[1.0, np.nan], [1.0, 0.0]]), 0.5, ids=("a", "b"))


# -- MinHash -----------------------------------------------------------------------------------
def test_signatures_match_twin_exactly():
    rng = random.Random(3)
    texts = ["", "   ...  ", "one", "Same words here", "same WORDS here!",
             "ünïcode naïve 3,559 people"] + [random_text(rng, rng.randint(1, 80)) for _ in range(30)]
    for k, bins in [(1, 16), (3, 128), (5, 64)]:
        sig, words = text_signatures(texts, shingle_size=k, bins=bins)
        for t, text in enumerate(texts):
            assert sig[t].tolist() == naive_signature(text, k, bins), (t, k)


def test_signature_similarity_matches_twin():
    rng = random.Random(5)
    texts = [random_text(rng, 40) for _ in range(12)] + [""]
    sig, _ = text_signatures(texts)
    i, j = np.triu_indices(len(texts), 1)
    got = _signature_similarity(sig, i.astype(np.int64), j.astype(np.int64))
    rows = [list(map(int, r)) for r in sig]
    want = [naive_signature_similarity(rows[a], rows[b]) for a, b in zip(i, j)]
    np.testing.assert_allclose(got, want)


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
    sig, _ = text_signatures(texts)
    i, j = np.triu_indices(len(texts), 1)
    est = _signature_similarity(sig, i.astype(np.int64), j.astype(np.int64))
    exact = np.array([naive_jaccard(texts[a], texts[b], 3) for a, b in zip(i, j)])
    errors = np.abs(est - exact)
    assert errors.mean() <= 0.04 and errors.max() <= 0.20, (errors.mean(), errors.max())
    assert exact.max() > 0.75 and exact.min() < 0.1  # the sample spans the range


def test_minhash_pairs_exhaustive_match_twin():
    rng = random.Random(2)
    texts = [random_text(rng, 30) for _ in range(25)]
    texts += [t + " w1" for t in texts[:8]] + ["", ""]
    sig, _ = text_signatures(texts)
    got = as_dict(*minhash_pairs(sig, 0.5, exhaustive=True))
    rows = [list(map(int, r)) for r in sig]
    want = {}
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            s = naive_signature_similarity(rows[a], rows[b])
            if s >= 0.5:
                want[(a, b)] = s
    assert got == pytest.approx(want)
    assert all(len(texts[a]) and len(texts[b]) for a, b in got)  # empty texts similar to nothing


def test_lsh_is_a_subset_with_high_recall():
    rng = random.Random(9)
    base = [random_text(rng, 60) for _ in range(150)]
    texts = list(base)
    for text in base[:100]:  # near-duplicates with a few words changed
        words = text.split()
        for _ in range(rng.randint(1, 4)):
            words[rng.randrange(len(words))] = rng.choice(VOCAB)
        texts.append(" ".join(words))
    sig, _ = text_signatures(texts)
    full = as_dict(*minhash_pairs(sig, 0.5, exhaustive=True))
    lsh = as_dict(*minhash_pairs(sig, 0.5, exhaustive=False))
    assert set(lsh) <= set(full)
    assert all(lsh[k] == full[k] for k in lsh)
    strong = {k for k, v in full.items() if v >= 0.6}
    assert len(strong) >= 80
    assert len(strong & set(lsh)) / len(strong) >= 0.95
    keys = list(lsh)
    assert keys == sorted(keys)


def test_lsh_band_choice():
    assert lsh_bands(0.5, 128) == 32
    for t in (0.3, 0.5, 0.7, 0.9):
        b = lsh_bands(t, 128)
        assert (1 / b) ** (b / 128) <= 0.85 * t


def test_identical_and_empty_texts():
    sig, words = text_signatures(["a b c d", "a b c d", "", "x"])
    assert words.tolist() == [4, 4, 0, 1]
    assert (sig[2] == EMPTY).all()
    assert as_dict(*minhash_pairs(sig, 0.9)) == {(0, 1): 1.0}
    assert len(minhash_pairs(text_signatures([])[0].reshape(0, 128), 0.5)[0]) == 0


# -- exact pairs and components ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_differing_code_pairs_match_twin(seed):
    rng = np.random.default_rng(seed)
    n = [0, 1, 5, 30, 80, 120][seed]
    codes = rng.integers(-1, 4, n).astype(np.int64)
    group = rng.integers(-1, 3, n).astype(np.int64)
    got = list(zip(*_differing_code_pairs(codes, np.empty(0, np.int64))))
    assert [tuple(map(int, p)) for p in got] == naive_differing_code_pairs(codes.tolist())
    got = list(zip(*_differing_code_pairs(codes, group)))
    assert [tuple(map(int, p)) for p in got] == naive_differing_code_pairs(codes.tolist(), group.tolist())


@pytest.mark.parametrize("n,m", [(0, 0), (1, 0), (10, 4), (50, 30), (200, 150)])
def test_components_match_twin(n, m):
    rng = np.random.default_rng(n + m)
    i = rng.integers(0, max(n, 1), m).astype(np.int64)
    j = rng.integers(0, max(n, 1), m).astype(np.int64)
    got = _components(n, i, j).tolist()
    assert got == naive_components(n, list(zip(i.tolist(), j.tolist())))
