"""Years of texts, jitted: the time match of the query-aware signals.

Texts arrive as one lower-cased UTF-8 byte buffer with offsets (``ctxselect.packing.text_buffer``).
A **year** is a maximal run of four decimal digits (category Nd, as ``re``'s ``\\d``; values from
the caller's table) whose first two digits are ASCII: the regex
``(?<!\\d)(1[5-9]\\d\\d|20\\d\\d)(?!\\d)`` of :func:`ctxselect.text.words.years_in`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ctxselect._config import parallel, serial, serial_twin

_CHUNKS = 256  # the parallel kernel's prange steps: chunks of consecutive texts


@serial
def _code_point(buf, q, end):
    """The code point that starts at ``buf[q]`` (before ``end``) and its length in bytes; -1 for a
    stray continuation byte (never in what ``text_buffer`` makes)."""
    b = int(buf[q])
    if b < 128:
        return b, 1
    if b >= 0xF0:
        length, cp = 4, b & 0x07
    elif b >= 0xE0:
        length, cp = 3, b & 0x0F
    elif b >= 0xC0:
        length, cp = 2, b & 0x1F
    else:
        return -1, 1
    length = max(min(length, end - q), 1)
    for k in range(q + 1, q + length):
        cp = (cp << 6) | (int(buf[k]) & 0x3F)
    return cp, length


@serial
def _years_of_texts(buf, offsets, first, last, digit_value, lo, hi, out):
    """The time match of the years of texts first..last-1 with the span [lo, hi]: 0 without years, 1
    for one inside, 0.8 when they enclose the span, else e^(−distance/3) for the nearest.

    A year starts with the ASCII bytes "15".."19" or "20", which no other code point's UTF-8
    holds, so only those places are read: the code point before must be no digit (read back to
    its lead byte: in ``text_buffer``'s bytes every code point is a lead byte and its continuation
    bytes, lone surrogates included), the next two must be digits and the one after them none.
    The byte loop has one rarely taken branch; only behind it is :func:`_code_point` called (a
    call with an array costs reference counting). Decoding every code point instead took 1.3-1.5x
    as long (in-process A/B on select()'s buffers at n = 200, 2,000 and 20,000)."""
    size = digit_value.shape[0]
    for t in range(first, last):
        start, end = offsets[t], offsets[t + 1]
        found = inside = False
        lowest = highest = distance = 0
        for p in range(start, end - 3):
            b = buf[p]
            if b != 49 and b != 50:  # "1" or "2"
                continue
            c = buf[p + 1]
            if not ((b == 49 and 53 <= c <= 57) or (b == 50 and c == 48)):
                continue
            if p > start:  # the code point before: no digit
                q = p - 1
                while q > start and p - q < 4 and 0x80 <= buf[q] < 0xC0:
                    q -= 1
                before, length = _code_point(buf, q, end)
                if q + length == p and 0 <= before < size and digit_value[before] >= 0:
                    continue
            value = (int(b) - 48) * 1000 + (int(c) - 48) * 100
            q, digits = p + 2, 2
            while digits < 5 and q < end:
                cp, length = _code_point(buf, q, end)
                d = int(digit_value[cp]) if 0 <= cp < size else -1
                if d < 0:
                    break
                if digits < 4:
                    value += d * (10 if digits == 2 else 1)
                digits += 1
                q += length
            if digits != 4:
                continue
            d = min(abs(value - lo), abs(value - hi))
            if not found:
                found = True
                lowest = highest = value
                distance = d
            lowest = min(lowest, value)
            highest = max(highest, value)
            distance = min(distance, d)
            inside = inside or lo <= value <= hi
        out[t] = (0.0 if not found else 1.0 if inside else 0.8 if lowest < lo and highest > hi
                  else math.exp(-distance / 3.0))


@parallel
def _time_match(buf, offsets, digit_value, lo, hi):
    """:func:`_years_of_texts` of every text (``digit_value[cp]``: a digit's value (Nd), else -1)."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        _years_of_texts(buf, offsets, c * n // chunks, (c + 1) * n // chunks, digit_value, lo, hi, out)
    return out


# Serial twin for small inputs (a parallel launch costs more than a few dozen texts' work).
_time_match_serial = serial_twin(_time_match, "_time_match_serial")
