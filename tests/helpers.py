"""Small helpers shared by test modules (inputs live in strategies.py, reference twins in naive/)."""

from __future__ import annotations

import tracemalloc

import numpy as np

MiB = 1 << 20

def peak_memory(work) -> tuple[object, int]:
    """(result of ``work()``, peak bytes Python allocated while it ran)."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def signature_rows(offsets, bins: int):
    """The signature matrix a signing kernel of ``kernels/words.py`` writes, allocated as its callers
    allocate it (``features.similarity.signature_rows``)."""
    from ctxselect.features.similarity import signature_rows as rows

    return rows(offsets, bins)


def bit_words(dense):
    """Boolean rows (a multiple of 64 columns) as an int8 bit tile: uint64 words, column 64·w + b in bit b of
    word w (the inverse of :func:`bit_rows`)."""
    return np.packbits(dense, axis=1, bitorder="little").view(np.uint64).reshape(len(dense), -1).copy()


def bit_rows(words, count: int | None = None):
    """The first ``count`` rows (default all) of an int8 bit tile (uint64 words, ``kernels/products.py``'s
    ``_int8_masks``) as booleans: column 64·w + b is bit b of word w."""
    words = np.ascontiguousarray(words[:count])
    return np.unpackbits(words.view(np.uint8), bitorder="little").reshape(len(words), -1).astype(bool)
