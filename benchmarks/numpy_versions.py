"""Numpy-vectorised versions of the kernels, the baseline each kernel is measured against."""

from __future__ import annotations

import numpy as np


def cosine_pairs_numpy(emb: np.ndarray, threshold: float, block: int = 1024):
    """Upper-triangle blocks in float64 with np.nonzero extraction."""
    norms = np.linalg.norm(emb, axis=1)
    unit = emb / np.where(norms > 0, norms, 1.0)[:, None]
    parts_i, parts_j, parts_w = [], [], []
    n = len(emb)
    for start in range(0, n, block):
        tile = unit[start:start + block] @ unit[start:].T
        rows, cols = np.nonzero(np.triu(tile, k=1) >= threshold)
        parts_i.append(rows + start)
        parts_j.append(cols + start)
        parts_w.append(tile[rows, cols])
    return np.concatenate(parts_i), np.concatenate(parts_j), np.concatenate(parts_w)


def signature_pairs_numpy(sig: np.ndarray, threshold: float, block: int = 32):
    """All-pairs equal-bin share by broadcasting blocks of rows against the rest."""
    n = len(sig)
    parts_i, parts_j = [], []
    for start in range(0, n, block):
        stop = min(start + block, n)
        same = (sig[start:stop, None, :] == sig[None, start:, :]).mean(axis=2)
        rows, cols = np.nonzero(np.triu(same >= threshold, k=1))
        parts_i.append(rows + start)
        parts_j.append(cols + start)
    return np.concatenate(parts_i), np.concatenate(parts_j)


def freshness_numpy(decay, age, has, valid, missing, zero_outside):
    f = np.where(has, np.exp(-decay * age), missing)
    return np.where(zero_outside & ~valid, 0.0, f)
