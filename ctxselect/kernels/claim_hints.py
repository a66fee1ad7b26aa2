"""Where claims may stand in a text, from the lower-cased UTF-8 buffer: the compiled pre-read of
:func:`ctxselect.text.claims.extract_claims` for the texts the claim prefilter keeps.

Per text, the character positions where a number may start (an ASCII digit not after an ASCII
letter, digit, "_", "." or ","), whether it holds a digit, and whether a date may be there (a "-"
or a month's first three letters). A text with an exotic code point
(:func:`ctxselect.text.claim_keys.exotic_code_points`: non-ASCII digits, lower-casings that change
the length) gets no positions: Python reads it with the plain patterns.
"""

from __future__ import annotations

import numpy as np

from ctxselect._config import serial

HAS_DIGIT, MAY_HOLD_DATE, EXOTIC = 1, 2, 4
# ASCII bytes a number cannot follow: letters, digits, "_" (the look-behind's \w), "." and ","
_NOT_BEFORE = np.array([chr(b).isalnum() or chr(b) in "_.," for b in range(128)] + [False] * 128, dtype=np.bool_)
# the twelve 3-letter month prefixes, by code (c0 * 676 + c1 * 26 + c2, a = 0), as kernels/claims.py
_MONTHS3 = np.isin(np.arange(26 ** 3), [(ord(m[0]) - 97) * 676 + (ord(m[1]) - 97) * 26 + ord(m[2]) - 97
                                         for m in "jan feb mar apr may jun jul aug sep oct nov dec".split()])


@serial
def _claim_hints(buf, starts, ends, max_chars, read_chars, exotic):
    """What reading the texts ``buf[starts[t]:ends[t]]`` (their first ``read_chars`` characters) needs:
    (indptr, positions, flags). Positions (character indices below ``max_chars``): each ASCII digit not
    after an ASCII letter, digit, "_", "." or "," (where a number may start). Flags: :data:`HAS_DIGIT` a
    digit below ``max_chars``, :data:`MAY_HOLD_DATE` a "-" or a month's first three letters,
    :data:`EXOTIC` an exotic code point (nothing else is reported for that text).

    Month prefixes are found as their third letter is read, from the run of lower-case ASCII letters
    so far (its last two letters): one branch per letter instead of reading two bytes
    ahead (the same positions: the three letters lie within the text and ``read_chars``). At 50,000
    candidates (7,078 texts, 3.5 MB), alternating in one process: 20.6 -> 16.9 ms (a rolling code of
    the last two letters, ``code % 26 * 26 + letter``, was 1.6x slower than the look-ahead: a chain
    of arithmetic from letter to letter)."""
    n = starts.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    where = np.empty(max(np.sum(ends - starts) // 2 + n, 1), dtype=np.int64)
    flags = np.zeros(n, dtype=np.uint8)
    count = 0
    for t in range(n):
        start, end, continuation, previous, flag, first = starts[t], ends[t], 0, 0, 0, count
        run, second, third = 0, 0, 0  # lower-case ASCII letters just read; the last two (a = 0)
        for pos in range(start, end):
            b, ci = buf[pos], pos - start - continuation
            if ci >= read_chars:
                break
            if b >= 0x80:
                continuation += b < 0xC0
                if b >= 0xC0:  # a lead byte: its code point (a valid buffer: the sequence is whole)
                    n = 4 if b >= 0xF0 else (3 if b >= 0xE0 else 2)
                    cp = np.int64(b) & (0x07 if n == 4 else (0x0F if n == 3 else 0x1F))
                    for k in range(1, min(n, end - pos)):
                        cp = (cp << 6) | (np.int64(buf[pos + k]) & 0x3F)
                    if cp >= exotic[0] and exotic[min(np.searchsorted(exotic, cp), exotic.shape[0] - 1)] == cp:
                        flag, count = EXOTIC, first
                        break
                previous, run = 0, 0
                continue
            if 97 <= b <= 122:
                letter = np.int64(b) - 97
                if run >= 2 and _MONTHS3[second * 676 + third * 26 + letter]:
                    flag |= MAY_HOLD_DATE
                second, third, run = third, letter, run + 1
                previous = b
                continue
            run = 0
            if 48 <= b <= 57:
                if ci < max_chars:
                    flag |= HAS_DIGIT
                    if not _NOT_BEFORE[previous]:
                        where[count] = ci
                        count += 1
            elif b == 45:
                flag |= MAY_HOLD_DATE
            previous = b
        flags[t], indptr[t + 1] = flag, count
    return indptr, where[:count], flags
