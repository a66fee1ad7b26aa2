"""MinHash signatures compared, jitted: signature similarity, all pairs above a threshold, LSH banding.

The signatures (one row of ``K`` uint64 bins per text, ``EMPTY`` in every bin of a text without
words) are made by the word scan of :mod:`ctxselect.kernels.words`; the share of equal bins of
two signatures estimates the Jaccard similarity of their word-shingle sets.
"""

from __future__ import annotations

import numpy as np
from numba import prange, uint64

from ctxselect._config import TOLERANCE, parallel, serial, serial_twin

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


@serial
def _mix64(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of x."""
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x ^ (x >> uint64(31))


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


_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_ONES = np.uint64(0x0101010101010101)


@serial
def _byte_prints(sig):
    """Each bin's low byte, eight bins to a uint64 (n x ceil(bins / 8); padding bytes 0)."""
    n, bins = sig.shape
    prints = np.zeros((n, (bins + 7) // 8), dtype=np.uint64)
    for i in range(n):
        for k in range(bins):
            prints[i, k >> 3] |= (sig[i, k] & uint64(0xFF)) << uint64(8 * (k & 7))
    return prints


@serial
def _equal_prints(prints, i, j):
    """How many bytes of rows i and j of :func:`_byte_prints` are equal (padding included): at least
    the number of equal bins, so a pair below ``need`` here is below it exactly. A byte lane of
    ``lanes`` counts the zero bytes of the XOR over up to 31 words (8 x 31 < 256 when the lanes are
    summed into the top byte): one multiply per 31 words. The loop without chunks, for up to 248
    bins, is the fast one (0.31 ms for n = 200 at 128 bins; with a multiply per word 0.41, chunked
    with ``min`` 0.78)."""
    words = prints.shape[1]
    if words <= 31:
        lanes = uint64(0)
        for w in range(words):
            x = prints[i, w] ^ prints[j, w]
            lanes += ~(((x & _LOW7) + _LOW7) | x | _LOW7) >> uint64(7)  # 1 in each zero byte's lane
        return np.int64((lanes * _ONES) >> uint64(56))
    same = 0
    for first in range(0, words, 31):
        lanes = uint64(0)
        for w in range(first, min(words, first + 31)):
            x = prints[i, w] ^ prints[j, w]
            lanes += ~(((x & _LOW7) + _LOW7) | x | _LOW7) >> uint64(7)
        same += np.int64((lanes * _ONES) >> uint64(56))
    return same


@parallel
def _all_pairs_above(sig, threshold):
    """Every pair (i < j) whose signature similarity is >= threshold, row-major order.

    A pair is compared on its bins only when the bins' low bytes (:func:`_byte_prints`, 16 uint64
    a row at 128 bins) agree in ``need`` places or more: an exact filter (equal bins have equal
    low bytes) that reads an eighth of the data, the bytes compared eight at a time. At n = 200
    (captured from select(), threshold 0.5: 10 of 19,900 pairs pass the filter), in-process A/B,
    medians of 31: 0.60 -> 0.21 ms."""
    n, bins = sig.shape
    need = int(np.ceil(threshold * bins - TOLERANCE))
    prints = _byte_prints(sig)
    padding = prints.shape[1] * 8 - bins
    counts = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        c = 0
        for j in range(i + 1, n):
            if _equal_prints(prints, i, j) - padding >= need and _equal_bins(sig, i, j) >= need:
                c += 1
        counts[i] = c
    offsets = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        offsets[i + 1] = offsets[i] + counts[i]
    out_i = np.empty(offsets[n], dtype=np.int64)
    out_j = np.empty(offsets[n], dtype=np.int64)
    out_w = np.empty(offsets[n], dtype=np.float64)
    for i in prange(n):
        if counts[i] == 0:
            continue  # most rows hold no pair: not compared again
        k = offsets[i]
        for j in range(i + 1, n):
            if _equal_prints(prints, i, j) - padding < need:
                continue
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
def _lsh_pairs(keys, max_bucket):
    """Pairs (i < j) of texts sharing a key in a band, for every band of ``keys`` (bands x n, from
    :func:`_band_keys`): every pair of a bucket of at most ``max_bucket`` texts, a chain of
    neighbours in text order (enough to connect its members) for a larger one. Unique within a
    band; a pair found in several bands comes once per band.

    Buckets are found with an open-addressing table of each band's keys (the keys are hashes;
    linear probing), its members linked in text order: no sort. A slot is one 16-byte record,
    the key and (the bucket's first text + 1) << 32 | its last text (0: an empty slot), so a probe
    reads one cache line (four arrays of 8-byte fields were four lines, the table 4 MB at n =
    50,000: 0.68-0.71x the time at 20,000 and 50,000, 0.85x at 2,000; two uint32 halves of the key
    in a record of four uint32 were 1.07x at 2,000); a bucket's size is kept at its first text.
    Texts: fewer than 2^32 - 1."""
    bands, n = keys.shape
    size = 16
    while size < 2 * n:
        size *= 2
    mask = uint64(size - 1)
    low = uint64(0xFFFFFFFF)
    table = np.zeros((size, 2), dtype=np.uint64)
    members_of = np.empty(n, dtype=np.int64)  # a bucket's size, at its first text
    bucket_of = np.empty(n, dtype=np.int64)  # a text's slot; -1 for an empty text
    following = np.empty(n, dtype=np.int64)  # the next text of its bucket; -1 at the end
    out_i = np.empty(max(16, 2 * n), dtype=np.int64)
    out_j = np.empty(max(16, 2 * n), dtype=np.int64)
    count = 0
    for band in range(bands):
        if band > 0:
            table[:, 1] = 0
        band_keys = keys[band]
        for t in range(n):
            key = band_keys[t]
            following[t] = -1
            if key == EMPTY:
                bucket_of[t] = -1
                continue
            slot = np.int64(key & mask)
            while table[slot, 1] != 0 and table[slot, 0] != key:
                slot = (slot + 1) & (size - 1)
            texts = table[slot, 1]
            if texts == 0:
                table[slot, 0] = key
                texts = uint64(t + 1) << uint64(32)
                members_of[t] = 1
            else:
                following[np.int64(texts & low)] = t
                members_of[np.int64(texts >> uint64(32)) - 1] += 1
            table[slot, 1] = (texts & ~low) | uint64(t)
            bucket_of[t] = slot
        for t in range(n):
            slot = bucket_of[t]
            if slot < 0 or np.int64(table[slot, 1] >> uint64(32)) - 1 != t or members_of[t] < 2:
                continue  # each bucket once, from its first text
            members = members_of[t]
            need = members * (members - 1) // 2 if members <= max_bucket else members - 1
            if count + need > out_i.shape[0]:
                grown = max(2 * out_i.shape[0], count + need)
                out_i = np.concatenate((out_i[:count], np.empty(grown - count, dtype=np.int64)))
                out_j = np.concatenate((out_j[:count], np.empty(grown - count, dtype=np.int64)))
            a = t
            while a >= 0:
                b = following[a]
                while b >= 0:
                    out_i[count] = a
                    out_j[count] = b
                    count += 1
                    if members > max_bucket:
                        break  # a chain: the next member only
                    b = following[b]
                a = following[a]
    return out_i[:count], out_j[:count]


# Serial twins for small inputs: launching the parallel kernels costs milliseconds (thread wake-up,
# and waiting on BLAS's spinning threads), more than the work itself for a few dozen texts.
_all_pairs_above_serial = serial_twin(_all_pairs_above, "_all_pairs_above_serial")
