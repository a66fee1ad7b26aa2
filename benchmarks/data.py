"""Deterministic synthetic inputs for the benchmarks: embeddings and ~300-word texts."""

from __future__ import annotations

import numpy as np

DIM = 384
WORDS_PER_TEXT = 300


def embeddings(n: int, seed: int = 0, duplicate_share: float = 0.02) -> np.ndarray:
    """Unit-ish random vectors with topic structure and a share of near-copies."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(max(1, n // 50), DIM))
    emb = topics[rng.integers(0, len(topics), n)] * 0.35 + rng.normal(size=(n, DIM))
    copies = rng.choice(n, int(n * duplicate_share), replace=False)
    emb[copies] = emb[rng.integers(0, n, len(copies))] + rng.normal(scale=0.05, size=(len(copies), DIM))
    return emb


def texts(n: int, seed: int = 0, duplicate_share: float = 0.05, vocabulary: int = 20_000) -> list[str]:
    """~300-word texts with Zipf-distributed words; a share are edited copies of others."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{k}" for k in range(vocabulary)])
    ranks = np.minimum(rng.zipf(1.3, size=(n, WORDS_PER_TEXT)) - 1, vocabulary - 1)
    rows = vocab[ranks]
    copies = rng.choice(n, int(n * duplicate_share), replace=False)
    for c in copies:
        src = rows[rng.integers(0, n)].copy()
        edits = rng.integers(0, WORDS_PER_TEXT, 6)
        src[edits] = vocab[rng.integers(0, vocabulary, 6)]
        rows[c] = src
    return [" ".join(r) for r in rows]
