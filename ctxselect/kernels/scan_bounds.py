"""Where the claim keys kernel (:mod:`ctxselect.kernels.claims`) reads each text: from the first ASCII
digit or byte from 0x80 on, backed up to a month name whose ``\\.?,?\\s+\\d`` may reach it, to the last
ASCII digit or lead byte (0xC0 on). No claim starts outside: a number starts at a digit, a date's month
name within ASCII whitespace, a "," and a "." of one; an exotic code point starts with a lead byte. The
stretch before is pure ASCII, so skipping it loses no state of the byte loop.

Both ends are found eight bytes a step (SWAR) over ``words``, the buffer's bytes from an eight-byte aligned
position ``align`` on as uint64 (``ctxselect.text.claim_keys.byte_words``): an ASCII digit's byte plus 0x50
reaches bit 7 and plus 0x46 does not (no sum leaves its byte); a lead byte has bits 7 and 6. On
benchmarks/latency.py's generated texts, warm, the claim keys took 144 -> 82 µs at n = 200, 1.57 -> 0.63 ms
at 2,000 (the byte loop costs ~2.4 ns a byte where words begin with a month's initial every few bytes).
"""

from __future__ import annotations

import numpy as np
from numba import uint64

from ctxselect._config import serial

_HIGH, _LOW7 = uint64(0x8080808080808080), uint64(0x7F7F7F7F7F7F7F7F)
_FROM_0, _PAST_9 = uint64(0x5050505050505050), uint64(0x4646464646464646)  # + a byte: bit 7 from "0" on, past "9"


@serial
def _digits8(x):
    """Bit 7 of each byte of the eight in ``x`` that is an ASCII digit."""
    low = x & _LOW7
    return (low + _FROM_0) & ~(low + _PAST_9) & ~x & _HIGH


@serial
def _ends(b):
    """Whether byte ``b`` may end what the byte loop reads: an ASCII digit or a lead byte."""
    return b >= 0xC0 or 48 <= b <= 57


@serial
def _starts(b):
    """Whether byte ``b`` may start it: an ASCII digit or a byte from 0x80 on."""
    return b >= 0x80 or 48 <= b <= 57


@serial
def _last_stop(buf, words, align, start, stop):
    """The position after the last ASCII digit or lead byte of buf[start:stop] (``start`` if none): byte by
    byte to an eight-byte boundary, then eight bytes a step, then byte by byte."""
    while stop > start and (stop - align) % 8 != 0 and not _ends(buf[stop - 1]):
        stop -= 1
    if (stop - align) % 8 == 0:
        while stop - 8 >= max(start, align):
            x = words[(stop - align) // 8 - 1]
            if (_digits8(x) | (x & (x << uint64(1)) & _HIGH)) != 0:  # a digit or a lead byte (bits 7 and 6)
                break
            stop -= 8
    while stop > start and not _ends(buf[stop - 1]):
        stop -= 1
    return stop


@serial
def _first_stop(buf, words, align, scan, stop):
    """The position of the first ASCII digit or byte from 0x80 on in buf[scan:stop] (``stop`` if none), as
    :func:`_last_stop` reads, forwards."""
    while scan < stop and (scan - align) % 8 != 0 and not _starts(buf[scan]):
        scan += 1
    if scan >= align and (scan - align) % 8 == 0:
        while scan + 8 <= stop:
            x = words[(scan - align) // 8]
            if (_digits8(x) | (x & _HIGH)) != 0:  # a digit or a byte from 0x80 on
                break
            scan += 8
    while scan < stop and not _starts(buf[scan]):
        scan += 1
    return scan


@serial
def _scan_bounds(buf, words, align, starts, ends):
    """Per text ``buf[starts[t]:ends[t]]``, where the claim keys kernel's byte loop starts and ends (module
    docstring): (first, stop) int64 arrays, ``starts[t] <= first[t] <= stop[t] <= ends[t]`` but for a text
    without a digit or lead byte (first = stop = start)."""
    n = starts.shape[0]
    first, last = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    for t in range(n):
        start = starts[t]
        stop = _last_stop(buf, words, align, start, ends[t])
        scan = _first_stop(buf, words, align, start, stop)  # then back over \s+ (ASCII), ",", "." and letters
        while scan > start and ((9 <= buf[scan - 1] <= 13) or (28 <= buf[scan - 1] <= 32)):
            scan -= 1
        scan -= scan > start and buf[scan - 1] == 44
        scan -= scan > start and buf[scan - 1] == 46
        while scan > start and 97 <= (buf[scan - 1] | 0x20) <= 122:
            scan -= 1
        first[t], last[t] = scan, stop
    return first, last
