"""The one word scan, jitted: each text's words read once, for MinHash signatures and query terms.

Texts arrive as one lower-cased UTF-8 byte buffer with offsets (``ctxselect.packing.text_buffer``).
``_scan_texts`` reads each text's words once and gives them to the readers a call asks for:

- a **word** is a maximal run of ASCII letters and digits or code points U+00C0–U+FFFF (the regex
  ``[A-Za-z0-9\\u00C0-\\uFFFF]+``, ``ctxselect.model.tokens.WORD``): in UTF-8, ASCII alphanumerics,
  two-byte sequences from lead byte 0xC3 on, and every three-byte sequence; four-byte sequences
  (astral code points, emoji) and U+0080–U+00BF (NBSP, ``©`` ...) separate words;
- **signatures** (:func:`_scan_words`, :func:`_signatures`): a shingle is ``k`` consecutive words
  (the whole text when it has fewer); one-permutation hashing: each shingle's 64-bit hash picks one
  of ``K`` bins and competes for that bin's minimum; empty bins are filled by rotation (the next
  non-empty bin to the right, plus an offset per step), so every signature of a non-empty text is
  dense. The share of equal bins of two signatures estimates the Jaccard similarity of their
  shingle sets (compared in :mod:`ctxselect.kernels.minhash`);
- **terms** (:func:`_text_terms` lists them, :func:`_scan_words` finds a few probe terms):
  ``ctxselect.text.words`` exactly. A word of one character (code points, not bytes) and a
  stopword are dropped; the rest are stemmed when three characters remain (``-ies`` → ``-y``,
  ``-sses`` → ``-ss``, else a final ``s`` not after ``s`` goes) and hashed as
  :mod:`ctxselect.kernels.terms` says (years: :mod:`ctxselect.kernels.years`).

Lower-casing the whole text first gives the same words as the regex's lower-casing of each match,
for every code point but one (checked over all of Unicode by the tests): the capital sigma Σ
becomes ς or σ by the letters around it, which a match does not see. The term readers flag each
text that contains σ or ς so the caller can route those with a Σ in the original through the
Python path (a word's bytes, and so the signatures, do not depend on it).

The hot loop is written out in one function (``_scan_texts``), not split into small jitted
helpers: a call that takes arrays counts their references, atomics that cost more than a word's
work and serialised the threads (a helper call per word made the parallel kernel slower than the
serial one). A ``prange`` step reads a chunk of texts.
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
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # an empty signature bin
_ROTATION_STEP = np.uint64(0x9E3779B97F4A7C15)
# Each byte's class for the word scan: 0 an ASCII separator, 1 an ASCII letter or digit, 2 the lead
# byte of a word character's sequence (U+00C0..U+07FF from 0xC3, U+0800..U+FFFF), 3 a continuation
# byte (of the class of its lead), 4 any other lead byte (U+0080..U+00BF, astral code points).
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[48:58] = _BYTE_CLASS[65:91] = _BYTE_CLASS[97:123] = 1
_BYTE_CLASS[0x80:0xC0] = 3
_BYTE_CLASS[0xC0:0xC3] = _BYTE_CLASS[0xF0:] = 4
_BYTE_CLASS[0xC3:0xF0] = 2
_CHUNKS = 256  # the parallel kernels' prange steps: chunks of consecutive texts (or rows)


@serial
def _mix64(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of x (minhash.py's; kernels import none)."""
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x ^ (x >> uint64(31))


@serial
def _hash_each(buf, offsets):
    """THE term hash (FNV-1a, mixed: what the scan lists) of each string buf[offsets[k]:offsets[k + 1]], taken whole."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for k in range(n):
        h = _FNV_OFFSET
        for p in range(offsets[k], offsets[k + 1]):
            h = (h ^ uint64(buf[p])) * _FNV_PRIME
        out[k] = _mix64(h)
    return out


@serial
def _scan_texts(buf, offsets, first, last, shingle, bins, sig, words_per_text, stop_bits, stop_keys, stop_index,
                stop_buf, stop_offsets, max_stop, table_keys, table_index, member, out, bound, counts, sigma):
    """The one word scan, for the texts first..last-1. Each text's words are read once, and each word
    is given to whichever of three readers the arguments turn on:

    - **signatures** (``bins`` > 0): every word's FNV-1a state, then the text's MinHash row
      ``sig[t]`` (see the module docstring) and its word count ``words_per_text[t]``;
    - **probes** (``table_keys`` not empty): member[t, j] set when the text holds the term keyed at
      position j of their :func:`_key_table` (table_keys, table_index; :func:`_state_keys`), a word
      checked against the stopwords only when it is a probe (``whos`` stems to ``who``);
    - **listing** (``out`` not empty): the text's distinct term hashes, in order of first
      appearance, in out[bound[t]:] and their number in counts[t].

    sigma[t]: whether the text contains σ or ς (bytes CF 83, CF 82). Stopwords: bit ``h >> 50`` of
    ``stop_bits``, then the table ``stop_keys`` / ``stop_index`` of their hashes, then their bytes
    ``stop_buf`` / ``stop_offsets`` (none longer than ``max_stop`` bytes).

    The word loop is two tight loops, over a run of separators then over a word (one loop with the
    state of both was slower). A byte's class decides, except a continuation byte's, which has the
    class of the sequence's lead (``lead_is_word``, set by every byte of another class: a stray
    continuation after an ASCII letter separates); on valid UTF-8 that is the regex's word.
    Signing and probing in this one pass took 0.70-0.79x the time of the two kernels it replaced
    (n = 200 / 2,000 / 20,000 of benchmarks/latency.py, in-process A/B, outputs equal); signing
    alone 1.07-1.14x the old signing kernel's (calls without a question)."""
    signing = bins > 0
    probing = table_keys.shape[0] > 0
    listing = out.shape[0] > 0
    terms = probing or listing
    size = max(table_keys.shape[0], 1)
    most_terms = most_words = 0
    for t in range(first, last):
        most_terms = max(most_terms, bound[t + 1] - bound[t])
        most_words = max(most_words, (offsets[t + 1] - offsets[t]) // 2 + 1)
    seen = 16  # a text's terms so far (a power of two, 4x the most up to 65,536, then 2x): slots owned by the text
    while listing and seen < 4 * most_terms and seen < 65536:
        seen *= 2
    while listing and seen < 2 * most_terms:
        seen *= 2
    seen_keys = np.empty(seen, dtype=np.uint64)
    seen_owner = np.full(seen, -1, dtype=np.int64)
    stop_size = stop_keys.shape[0]
    # the scratch arrays, views of one allocation (a chunk can be one text; one allocation instead of five
    # took 0.91-0.96x the time at n = 200, 0.93-0.995x at 2,000 and 20,000 of benchmarks/latency.py, each
    # caller, in-process A/B, outputs equal): a text's words (at most one per two bytes, plus one), per
    # shingle its bin and value; the row, and each empty bin's source (counted past the end when it wraps)
    m, r = most_words if signing else 1, max(bins, 1)
    scratch = np.empty(3 * m + 2 * r, dtype=np.uint64)
    words, bin_of, value_of = scratch[:m], scratch[m:2 * m], scratch[2 * m:3 * m]
    row, source_of = scratch[3 * m:3 * m + r], scratch[3 * m + r:].view(np.int64)
    ubins = uint64(max(bins, 1))
    mask = uint64(bins - 1) if signing else uint64(0)
    power_of_two = bins & (bins - 1) == 0
    for t in range(first, last):
        end = offsets[t + 1]
        count = 0  # terms listed
        w = 0  # words (signatures)
        has_sigma = False
        lead_is_word = False
        p = offsets[t]
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
            word_start = p
            extra = 0  # continuation bytes: the bytes of its characters after their first
            h = _FNV_OFFSET  # FNV-1a state of the word's bytes
            while p < end:  # a word, from its first byte
                b = buf[p]
                kind = _BYTE_CLASS[b]
                if kind == 1:
                    lead_is_word = False
                elif kind != 3:
                    lead_is_word = kind == 2
                    if not lead_is_word:
                        break
                    if b == 0xCF and p + 1 < end and (buf[p + 1] == 0x82 or buf[p + 1] == 0x83):
                        has_sigma = True
                elif not lead_is_word:
                    break
                else:
                    extra += 1
                h = (h ^ uint64(b)) * _FNV_PRIME
                p += 1
            if signing:
                words[w] = h
                w += 1
            if not terms:
                continue
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
        if listing:
            counts[t] = count
        sigma[t] = has_sigma
        if not signing:
            continue
        # the text's MinHash row: each shingle's minimum per bin, in a local row (no 2-D index in
        # the inner loops), with ``min`` (no branch: about half the bins are first filled, so the
        # branch was unpredictable); then densified into sig[t] in one write
        words_per_text[t] = w
        out_row = sig[t]
        row[:] = EMPTY
        if w == 0:
            out_row[:] = row
            continue
        k = min(shingle, w)
        if k == 3:  # the default shingle: its hashes in a loop of its own, which LLVM vectorises (-8 %)
            for s in range(w - 2):
                g = _mix64(_mix64(_mix64(uint64(3) ^ words[s]) ^ words[s + 1]) ^ words[s + 2])
                bin_of[s] = g & mask if power_of_two else g % ubins
                value_of[s] = _mix64(g ^ _ROTATION_STEP)
            for s in range(w - 2):
                row[bin_of[s]] = min(row[bin_of[s]], value_of[s])
        else:
            for s in range(w - k + 1):
                g = uint64(k)
                for m in range(k):
                    g = _mix64(g ^ words[s + m])
                # g % bins; a mask when bins is a power of two (the same bin, without a division)
                b = g & mask if power_of_two else g % ubins
                row[b] = min(row[b], _mix64(g ^ _ROTATION_STEP))
        # rotation densification: an empty bin borrows from the next originally non-empty bin to
        # its right (circularly), mixed with the distance, so equal patterns stay equal. Each empty
        # bin's source is found in one backward scan, then every bin is mixed and the filled bins
        # keep their values (a loop without branches, which LLVM vectorises: 128 mixes cost less
        # than about 70 mispredicted branches).
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
            out_row[b] = value if value != EMPTY else borrowed


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
def _scan_words(buf, offsets, shingle, sig, stop_bits, stop_keys, stop_index, stop_buf, stop_offsets, max_stop,
                table_keys, table_index, probes):
    """In one pass over each text's words: its MinHash signature row, written to ``sig`` (uint64
    (n, bins); none when bins is 0), and word count, whether it holds the probe at position j of
    ``probes`` terms (bool (n, ``probes``); ``table_keys`` / ``table_index``: their
    ``terms._probe_table``), and whether it contains σ or ς. The stopword arguments are
    :func:`_scan_texts`'. The caller allocates ``sig`` with NumPy, for its huge pages
    (``features.similarity.signature_rows``)."""
    n = offsets.shape[0] - 1
    if sig.shape[0] != n:  # (no bounds checks in a kernel: a short matrix would be written past)
        raise ValueError("the signature matrix needs one row per text")
    bins = sig.shape[1]
    words_per_text = np.zeros(n, dtype=np.int64)
    member = np.zeros((n, probes), dtype=np.bool_)
    sigma = np.zeros(n, dtype=np.bool_)
    bound = np.zeros(n + 1, dtype=np.int64)  # nothing listed: the counts written (bound[1:]) stay 0
    used = table_keys.shape[0] if probes > 0 else 0  # no probes: an empty table turns probing off
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _scan_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, shingle, bins, sig, words_per_text,
                    stop_bits, stop_keys, stop_index, stop_buf, stop_offsets, max_stop, table_keys[:used],
                    table_index[:used], member, table_keys[:0], bound, bound[1:], sigma)
    return sig, words_per_text, member, sigma


@parallel
def _signatures(buf, offsets, shingle, sig):
    """One MinHash signature row per text, written to ``sig`` (uint64 (n, bins), allocated by the
    caller as for :func:`_scan_words`), and each text's word count."""
    n = offsets.shape[0] - 1
    if sig.shape[0] != n:  # (no bounds checks in a kernel: a short matrix would be written past)
        raise ValueError("the signature matrix needs one row per text")
    bins = sig.shape[1]
    words_per_text = np.zeros(n, dtype=np.int64)
    sigma = np.zeros(n, dtype=np.bool_)
    no_key = np.zeros(0, dtype=np.uint64)
    no_index = np.zeros(0, dtype=np.int64)
    bound = np.zeros(n + 1, dtype=np.int64)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _scan_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, shingle, bins, sig, words_per_text,
                    no_key, no_key, no_index, buf[:0], no_index, 0, no_key, no_index, np.zeros((0, 0), np.bool_),
                    no_key, bound, bound[1:], sigma)
    return sig, words_per_text


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
    no_sig = np.zeros((n, 0), dtype=np.uint64)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _scan_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, 0, 0, no_sig, counts, stop_bits, stop_keys,
                    stop_index, stop_buf, stop_offsets, max_stop, stop_keys[:0], stop_index[:0], no_member, scratch,
                    bound, counts, sigma)
    indptr, hashes = _compact(scratch, bound, counts)
    return indptr, hashes, sigma


# Serial twins for small inputs (a parallel launch costs more than a few dozen texts' work).
_scan_words_serial = serial_twin(_scan_words, "_scan_words_serial")
_signatures_serial = serial_twin(_signatures, "_signatures_serial")
_text_terms_serial = serial_twin(_text_terms, "_text_terms_serial")
