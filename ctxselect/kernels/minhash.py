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
_CHUNKS = 256  # the parallel kernel's prange steps: chunks of consecutive texts


@serial
def _mix64(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of x."""
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x ^ (x >> uint64(31))


# Each byte's class for the word scan: 0 an ASCII separator, 1 an ASCII letter or digit, 2 the lead
# byte of a word character's sequence (U+00C0..U+07FF from 0xC3, U+0800..U+FFFF), 3 a continuation
# byte (of the class of its lead), 4 any other lead byte (U+0080..U+00BF, astral code points).
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[48:58] = _BYTE_CLASS[65:91] = _BYTE_CLASS[97:123] = 1
_BYTE_CLASS[0x80:0xC0] = 3
_BYTE_CLASS[0xC0:0xC3] = _BYTE_CLASS[0xF0:] = 4
_BYTE_CLASS[0xC3:0xF0] = 2


@serial
def _word_hashes(buf, start, end, out):
    """The FNV-1a hashes of the words of buf[start:end], into ``out`` (room for
    ``(end - start) // 2 + 1``); how many.

    Two tight loops, over a run of separators then over a word, instead of one loop with the
    state of both (words only at 50,000 texts, 24 MB, alternating: 91-97 -> 81-83 ms). A byte's class decides,
    except a continuation byte's, which has the class of the sequence's lead (``lead_is_word``,
    set by every byte of another class: a stray continuation after an ASCII letter separates)."""
    count = 0
    lead_is_word = False
    p = start
    while p < end:
        while p < end:  # separators
            kind = _BYTE_CLASS[buf[p]]
            if kind == 1:
                lead_is_word = False
                break
            if kind != 3:
                lead_is_word = kind == 2
            if lead_is_word:
                break
            p += 1
        if p == end:
            break
        h = _FNV_OFFSET
        while p < end:  # a word, from its first byte
            b = buf[p]
            kind = _BYTE_CLASS[b]
            if kind == 1:
                lead_is_word = False
            elif kind != 3:
                lead_is_word = kind == 2
                if not lead_is_word:
                    break
            elif not lead_is_word:
                break
            h = (h ^ uint64(b)) * _FNV_PRIME
            p += 1
        out[count] = h
        count += 1
    return count


@serial
def _sign_texts(buf, offsets, first, last, shingle, bins, sig, words_per_text):
    """The signature rows and word counts of the texts first..last-1 (one scratch for their words).

    A text's bins are built in a local row, then densified into its row of ``sig`` in one write
    (no 2-D index in the inner loops). A shingle's minimum is kept with ``min`` (no branch: about
    half the bins are first filled, so the branch was unpredictable); densification finds each
    empty bin's source in one backward scan, then mixes every bin and keeps the filled bins'
    values (a loop without branches, which LLVM vectorises: 128 mixes cost less than about 70
    mispredicted branches). With the word scan of :func:`_word_hashes`, serial, on select()'s
    captured inputs (in-process A/B, medians of 11): n = 200 0.64 -> 0.52 ms, 2,000 6.3 -> 4.4,
    20,000 68 -> 44, 50,000 186 -> 134."""
    largest = 0
    for t in range(first, last):
        largest = max(largest, (offsets[t + 1] - offsets[t]) // 2 + 1)
    words = np.empty(largest, dtype=np.uint64)
    bin_of, value_of = np.empty(largest, dtype=np.uint64), np.empty(largest, dtype=np.uint64)  # per shingle
    row = np.empty(bins, dtype=np.uint64)
    source_of = np.empty(bins, dtype=np.int64)  # an empty bin's source, counted past the end when it wraps
    ubins = uint64(bins)
    mask = uint64(bins - 1)
    power_of_two = bins & (bins - 1) == 0
    for t in range(first, last):
        out = sig[t]
        w = _word_hashes(buf, offsets[t], offsets[t + 1], words)
        words_per_text[t] = w
        row[:] = EMPTY
        if w == 0:
            out[:] = row
            continue
        k = min(shingle, w)
        if k == 3:  # the default shingle: its hashes in a loop of its own, which LLVM vectorises (-8 %)
            for s in range(w - 2):
                h = _mix64(_mix64(_mix64(uint64(3) ^ words[s]) ^ words[s + 1]) ^ words[s + 2])
                bin_of[s] = h & mask if power_of_two else h % ubins
                value_of[s] = _mix64(h ^ _ROTATION_STEP)
            for s in range(w - 2):
                row[bin_of[s]] = min(row[bin_of[s]], value_of[s])
        else:
            for s in range(w - k + 1):
                h = uint64(k)
                for m in range(k):
                    h = _mix64(h ^ words[s + m])
                # h % bins; a mask when bins is a power of two (the same bin, without a division)
                b = h & mask if power_of_two else h % ubins
                row[b] = min(row[b], _mix64(h ^ _ROTATION_STEP))
        # rotation densification: an empty bin borrows from the next originally non-empty bin to
        # its right (circularly), mixed with the distance, so equal patterns stay equal.
        source = 0
        while row[source] == EMPTY:
            source += 1
        source += bins
        for b in range(bins - 1, -1, -1):
            source = b if row[b] != EMPTY else source
            source_of[b] = source
        for b in range(bins):
            s = source_of[b]
            value = row[b]
            borrowed = _mix64(row[s - bins if s >= bins else s] + uint64(s - b) * _ROTATION_STEP)
            out[b] = value if value != EMPTY else borrowed


@parallel
def _signatures(buf, offsets, shingle, bins):
    """One signature row (``bins`` uint64) per text; also each text's word count. The parallel
    kernel gives each ``prange`` step a chunk of consecutive texts."""
    n = offsets.shape[0] - 1
    sig = np.empty((n, bins), dtype=np.uint64)
    words_per_text = np.zeros(n, dtype=np.int64)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _sign_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, shingle, bins, sig, words_per_text)
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
_signatures_serial = serial_twin(_signatures, "_signatures_serial")
_all_pairs_above_serial = serial_twin(_all_pairs_above, "_all_pairs_above_serial")
