"""Content terms of texts, jitted: the query-aware signals' per-text work.

Texts arrive as one lower-cased UTF-8 byte buffer with offsets (``ctxselect.packing.text_buffer``).
The kernels decode it to reproduce ``ctxselect.text.words`` exactly:

- a **word** is a maximal run of ASCII letters and digits or code points U+00C0–U+FFFF (the regex
  ``[A-Za-z0-9\\u00C0-\\uFFFF]+``): in UTF-8, ASCII alphanumerics, two-byte sequences from lead
  byte 0xC3 on, and every three-byte sequence; four-byte sequences (astral code points, emoji)
  and U+0080–U+00BF (NBSP, ``©`` ...) separate words;
- a word of one character (code points, not bytes) and a stopword are dropped; the rest are stemmed
  when three characters remain (``-ies`` → ``-y``, ``-sses`` → ``-ss``, else a final ``s`` not
  after ``s`` goes) and hashed (years: :mod:`ctxselect.kernels.years`).

A term is identified by a 64-bit hash of its UTF-8 bytes (FNV-1a, then the splitmix64 finaliser),
never by its string: two terms with equal hashes (among m terms, about m²/2⁶⁵ expected, 3·10⁻⁸
for a million) would count as one, undetected. Stopwords are matched exactly (hash, then bytes).

Lower-casing the whole text first gives the same words as the regex's lower-casing of each match,
for every code point but one (checked over all of Unicode by the tests): the capital sigma Σ
becomes ς or σ by the letters around it, which a match does not see. :func:`_text_terms` and
:func:`_text_probes` (which of a few probe terms a text holds) flag each text that contains σ or
ς so the caller can route those with a Σ in the original through the Python path.

The hot loops are written out in one function each (``_scan_texts``, :func:`_membership`), not
split into small jitted helpers: a call that takes arrays counts their references, atomics that
cost more than a word's work and serialised the threads (a helper call per word made the parallel
kernel slower than the serial one). A ``prange`` step reads a chunk of texts.
"""

from __future__ import annotations

import numpy as np
from numba import prange, uint64

from ctxselect._config import parallel, serial, serial_twin

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
# the prime's inverse modulo 2^64: (h * inverse) ^ b is the state before the step that read byte b, so a
# stem's hash is the word's with its last steps undone, not read again (text_probes at 50,000: -3 %, CPU)
_FNV_INVERSE = np.uint64(0xCE965057AFF6957B)
_S, _E, _I, _Y = 115, 101, 105, 121  # ASCII s, e, i, y
_BYTE_CLASS = np.repeat(np.array([0, 2], dtype=np.uint8), 128)  # 0 ASCII separator, 1 alphanumeric, 2 not ASCII
_BYTE_CLASS[48:58] = _BYTE_CLASS[65:91] = _BYTE_CLASS[97:123] = 1
_CHUNKS = 256  # the parallel kernels' prange steps: chunks of consecutive texts (or rows)


@serial
def _mix64(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of x (minhash.py's; kernels import none)."""
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x ^ (x >> uint64(31))


@serial
def _state_keys(hashes):
    """The FNV-1a state whose :func:`_mix64` is each hash (the finaliser inverted), its halves
    swapped so that the low bits, a table's slot, are the state's better-mixed high bits."""
    out = np.empty_like(hashes)
    for k in range(hashes.shape[0]):
        x = hashes[k]
        x = (x ^ (x >> uint64(31)) ^ (x >> uint64(62))) * uint64(0x319642B2D24D8EC3)
        x = (x ^ (x >> uint64(27)) ^ (x >> uint64(54))) * uint64(0x96DE1B173F119089)
        x = x ^ (x >> uint64(30)) ^ (x >> uint64(60))
        out[k] = (x >> uint64(32)) | (x << uint64(32))
    return out


@serial
def _hash_each(buf, offsets):
    """The term hash (FNV-1a, mixed) of each string buf[offsets[k]:offsets[k + 1]], taken whole."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for k in range(n):
        h = _FNV_OFFSET
        for p in range(offsets[k], offsets[k + 1]):
            h = (h ^ uint64(buf[p])) * _FNV_PRIME
        out[k] = _mix64(h)
    return out


@serial
def _table_size(count, spread):
    """A power of two, at least 16, 2 x ``count`` and (up to 65,536) ``spread`` x ``count``: in a
    sparse table most absent keys stop at an empty first slot, a branch the CPU predicts."""
    size = 16
    while size < spread * count and size < 65536:
        size *= 2
    while size < 2 * count:
        size *= 2
    return size


@serial
def _key_table(keys, spread):
    """An open-addressing table of ``keys`` (uint64, already well spread; linear probing): the
    keys by slot, and their positions in ``keys`` by slot (-1: empty)."""
    size = _table_size(keys.shape[0], spread)
    table_keys = np.zeros(size, dtype=np.uint64)
    table_index = np.full(size, -1, dtype=np.int64)
    for k in range(keys.shape[0]):
        slot = np.int64(keys[k] & uint64(size - 1))
        while table_index[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        table_keys[slot] = keys[k]
        table_index[slot] = k
    return table_keys, table_index


@serial
def _stop_bits(hashes):
    """16,384 bits, bit ``h >> 50`` set for each hash: a word whose bit is clear is no stopword."""
    bits = np.zeros(256, dtype=np.uint64)
    for k in range(hashes.shape[0]):
        top = hashes[k] >> uint64(50)
        bits[top >> uint64(6)] |= uint64(1) << (top & uint64(63))
    return bits


@serial
def _scan_texts(buf, offsets, first, last, stop_bits, stop_keys, stop_index, stop_buf, stop_offsets, max_stop,
                table_keys, table_index, member, out, bound, counts, sigma):
    """For the texts first..last-1: sigma[t], whether the text contains σ or ς (bytes CF 83, CF 82),
    and without probes (``table_keys`` empty) each text's distinct term hashes, in order of first
    appearance, in out[bound[t]:] and their number in counts[t]; with probes, member[t, j] set when
    the text holds the term keyed at position j of their :func:`_key_table` (table_keys,
    table_index; :func:`_state_keys`), a word checked against the stopwords only when it is a probe
    (``whos`` stems to ``who``). Stopwords: bit ``h >> 50`` of ``stop_bits``, then the table
    ``stop_keys`` / ``stop_index`` of their hashes, then their bytes ``stop_buf`` / ``stop_offsets``
    (none longer than ``max_stop`` bytes)."""
    listing = table_keys.shape[0] == 0
    size = max(table_keys.shape[0], 1)
    largest = 0
    for t in range(first, last):
        largest = max(largest, bound[t + 1] - bound[t])
    seen = _table_size(largest, 4) if listing else 1  # a text's terms so far: slots whose owner is the text
    seen_keys = np.empty(seen, dtype=np.uint64)
    seen_owner = np.full(seen, -1, dtype=np.int64)
    stop_size = stop_keys.shape[0]
    for t in range(first, last):
        end = offsets[t + 1]
        count = 0
        has_sigma = False
        p = offsets[t]
        while p < end:
            if _BYTE_CLASS[buf[p]] == 0:
                p += 1
                continue
            word_start = p
            extra = 0  # the bytes of its characters after their first
            h = _FNV_OFFSET  # FNV-1a state of the word's bytes
            while p < end:
                b = buf[p]
                if _BYTE_CLASS[b] == 1:
                    h = (h ^ uint64(b)) * _FNV_PRIME
                    p += 1
                    continue
                if _BYTE_CLASS[b] == 0:
                    break
                if b >= 0xF0:
                    length, is_word = 4, False  # astral: not a word character
                elif b >= 0xE0:
                    length, is_word = 3, True  # U+0800..U+FFFF
                elif b >= 0xC0:
                    length, is_word = 2, b >= 0xC3  # U+0080..U+07FF: word characters from U+00C0 on
                else:
                    length, is_word = 1, False  # a stray continuation byte (never in valid UTF-8)
                length = max(min(length, end - p), 1)
                if b == 0xCF and length == 2 and (buf[p + 1] == 0x82 or buf[p + 1] == 0x83):
                    has_sigma = True
                if not is_word:
                    if p == word_start:  # a separator: skipped, no word character counted
                        p, extra = p + length, length
                    break
                for q in range(p, p + length):
                    h = (h ^ uint64(buf[q])) * _FNV_PRIME
                extra += length - 1
                p += length
            chars = p - word_start - extra
            if chars < 2:
                continue
            whole = h  # the word's state before stemming, for the stopword check
            if chars >= 4 and buf[p - 1] == _S and buf[p - 2] != _S:  # the stem's state: the last steps undone
                h = (h * _FNV_INVERSE) ^ uint64(_S)  # -s
                if chars >= 6 and buf[p - 2] == _E and buf[p - 3] == _I:  # -ies -> -y
                    h = (((((h * _FNV_INVERSE) ^ uint64(_E)) * _FNV_INVERSE) ^ uint64(_I)) ^ uint64(_Y)) * _FNV_PRIME
                elif chars >= 7 and buf[p - 2] == _E and buf[p - 3] == _S and buf[p - 4] == _S:
                    h = (h * _FNV_INVERSE) ^ uint64(_E)  # -sses -> -ss
            column = -1
            if listing:
                term = _mix64(h)
                word = term if whole == h else _mix64(whole)
            else:  # probes are keyed by the FNV state itself (see _state_keys): no finaliser per word
                term = (h >> uint64(32)) | (h << uint64(32))
                slot = np.int64(term & uint64(size - 1))
                while table_index[slot] >= 0:
                    if table_keys[slot] == term:
                        column = table_index[slot]
                        break
                    slot = (slot + 1) & (size - 1)
                if column < 0 or member[t, column]:
                    continue
                word = _mix64(whole)
            top = word >> uint64(50)
            if p - word_start <= max_stop and (stop_bits[top >> uint64(6)] >> (top & uint64(63))) & uint64(1) != 0:
                stop = False
                slot = np.int64(word & uint64(stop_size - 1))
                while stop_index[slot] >= 0:
                    if stop_keys[slot] == word:
                        a, z = stop_offsets[stop_index[slot]], stop_offsets[stop_index[slot] + 1]
                        stop = z - a == p - word_start
                        for m in range(z - a if stop else 0):
                            if stop_buf[a + m] != buf[word_start + m]:
                                stop = False
                                break
                        break
                    slot = (slot + 1) & (stop_size - 1)
                if stop:
                    continue
            if not listing:
                member[t, column] = True
                continue
            slot = np.int64(term & uint64(seen - 1))
            while seen_owner[slot] == t and seen_keys[slot] != term:
                slot = (slot + 1) & (seen - 1)
            if seen_owner[slot] != t:  # first appearance in this text
                seen_owner[slot] = t
                seen_keys[slot] = term
                out[bound[t] + count] = term
                count += 1
        counts[t] = count
        sigma[t] = has_sigma


@parallel
def _text_probes(buf, offsets, stop_bits, stop_keys, stop_index, stop_buf, stop_offsets, max_stop, probes):
    """Bool (n, P): whether text t holds ``probes[j]``, and whether it contains σ or ς (none listed)."""
    n = offsets.shape[0] - 1
    out = np.zeros((n, probes.shape[0]), dtype=np.bool_)
    sigma = np.zeros(n, dtype=np.bool_)
    # a sparse table: most words are no probe and stop at an empty first slot (spread 128 rather than
    # 32: 0.92 / 0.90 / 0.94x the time at n = 200 / 2,000 / 20,000, in-process A/B, same output)
    table_keys, table_index = _key_table(_state_keys(probes), 128)
    bound = np.zeros(n + 1, dtype=np.int64)  # nothing listed: the counts written (bound[1:]) stay 0
    no_terms = np.zeros(0, dtype=np.uint64)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _scan_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, stop_bits, stop_keys, stop_index, stop_buf,
                    stop_offsets, max_stop, table_keys, table_index, out, no_terms, bound, bound[1:], sigma)
    return out, sigma


@serial
def _compact(scratch, bound, counts):
    """The rows scratch[bound[t]:bound[t] + counts[t]] as one CSR (its own function: not parallel)."""
    n = counts.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for t in range(n):
        indptr[t + 1] = indptr[t] + counts[t]
    values = np.empty(indptr[n], dtype=np.uint64)
    for t in range(n):
        values[indptr[t]:indptr[t + 1]] = scratch[bound[t]:bound[t] + counts[t]]
    return indptr, values


@parallel
def _text_terms(buf, offsets, stop_bits, stop_keys, stop_index, stop_buf, stop_offsets, max_stop):
    """Each text's distinct term hashes in order of first appearance, as CSR (indptr (n + 1,),
    hashes), and whether it contains σ or ς. The stopword arguments are :func:`_scan_texts`'."""
    n = offsets.shape[0] - 1
    bound = np.zeros(n + 1, dtype=np.int64)  # a term takes >= 2 bytes plus a separator
    for t in range(n):
        bound[t + 1] = bound[t] + (offsets[t + 1] - offsets[t] + 1) // 3
    scratch = np.empty(bound[n], dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    sigma = np.zeros(n, dtype=np.bool_)
    no_member = np.zeros((0, 0), dtype=np.bool_)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _scan_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, stop_bits, stop_keys, stop_index, stop_buf,
                    stop_offsets, max_stop, stop_keys[:0], stop_index[:0], no_member, scratch, bound, counts, sigma)
    indptr, hashes = _compact(scratch, bound, counts)
    return indptr, hashes, sigma


@parallel
def _membership(indptr, hashes, probes):
    """Bool (n, P): whether row t of the CSR (indptr, hashes) holds ``probes[j]`` (distinct)."""
    n = indptr.shape[0] - 1
    out = np.zeros((n, probes.shape[0]), dtype=np.bool_)
    table_keys, table_index = _key_table(probes, 32)
    size = table_keys.shape[0]
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        for t in range(c * n // chunks, (c + 1) * n // chunks):
            for k in range(indptr[t], indptr[t + 1]):
                slot = np.int64(hashes[k] & uint64(size - 1))
                while table_index[slot] >= 0:
                    if table_keys[slot] == hashes[k]:
                        out[t, table_index[slot]] = True
                        break
                    slot = (slot + 1) & (size - 1)
    return out


@serial
def _weighted_rows(member, weights):
    """Row sums of ``weights`` over the true entries of ``member`` (n, P), left to right, no BLAS."""
    n, size = member.shape
    out = np.zeros(n, dtype=np.float64)
    for t in range(n):
        total = 0.0
        for j in range(size):
            if member[t, j]:
                total += weights[j]
        out[t] = total
    return out


# Serial twins for small inputs (a parallel launch costs more than a few dozen texts' work).
_text_terms_serial = serial_twin(_text_terms, "_text_terms_serial")
_membership_serial = serial_twin(_membership, "_membership_serial")
_text_probes_serial = serial_twin(_text_probes, "_text_probes_serial")
