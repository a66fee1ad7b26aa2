"""Sparse similarity pairs through the wrappers: blocked cosine, MinHash signatures and pairs,
LSH banding, and the choice between the serial and the parallel kernels (above the cut-offs the
parallel kernels run, and their results equal the plain-Python twins)."""

import random

import numpy as np
import pytest

from ctxselect.errors import InputError
from ctxselect.features import similarity
from ctxselect.features.similarity import (
    cosine_pairs,
    lsh_bands,
    minhash_pairs,
    text_signatures,
)
from ctxselect.features.tiles import Tiles
from ctxselect.kernels.minhash import EMPTY
from tests.naive.signals import (
    naive_cosine_pairs,
    naive_pairs_above,
    naive_signature,
    naive_signature_similarity,
)

VOCAB = [f"w{k}" for k in range(60)] + ["ünïcode", "naïve", "2024", "3,559"]


def random_text(rng, words):
    return " ".join(rng.choice(VOCAB) for _ in range(words))


def as_dict(i, j, w):
    return {(int(a), int(b)): float(x) for a, b, x in zip(i, j, w)}


def spy(monkeypatch, name):
    """Replace ``similarity.<name>`` by a wrapper that counts its calls."""
    calls = []
    kernel = getattr(similarity, name)
    monkeypatch.setattr(similarity, name, lambda *args: calls.append(1) or kernel(*args))
    return calls


def _assert_pairs_match(got, want, threshold, tol):
    """Equal pair sets and weights, except pairs within ``tol`` of the threshold (float32)."""
    for key in set(got) ^ set(want):
        value = want.get(key, got.get(key))
        assert abs(value - threshold) <= tol, (key, value)
    for key in set(got) & set(want):
        assert got[key] == pytest.approx(want[key], abs=tol)


@pytest.mark.parametrize("columns", [None, 1, 9, 64])
@pytest.mark.parametrize("n,dim,threshold,block", [(2, 3, 0.5, 1024), (40, 8, 0.3, 7), (150, 16, 0.2, 64),
                                                   (150, 16, -1.0, 1024), (33, 4, 0.9, 5)])
def test_cosine_pairs_match_twin(n, dim, threshold, block, columns, monkeypatch):
    if columns is not None:  # products in column blocks (TILE_COLUMNS is 4,096)
        monkeypatch.setattr(similarity, "TILE_COLUMNS", columns)
    rng = np.random.default_rng(n * dim)
    emb = rng.normal(size=(n, dim))
    emb[3 % n] = emb[0] * 2.5  # a parallel copy: cosine 1
    got = cosine_pairs(emb, threshold, block=block)
    _assert_pairs_match(as_dict(*got), naive_cosine_pairs(emb.tolist(), threshold), threshold, 1e-5)
    keys = list(zip(got[0].tolist(), got[1].tolist()))
    assert keys == sorted(set(keys)) and all(a < b for a, b in keys)


def test_cosine_edges():
    assert len(cosine_pairs(np.zeros((0, 4)), 0.5)[0]) == 0
    assert len(cosine_pairs(np.ones((1, 4)), 0.5)[0]) == 0
    zero = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    assert as_dict(*cosine_pairs(zero, 0.5)) == pytest.approx({(1, 2): 1.0})
    ties = np.ones((5, 3))
    assert len(cosine_pairs(ties, 1.0)[0]) == 10  # all equal: every pair, exactly at threshold
    with pytest.raises(InputError, match="embedding.*NaN or infinity"):
        cosine_pairs(np.array([[1.0, np.nan], [1.0, 0.0]]), 0.5, ids=("a", "b"))
    with pytest.raises(InputError, match=r"embeddings.*\(n, d\) array.*shape \(5,\)"):
        cosine_pairs(np.ones(5), 0.5)


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


# -- serial or parallel: the cut-offs -------------------------------------------------------------

def test_text_signatures_above_the_byte_cutoff_run_the_parallel_kernel(monkeypatch):
    monkeypatch.setattr(similarity, "SERIAL_BYTES", 200_000)  # the real cut-off would need 32 MB of text
    rng = random.Random(21)
    texts, size = [], 0
    while size <= similarity.SERIAL_BYTES:
        texts.append(random_text(rng, rng.randint(200, 900)))
        size += len(texts[-1].encode("utf-8"))
    parallel, serial = spy(monkeypatch, "_signatures"), spy(monkeypatch, "_signatures_serial")
    sig, words = text_signatures(texts, shingle_size=3, bins=64)
    assert (len(parallel), len(serial)) == (1, 0)
    for t, text in enumerate(texts):
        assert sig[t].tolist() == naive_signature(text, 3, 64), t
    small, _ = text_signatures(texts[:3], shingle_size=3, bins=64)
    assert (len(parallel), len(serial)) == (1, 1)  # below the cut-off: the serial twin
    np.testing.assert_array_equal(small, sig[:3])


def test_exhaustive_pairs_above_the_pair_cutoff_run_the_parallel_kernel(monkeypatch):
    n = 1
    while n * (n - 1) // 2 < similarity.SERIAL_PAIRS:
        n += 1
    rng = random.Random(22)
    base = [random_text(rng, 25) for _ in range(n - n // 3 - 2)]
    texts = base + [t + " w7" for t in base[: n // 3]] + ["", ""]  # near-duplicates and empty texts
    sig, _ = text_signatures(texts)
    parallel, serial = spy(monkeypatch, "_all_pairs_above"), spy(monkeypatch, "_all_pairs_above_serial")
    got = as_dict(*minhash_pairs(sig, 0.5, exhaustive=True))
    assert (len(parallel), len(serial)) == (1, 0)
    want = naive_pairs_above([list(map(int, r)) for r in sig], 0.5)
    assert len(want) >= n // 3  # precondition: every near-duplicate pair is above 0.5
    assert got == want and list(got) == sorted(got)
    minhash_pairs(sig[:20], 0.5, exhaustive=True)
    assert (len(parallel), len(serial)) == (1, 1)  # below the cut-off: the serial twin


def test_row_pairs_in_column_blocks_take_any_integer_rows(monkeypatch):
    """The rows are shifted by each block's first column: unsigned rows must not wrap around."""
    monkeypatch.setattr(similarity, "TILE_COLUMNS", 2)
    unit = np.ones((4, 2), np.float32) / np.sqrt(np.float32(2))
    want = [(0, 1), (1, 2), (1, 3)]
    for kind in ("float32", "int16", "int8"):  # (the integer products' kernels need AVX-512 VNNI)
        if kind != "float32" and similarity.COSINE_PRODUCTS == "float32":
            continue
        products = Tiles(unit, 4, similarity.TILE_COLUMNS, np.float32(0.5), kind=kind, serial=True)
        for dtype in (np.int64, np.int32, np.uint64, np.uint8):
            i, j, _ = similarity._row_pairs(products, np.array([1], dtype), np.arange(4), np.full(1, -1))
            assert sorted(zip(i.tolist(), j.tolist())) == want, (kind, dtype)


@pytest.mark.parametrize("given", ["matrix", "candidates"])
def test_tiny_embeddings_are_as_similar_as_their_directions(given):
    # values of 1e-170 square to 0: their rows were zero rows, "similar to nothing", and a near-duplicate
    # went in (found by a helper's hostile-input hunt); cosine similarity does not depend on the scale
    import ctxselect

    chunks = [{"id": "a", "source": "s1", "relevance": 0.9, "tokens": 10, "text": "alpha paragraph about refunds"},
              {"id": "b", "source": "s2", "relevance": 0.85, "tokens": 10, "text": "beta paragraph on billing"},
              {"id": "c", "source": "s3", "relevance": 0.8, "tokens": 10, "text": "gamma note regarding outages"}]
    emb = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # a and b point the same way
    reqs = {"token_budget": 22, "gate": {"max_token_utilization": 1.0}}
    picks = []
    for scale in (1.0, 1e-170, 1e-300):
        if given == "matrix":
            sel = ctxselect.select(chunks, reqs, embeddings=emb * scale)
        else:
            sel = ctxselect.select([ctxselect.Candidate.from_dict({**c, "embedding": (emb[k] * scale).tolist()})
                                    for k, c in enumerate(chunks)], reqs)
        picks.append((sel.ids, sel.status, round(sel.objective, 9), sel.excluded))
    assert picks[0] == (["a", "c"], "optimal", picks[0][2], {"b": "near-duplicate of `a`"})
    assert picks[1] == picks[0] and picks[2] == picks[0]
