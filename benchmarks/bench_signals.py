"""Signal kernels against numpy-vectorised and pure-Python versions (pytest-benchmark).

Run: pytest benchmarks/bench_signals.py --benchmark-only --benchmark-json=signals.json
then: python benchmarks/report_signals.py signals.json
"""

import numpy as np
import pytest
from data import embeddings, texts
from naive_signals import naive_cosine_pairs, naive_freshness, naive_signature
from numpy_versions import cosine_pairs_numpy, freshness_numpy, signature_pairs_numpy

import ctxselect
from ctxselect.kernels.pairs import _freshness
from ctxselect.features.similarity import cosine_pairs, minhash_pairs, text_signatures

SIZES = [100, 1_000, 5_000, 20_000]
COSINE_THRESHOLD = 0.8
_cache = {}


def cached(kind, n):
    key = (kind, n)
    if key not in _cache:
        _cache[key] = embeddings(n) if kind == "emb" else texts(n)
    return _cache[key]


def record(benchmark, **info):
    benchmark.extra_info.update(info)


@pytest.mark.parametrize("n", SIZES)
def test_cosine_kernel(benchmark, n):
    emb = cached("emb", n)
    cosine_pairs(emb[:10], COSINE_THRESHOLD)  # compiled before timing
    i, _, _ = benchmark(cosine_pairs, emb, COSINE_THRESHOLD)
    record(benchmark, kernel="cosine", impl="kernel", n=n, pairs_compared=n * (n - 1) // 2, kept=len(i))


@pytest.mark.parametrize("n", SIZES)
def test_cosine_numpy(benchmark, n):
    emb = cached("emb", n)
    i, _, _ = benchmark(cosine_pairs_numpy, emb, COSINE_THRESHOLD)
    record(benchmark, kernel="cosine", impl="numpy", n=n, pairs_compared=n * (n - 1) // 2, kept=len(i))


@pytest.mark.parametrize("n", [100])
def test_cosine_python(benchmark, n):
    emb = cached("emb", n).tolist()
    benchmark.pedantic(naive_cosine_pairs, args=(emb, COSINE_THRESHOLD), rounds=3)
    record(benchmark, kernel="cosine", impl="python", n=n, pairs_compared=n * (n - 1) // 2)


@pytest.mark.parametrize("n", SIZES)
def test_signatures_kernel(benchmark, n):
    docs = cached("txt", n)
    text_signatures(docs[:5])
    sig, words = benchmark(text_signatures, docs)
    record(benchmark, kernel="signatures", impl="kernel", n=n, words=int(words.sum()))


@pytest.mark.parametrize("n", [100])
def test_signatures_python(benchmark, n):
    docs = cached("txt", n)
    benchmark.pedantic(lambda: [naive_signature(t, 3, 128) for t in docs], rounds=2)
    record(benchmark, kernel="signatures", impl="python", n=n, words=n * 300)


@pytest.mark.parametrize("n", SIZES)
def test_text_redundancy_end_to_end(benchmark, n):
    """Signatures, candidate pairs (exhaustive or LSH) and estimates, from raw texts."""
    docs = cached("txt", n)
    minhash_pairs(text_signatures(docs[:50])[0], 0.5)

    def run():
        sig, _ = text_signatures(docs)
        return minhash_pairs(sig, 0.5)

    i, _, _ = benchmark(run)
    record(benchmark, kernel="text_redundancy", impl="kernel", n=n, kept=len(i), words=n * 300)


@pytest.mark.parametrize("n", [100, 1_000, 5_000])
def test_signature_all_pairs_kernel(benchmark, n):
    sig, _ = text_signatures(cached("txt", n))
    minhash_pairs(sig[:10], 0.5, exhaustive=True)
    i, _, _ = benchmark(minhash_pairs, sig, 0.5, exhaustive=True)
    record(benchmark, kernel="minhash_all_pairs", impl="kernel", n=n, pairs_compared=n * (n - 1) // 2, kept=len(i))


@pytest.mark.parametrize("n", [100, 1_000])
def test_signature_all_pairs_numpy(benchmark, n):
    sig, _ = text_signatures(cached("txt", n))
    i, _ = benchmark(signature_pairs_numpy, sig, 0.5)
    record(benchmark, kernel="minhash_all_pairs", impl="numpy", n=n, pairs_compared=n * (n - 1) // 2, kept=len(i))


def freshness_args(n):
    """decay, age, has_timestamp, valid_now, missing value, zero outside the window."""
    rng = np.random.default_rng(n)
    return (rng.uniform(0, .05, n), rng.uniform(0, 900, n), rng.random(n) < .9, rng.random(n) < .9, 1.0, True)


@pytest.mark.parametrize("n", SIZES)
def test_freshness_kernel(benchmark, n):
    benchmark(_freshness, *freshness_args(n))
    record(benchmark, kernel="freshness", impl="kernel", n=n)


@pytest.mark.parametrize("n", SIZES)
def test_freshness_numpy(benchmark, n):
    benchmark(freshness_numpy, *freshness_args(n))
    record(benchmark, kernel="freshness", impl="numpy", n=n)


@pytest.mark.parametrize("n", [100])
def test_freshness_python(benchmark, n):
    args = [a.tolist() if hasattr(a, "tolist") else a for a in freshness_args(n)]
    benchmark(naive_freshness, *args)
    record(benchmark, kernel="freshness", impl="python", n=n)


@pytest.mark.parametrize("n", [100, 1_000, 5_000])
def test_signals_end_to_end(benchmark, n):
    """The public signals() on packed candidates with texts (no embeddings), conflict fields and
    versions."""
    docs = cached("txt", n)
    cands = [{"id": str(k), "source": f"s{k % 5}", "tokens": 400, "relevance": 0.5, "text": docs[k],
              "doc_id": f"d{k % (n // 4 + 1)}", "version": str(k % 3),
              "fields": {"x": k % 7} if k % 10 == 0 else {}} for k in range(n)]
    packed = ctxselect.pack(cands, {"token_budget": 4000, "conflict_fields": ["x"], "now": 0})
    ctxselect.signals(ctxselect.pack(cands[:20], {"token_budget": 4000, "conflict_fields": ["x"], "now": 0}))
    result = benchmark(ctxselect.signals, packed)
    record(benchmark, kernel="signals", impl="public", n=n, kept=len(result.redundancy),
           contradictions=len(result.contradictions))
