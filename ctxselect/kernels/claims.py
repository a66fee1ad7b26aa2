r"""Claim join keys, over-approximated: which texts could hold claims that join another text's.

A claim of :mod:`ctxselect.text.claims` joins others on its kind, unit and two nearest context
words, given ``need`` (default four) context words. Per text, this kernel emits *entries* (word
key, unit key) from the lower-cased UTF-8 buffer: the hash of the two content words before each
possible claim start, and the claim's possible unit — a word's hash, :data:`UNIT_NONE`,
:data:`UNIT_PERCENT`, :data:`UNIT_DATE` (a date's unit is its last context word) or
:data:`UNIT_ANY` (any unit). Every claim that can join is covered by an entry of its text.

Starts: an ASCII digit not after an ASCII letter, digit or underscore (a number unless after "."
or "," or a bare year; an ISO date if four digits and "-" follow; a day if a month name follows),
or a month name so placed and followed by ``\.?,?\s+\d``. The context is read as Python reads it:
the words of the ``window`` characters before the start (the first may be cut by the window, the
last by the start: "war—" of "war—March 3, 2021"), ``need`` of them content words (two or more
characters, not a stopword: an open-addressing table, hits checked on the bytes). A number's unit
is the first content word after its digits if it ends within :data:`UNIT_REACH` characters of the
start (Python reads 40 from the number's end), "%" after "%" or "per", and the word after a scale
word. A text with a code point of ``exotic`` (where the buffer cannot stand for the patterns run on the
original: non-ASCII digits, whitespace in words, lower-casings that change the length) is flagged 1,
one whose entries overflow its slice 2: neither gets entries (the caller reads them in Python). The
final sigma is hashed as sigma (``str.lower`` picks one by context). No start nor exotic code point lies
outside the bytes :mod:`ctxselect.kernels.scan_bounds` gives each text: only those are scanned."""

from __future__ import annotations

import numpy as np
from numba import prange, uint64

from ctxselect._config import parallel, serial, serial_twin

FNV_OFFSET, FNV_PRIME, PAIR_SALT = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3), np.uint64(0x9E3779B97F4A7C15)
UNIT_ANY, UNIT_DATE, UNIT_PERCENT = np.uint64(0), np.uint64(1), np.uint64(2)
UNIT_NONE = FNV_OFFSET  # no unit (""): the hash of the empty word
SCAN_EXTRA = 128  #: code points read past the last possible start (Python reads MAX_CLAIM_CHARS + 120)
UNIT_REACH = 41  #: a number's unit word must end within this many characters of its start
# byte classes: ASCII letter, digit or "_" (1: "\b", the number's look-behind), digit (2), month initial (4)
_WORD_BYTE, _DIGIT_BYTE, _MONTH_BYTE = 1, 2, 4
_CLASSES = np.array([(_WORD_BYTE if chr(b).isalnum() or b == 95 else 0) | (_DIGIT_BYTE if chr(b).isdigit() else 0)
                     | (_MONTH_BYTE if chr(b).isalpha() and chr(b).lower() in "jfmasond" else 0)
                     for b in range(128)] + [0] * 128, dtype=np.uint8)
# the twelve 3-letter month prefixes, by code (c0 * 676 + c1 * 26 + c2, a = 0)
_MONTHS3 = np.isin(np.arange(26 ** 3), [(ord(m[0]) - 97) * 676 + (ord(m[1]) - 97) * 26 + ord(m[2]) - 97
                                         for m in "jan feb mar apr may jun jul aug sep oct nov dec".split()])
_SCALES = np.array([list(w.ljust(8).encode()) for w in ("thousand", "million", "billion", "trillion")], dtype=np.uint8)
_SCALE_LENGTHS = np.array([8, 7, 7, 8], dtype=np.int64)
_CHUNKS = 256  # the parallel kernel's prange steps: chunks of consecutive texts


@serial
def _mix64(x):  # splitmix64's finaliser
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    return x ^ (x >> uint64(31))


@serial
def pair_key(first, second):  # the word key of two consecutive context words, from their hashes
    return _mix64(_mix64(first ^ PAIR_SALT) ^ second)


@serial
def _decode(buf, pos, end):
    """(code point, byte length) of the UTF-8 sequence at ``pos``; (0xFFFD, 1) when malformed."""
    b = np.int64(buf[pos])
    if b < 0x80:
        return b, 1
    n = 4 if b >= 0xF0 else (3 if b >= 0xE0 else 2)
    cp = b & (0x07 if n == 4 else (0x0F if n == 3 else 0x1F))
    if b < 0xC0 or pos + n > end:
        return np.int64(0xFFFD), 1
    for k in range(1, n):
        cp = (cp << 6) | (np.int64(buf[pos + k]) & 0x3F)
    return cp, n


@serial
def _is_letter(cp):  # a word's first character: [A-Za-z\u00C0-\uFFFF]
    return (97 <= cp <= 122) or (65 <= cp <= 90) or (0xC0 <= cp <= 0xFFFF)


@serial
def _is_run(cp):  # a word's other characters: a letter, an ASCII digit, an apostrophe, a hyphen
    return _is_letter(cp) or (48 <= cp <= 57) or cp == 39 or cp == 45


@serial
def _is_space(cp):  # \s outside U+00C0..U+FFFF (whitespace inside that range is exotic)
    return (9 <= cp <= 13) or (28 <= cp <= 32) or cp == 0x85 or cp == 0xA0


@serial
def _after_spaces(buf, p, end):  # (position after the \s characters at p, how many): ASCII, NEL, NBSP
    spaces = 0
    while p < end and ((9 <= buf[p] <= 13) or (28 <= buf[p] <= 32) or (
            buf[p] == 0xC2 and p + 1 < end and (buf[p + 1] == 0x85 or buf[p + 1] == 0xA0))):
        p, spaces = p + 1 + (buf[p] == 0xC2), spaces + 1
    return p, spaces


@serial
def _is_stopword(h, buf, start, end, slots, offsets, raw):
    """Whether buf[start:end] (hash ``h``) is a stopword: ``slots``, an open-addressing table (size
    a power of two, -1 empty), holds indices into the stopwords' ``offsets`` / ``raw`` bytes."""
    mask = slots.shape[0] - 1
    k = np.int64(h & uint64(mask))
    while slots[k] >= 0:
        a, b = offsets[slots[k]], offsets[slots[k] + 1]
        m = 0
        while b - a == end - start and m < b - a and raw[a + m] == buf[start + m]:
            m += 1
        if b - a == end - start and m == b - a:
            return True
        k = (k + 1) & mask
    return False


@serial
def _month_ahead(buf, pos, end):
    """Whether buf[pos:] reads as ASCII letters opening with a month's 3-letter prefix, ``\\.?,?\\s+\\d``."""
    if pos + 3 > end:
        return False
    c0, c1, c2 = np.int64(buf[pos]) | 0x20, np.int64(buf[pos + 1]) | 0x20, np.int64(buf[pos + 2]) | 0x20
    if not (97 <= c0 <= 122 and 97 <= c1 <= 122 and 97 <= c2 <= 122 and _MONTHS3[c0 * 676 + c1 * 26 + c2 - 68191]):
        return False
    p = pos + 3
    while p < end and 97 <= (buf[p] | 0x20) <= 122:
        p += 1
    p += p < end and buf[p] == 46  # "."
    p += p < end and buf[p] == 44  # "," ("3 March, 2021")
    q, spaces = _after_spaces(buf, p, end)
    return spaces > 0 and q < end and 48 <= buf[q] <= 57


@serial
def _date_ahead(buf, pos, end):
    """Whether the ASCII digits at ``pos`` may begin a date: four and "-" (ISO), or one or two, up
    to two letters ("rd"), whitespace and a month name ("3 March 2021")."""
    p = pos
    while p < end and 48 <= buf[p] <= 57:
        p += 1
    digits = p - pos
    if digits == 4:
        return p < end and buf[p] == 45
    if digits > 2:
        return False
    for _ in range(2):
        p += p < end and 97 <= (buf[p] | 0x20) <= 122
    p, spaces = _after_spaces(buf, p, end)
    return spaces > 0 and _month_ahead(buf, p, end)


@serial
def _next_token(buf, pos, ci, end, limit, slots, offsets, raw, max_stop):
    """The next word from ``pos`` (char index ``ci``, outside a word): (status, content?, hash,
    first byte, end byte, end char, only whitespace before it?); status 0: found, ending by char
    ``limit``; 1: the text ends first; 2: the limit comes first."""
    spaces_only = True
    while pos < end and ci < limit:
        cp, n = _decode(buf, pos, end)
        if _is_letter(cp):
            h, p0, chars = FNV_OFFSET, pos, 0
            while pos < end:
                cp, n = _decode(buf, pos, end)
                if not _is_run(cp):
                    break
                h = (h ^ np.uint64(0x3C3 if cp == 0x3C2 else cp)) * FNV_PRIME
                chars += 1
                pos += n
            if ci + chars > limit:
                return 2, False, h, p0, pos, ci + chars, spaces_only
            content = chars > 1 and not (pos - p0 <= max_stop and _is_stopword(h, buf, p0, pos, slots, offsets, raw))
            return 0, content, h, p0, pos, ci + chars, spaces_only
        spaces_only = spaces_only and _is_space(cp)
        pos += n
        ci += 1
    return (1 if pos >= end else 2), False, FNV_OFFSET, pos, pos, ci, spaces_only


@serial
def _unit_after(buf, pos, ci, end, limit, slots, offsets, raw, max_stop):
    """The first content word's hash if it ends by ``limit``; if none, UNIT_NONE when the text ends
    first, else UNIT_ANY."""
    status, content = 0, False
    while status == 0 and not content:
        status, content, h, _p0, pos, ci, _sp = _next_token(buf, pos, ci, end, limit, slots, offsets, raw, max_stop)
    return h if status == 0 else (UNIT_NONE if status == 1 else UNIT_ANY)


@serial
def _scale_length(buf, p0, p1):  # the length of the scale word ("million" ...) buf[p0:p1] begins with, or 0
    for s in range(_SCALES.shape[0]):
        length = _SCALE_LENGTHS[s]
        if p1 - p0 >= length and np.all(buf[p0:p0 + length] == _SCALES[s, :length]):
            return length
    return 0


@serial
def _number_units(buf, pos, ci, end, slots, offsets, raw, max_stop, units):
    """The units a number at ``pos`` (char ``ci``) may have, into ``units``; how many (0: a year)."""
    limit = ci + UNIT_REACH
    q, digits_only = pos, True
    while q < end and ((48 <= buf[q] <= 57) or buf[q] == 44 or buf[q] == 46):
        digits_only = digits_only and 48 <= buf[q] <= 57
        q += 1
    cq = ci + (q - pos)  # ASCII so far
    p, _spaces = _after_spaces(buf, q, end)  # "%", "percent", "per cent" after optional whitespace
    percent = p < end and (buf[p] == 37 or (p + 3 <= end and buf[p] == 112 and buf[p + 1] == 101 and buf[p + 2] == 114))
    status, content, h, p0, p1, c1, spaces = _next_token(buf, q, cq, end, limit, slots, offsets, raw, max_stop)
    if status == 2:  # the unit may lie past what some reading of the number sees: any
        units[0] = UNIT_ANY
        return 1
    scale = _scale_length(buf, p0, p1) if status == 0 and spaces else 0
    if q - pos == 4 and digits_only and not percent and scale == 0 and 1500 <= (
            (np.int64(buf[pos]) - 48) * 1000 + (np.int64(buf[pos + 1]) - 48) * 100
            + (np.int64(buf[pos + 2]) - 48) * 10 + np.int64(buf[pos + 3]) - 48) <= 2099:
        return 0
    units[0] = (UNIT_NONE if status == 1 else h if content
                else _unit_after(buf, p1, c1, end, limit, slots, offsets, raw, max_stop))
    count = 1
    if percent:
        units[count] = UNIT_PERCENT
        count += 1
    if scale > 0:  # "1.5 million people": the unit is the word after the scale word
        units[count] = (_unit_after(buf, p1, c1, end, limit, slots, offsets, raw, max_stop) if scale == p1 - p0
                        else UNIT_ANY)  # "million-fold": the unit is the rest of the word
        count += 1
    return count


@serial
def _push(out_w, out_u, at, count, cap, w, u):  # append (w, u) unless a repeat; the count, or -1: full
    if count > 0 and out_w[at + count - 1] == w and out_u[at + count - 1] == u:
        return count
    if count < 0 or count == cap:
        return -1
    out_w[at + count], out_u[at + count] = w, u
    return count + 1


@serial
def _back(buf, start, j):  # (first byte, code point) of the character ending at byte j
    k = j - 1
    while k > start and (buf[k] & 0xC0) == 0x80:
        k -= 1
    return k, _decode(buf, k, j)[0]


@serial
def _context(buf, start, pos, ci, window, need, slots, offsets, raw, max_stop):
    """(found, word key) of a start at byte ``pos`` (char ``ci``): the words of the ``window``
    characters before it, as ``_WORD`` reads them left to right there (the first may be cut by
    the window, the last by the start), read backwards; found when ``need`` of them are content
    words. A word runs from the first letter of a stretch of word characters to its end."""
    first_char = ci - window
    j, c = pos, ci
    found = 0
    last = second = FNV_OFFSET
    while found < need:
        while True:  # back to the end of the next stretch of word characters
            if j <= start or c - 1 < first_char:
                return False, FNV_OFFSET
            k, cp = _back(buf, start, j)
            if _is_run(cp):
                break
            j, c = k, c - 1
        end_byte, end_char = j, c
        letter_byte, letter_char = -1, -1
        while j > start and c - 1 >= first_char:  # over the stretch (inside the window)
            k, cp = _back(buf, start, j)
            if not _is_run(cp):
                break
            j, c = k, c - 1
            if _is_letter(cp):
                letter_byte, letter_char = j, c
        if letter_byte < 0 or end_char - letter_char < 2:
            continue
        h = FNV_OFFSET
        p = letter_byte
        while p < end_byte:
            cp, n = _decode(buf, p, end_byte)
            h = (h ^ np.uint64(0x3C3 if cp == 0x3C2 else cp)) * FNV_PRIME  # final sigma as sigma
            p += n
        if not (end_byte - letter_byte <= max_stop and _is_stopword(h, buf, letter_byte, end_byte, slots, offsets, raw)):
            found += 1
            last, second = (h, second) if found == 1 else ((last, h) if found == 2 else (last, second))
    return True, pair_key(second, last)


@serial
def _scan_texts(buf, scan_from, scan_to, starts, ends, first, last, max_chars, window, need, slots, offsets, raw,
                max_stop, exotic, out_w, out_u, slot, counts, flags):
    """Texts first..last-1: entries into out_w / out_u [slot[t]:slot[t + 1]], their number into ``counts``,
    ``flags`` 1 (exotic) or 2 (overflow; both count 0). The byte loop calls helpers only at a possible start (a
    call with arrays costs reference-count atomics the threads share); it reads ``scan_from[t]:scan_to[t]``."""
    units = np.zeros(3, dtype=np.uint64)
    for t in range(first, last):
        start, end, at, cap = starts[t], ends[t], slot[t], slot[t + 1] - slot[t]
        count, flag, continuation = 0, 0, 0  # char index: pos - start - continuation (none before scan_from)
        scan, stop = scan_from[t], scan_to[t]
        previous = _CLASSES[buf[scan - 1]] if scan > start else 0  # (ASCII before scan: a byte's class is its own)
        for pos in range(scan, stop):
            b = buf[pos]
            late = pos - start >= max_chars and pos - start - continuation >= max_chars  # no start from here
            if late and pos - start - continuation >= max_chars + SCAN_EXTRA:
                break
            if b >= 0x80:
                continuation += b < 0xC0
                n = 4 if b >= 0xF0 else (3 if b >= 0xE0 else 2)
                cp = np.int64(b) & (0x07 if n == 4 else (0x0F if n == 3 else 0x1F))
                for k in range(1, min(n, end - pos)):
                    cp = (cp << 6) | (np.int64(buf[pos + k]) & 0x3F)
                if b >= 0xC0 and cp >= exotic[0] and exotic[min(np.searchsorted(exotic, cp), exotic.shape[0] - 1)] == cp:
                    flag = 1
                    break
                previous = 0
                continue
            c = _CLASSES[b]
            may_start = (c & (_DIGIT_BYTE | _MONTH_BYTE)) * (previous == 0)  # one branch, rarely taken
            previous = c
            if may_start == 0 or late:
                continue
            ci = pos - start - continuation
            if c & _DIGIT_BYTE:
                ok, key = _context(buf, start, pos, ci, window, need, slots, offsets, raw, max_stop)
                if ok:
                    if _date_ahead(buf, pos, end):
                        count = _push(out_w, out_u, at, count, cap, key, UNIT_DATE)
                    if pos == start or (buf[pos - 1] != 46 and buf[pos - 1] != 44):  # a number: not after "." or ","
                        for u in range(_number_units(buf, pos, ci, end, slots, offsets, raw, max_stop, units)):
                            count = _push(out_w, out_u, at, count, cap, key, units[u])
            else:  # a month name? its first three letters first (non-letters may pass: checked after)
                code = ((np.int64(b) | 0x20) * 676 + (np.int64(buf[pos + 1]) | 0x20) * 26
                        + (np.int64(buf[pos + 2]) | 0x20) - 68191) if pos + 3 <= end else -1
                if 0 <= code < _MONTHS3.shape[0] and _MONTHS3[code] and _month_ahead(buf, pos, end):
                    ok, key = _context(buf, start, pos, ci, window, need, slots, offsets, raw, max_stop)
                    if ok:
                        count = _push(out_w, out_u, at, count, cap, key, UNIT_DATE)
            if count < 0:
                flag = 2
                break
        counts[t], flags[t] = (0 if flag else count), flag


@serial
def _compact(scratch_w, scratch_u, slot, counts):
    """The slices scratch[slot[t]:slot[t] + counts[t]] as one CSR (indptr, word keys, unit keys)."""
    indptr = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(counts)))
    word_keys, unit_keys = np.empty(indptr[-1], dtype=np.uint64), np.empty(indptr[-1], dtype=np.uint64)
    for t in range(counts.shape[0]):
        word_keys[indptr[t]:indptr[t + 1]] = scratch_w[slot[t]:slot[t] + counts[t]]
        unit_keys[indptr[t]:indptr[t + 1]] = scratch_u[slot[t]:slot[t] + counts[t]]
    return indptr, word_keys, unit_keys


@parallel
def _claim_keys(buf, scan_from, scan_to, starts, ends, max_chars, window, need, slots, offsets, raw, exotic, cap_bytes):
    """Per text (``buf[starts[t]:ends[t]]``, its bytes scan_from[t]:scan_to[t] read: ``_scan_bounds``): its
    entries as CSR (indptr, word keys, unit keys) and a flag (0; 1 exotic; 2 overflowed: both without
    entries). ``need`` >= 3 (two whole words). Each text writes its own scratch slice: one entry per
    ``cap_bytes`` bytes read plus four (0: room for any text: three entries a start, starts 2+ bytes apart)."""
    n = starts.shape[0]
    max_stop = np.max(np.diff(offsets)) if offsets.shape[0] > 1 else 0
    slot = np.zeros(n + 1, dtype=np.int64)
    for t in range(n):
        scanned = min(ends[t] - starts[t], 4 * (max_chars + SCAN_EXTRA))
        slot[t + 1] = slot[t] + (scanned // cap_bytes + 4 if cap_bytes > 0 else 3 * (scanned // 2 + 1))
    scratch_w, scratch_u = np.empty(slot[n], dtype=np.uint64), np.empty(slot[n], dtype=np.uint64)
    counts, flags = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.uint8)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _scan_texts(buf, scan_from, scan_to, starts, ends, c * n // chunks, (c + 1) * n // chunks, max_chars, window,
                    need, slots, offsets, raw, max_stop, exotic, scratch_w, scratch_u, slot, counts, flags)
    return (*_compact(scratch_w, scratch_u, slot, counts), flags)


@serial
def _shared_texts(word_keys, unit_keys, owner, n):
    """Which of ``n`` texts hold an entry (of text ``owner``) that joins another text's: the same
    word and unit keys, or the same word key and :data:`UNIT_ANY` on either side."""
    read = np.zeros(n, dtype=np.bool_)
    for by_unit in (True, False):  # hash collisions only join more texts
        keys = word_keys ^ (unit_keys * PAIR_SALT) if by_unit else word_keys
        order = np.argsort(keys, kind="mergesort")
        a = 0
        while a < keys.shape[0]:
            b, lo, hi, joins = a, n, -1, by_unit
            while b < keys.shape[0] and keys[order[b]] == keys[order[a]]:
                lo, hi = min(lo, owner[order[b]]), max(hi, owner[order[b]])
                joins = joins or unit_keys[order[b]] == UNIT_ANY
                b += 1
            if lo < hi and joins:
                for k in range(a, b):
                    read[owner[order[k]]] = True
            a = b
    return read


# Serial twin for small inputs: a parallel launch costs more than scanning a few hundred texts.
_claim_keys_serial = serial_twin(_claim_keys, "_claim_keys_serial")
