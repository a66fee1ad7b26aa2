"""MinHash signatures of word shingles, LSH banding and signature similarity, jitted.

Texts arrive as one lower-cased UTF-8 byte buffer with offsets. A word is the one word of
``ctxselect.model.tokens.WORD``, a maximal run of ASCII letters and digits or code points
U+00C0–U+FFFF (two-byte sequences from lead byte 0xC3, three-byte sequences); a shingle is ``k`` consecutive words (the whole text when it
has fewer). Signatures use one-permutation hashing: each shingle's 64-bit hash picks one of ``K``
bins and competes for that bin's minimum; empty bins are filled by rotation (the next non-empty
bin to the right, plus an offset per step), so every signature of a non-empty text is dense. The
share of equal bins of two signatures estimates the Jaccard similarity of their shingle sets.
"""

from __future__ import annotations

import numpy as np
from numba import prange, uint64

from ctxselect._config import TOLERANCE, parallel, serial, serial_twin

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_ROTATION_STEP = np.uint64(0x9E3779B97F4A7C15)


@serial
def _mix64(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of x."""
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x ^ (x >> uint64(31))


@serial
def _word_hashes(buf, start, end):
    """FNV-1a hashes of the words of buf[start:end]."""
    out = np.empty((end - start) // 2 + 1, dtype=np.uint64)
    count = 0
    h = _FNV_OFFSET
    in_word = False
    lead_is_word = False  # the class of the multi-byte sequence a continuation byte belongs to
    for p in range(start, end):
        b = buf[p]
        if b < 128:
            is_word = (b >= 48 and b <= 57) or (b >= 97 and b <= 122) or (b >= 65 and b <= 90)
            lead_is_word = False
        elif b >= 0xC0:  # a lead byte: U+00C0..U+07FF (from 0xC3) and U+0800..U+FFFF are word characters
            is_word = b >= 0xC3 and b < 0xF0
            lead_is_word = is_word
        else:  # a continuation byte
            is_word = lead_is_word
        if is_word:
            if not in_word:
                h = _FNV_OFFSET
                in_word = True
            h = (h ^ uint64(b)) * _FNV_PRIME
        elif in_word:
            out[count] = h
            count += 1
            in_word = False
    if in_word:
        out[count] = h
        count += 1
    return out[:count]


@parallel
def _signatures(buf, offsets, shingle, bins):
    """One signature row (``bins`` uint64) per text; also each text's word count."""
    n = offsets.shape[0] - 1
    sig = np.empty((n, bins), dtype=np.uint64)
    words_per_text = np.zeros(n, dtype=np.int64)
    for t in prange(n):
        row = sig[t]
        for b in range(bins):
            row[b] = EMPTY
        words = _word_hashes(buf, offsets[t], offsets[t + 1])
        w = words.shape[0]
        words_per_text[t] = w
        if w == 0:
            continue
        k = min(shingle, w)
        for s in range(w - k + 1):
            h = uint64(k)
            for m in range(k):
                h = _mix64(h ^ words[s + m])
            b = h % uint64(bins)
            value = _mix64(h ^ _ROTATION_STEP)
            if value < row[b]:
                row[b] = value
        # rotation densification: an empty bin borrows from the next originally non-empty bin to
        # its right (circularly), mixed with the distance, so equal patterns stay equal
        original = row.copy()
        for b in range(bins):
            if original[b] == EMPTY:
                step = 1
                src = (b + 1) % bins
                while original[src] == EMPTY:
                    step += 1
                    src = (src + 1) % bins
                row[b] = _mix64(original[src] + uint64(step) * _ROTATION_STEP)
    return sig, words_per_text


@serial
def _equal_bins(sig, i, j):
    """How many bins the signatures of texts i and j share; -1 when either text is empty."""
    if sig[i, 0] == EMPTY or sig[j, 0] == EMPTY:
        return -1
    same = 0
    for k in range(sig.shape[1]):
        if sig[i, k] == sig[j, k]:
            same += 1
    return same


@serial
def _signature_similarity(sig, pair_i, pair_j):
    """Share of equal bins for each pair; 0 when either text is empty (all bins EMPTY)."""
    bins = sig.shape[1]
    out = np.empty(pair_i.shape[0], dtype=np.float64)
    for e in range(pair_i.shape[0]):
        out[e] = max(_equal_bins(sig, pair_i[e], pair_j[e]), 0) / bins
    return out


@parallel
def _all_pairs_above(sig, threshold):
    """Every pair (i < j) whose signature similarity is >= threshold, row-major order."""
    n, bins = sig.shape
    need = int(np.ceil(threshold * bins - TOLERANCE))
    counts = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        c = 0
        for j in range(i + 1, n):
            if _equal_bins(sig, i, j) >= need:
                c += 1
        counts[i] = c
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        offsets[i + 1] = offsets[i] + counts[i]
    out_i = np.empty(offsets[n], dtype=np.int64)
    out_j = np.empty(offsets[n], dtype=np.int64)
    out_w = np.empty(offsets[n], dtype=np.float64)
    for i in prange(n):
        k = offsets[i]
        for j in range(i + 1, n):
            same = _equal_bins(sig, i, j)
            if same >= need:
                out_i[k] = i
                out_j[k] = j
                out_w[k] = same / bins
                k += 1
    return out_i, out_j, out_w


@serial
def _band_keys(sig, bands):
    """One 64-bit key per (text, band): a hash of the band's rows; EMPTY for empty texts."""
    n, bins = sig.shape
    rows = bins // bands
    keys = np.empty((bands, n), dtype=np.uint64)
    for t in range(n):
        for band in range(bands):
            if sig[t, 0] == EMPTY:
                keys[band, t] = EMPTY
                continue
            h = uint64(band)
            for r in range(rows):
                h = _mix64(h ^ sig[t, band * rows + r])
            keys[band, t] = h
    return keys


@serial
def _run_end(sorted_keys, start):
    """End (exclusive) of the run of equal keys that begins at ``start``."""
    end = start + 1
    while end < sorted_keys.shape[0] and sorted_keys[end] == sorted_keys[start]:
        end += 1
    return end


@serial
def _bucket_pairs(sorted_keys, order, max_bucket):
    """Pairs of texts sharing a key (within one band), given the band's keys sorted with their
    positions ``order``. Buckets larger than ``max_bucket`` contribute only a chain of neighbours
    (enough to connect their members) instead of every pair. Pairs are (min, max)."""
    n = sorted_keys.shape[0]
    count = 0
    start = 0
    while start < n:
        end = _run_end(sorted_keys, start)
        size = end - start
        if sorted_keys[start] != EMPTY and size > 1:
            count += size * (size - 1) // 2 if size <= max_bucket else size - 1
        start = end
    out_i = np.empty(count, dtype=np.int64)
    out_j = np.empty(count, dtype=np.int64)
    k = 0
    start = 0
    while start < n:
        end = _run_end(sorted_keys, start)
        if sorted_keys[start] != EMPTY and end - start > 1:
            chain = end - start > max_bucket
            for a in range(start, end):
                for b in range(a + 1, a + 2 if chain else end):
                    if b >= end:
                        break
                    x, y = order[a], order[b]
                    out_i[k] = min(x, y)
                    out_j[k] = max(x, y)
                    k += 1
        start = end
    return out_i, out_j


# Serial twins for small inputs: launching the parallel kernels costs milliseconds (thread wake-up,
# and waiting on BLAS's spinning threads), more than the work itself for a few dozen texts.
_signatures_serial = serial_twin(_signatures, "_signatures_serial")
_all_pairs_above_serial = serial_twin(_all_pairs_above, "_all_pairs_above_serial")
