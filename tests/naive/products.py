"""Plain-Python twins of ctxselect/kernels/products.py (no numpy in the algorithms): unit rows rounded
to int16, their exact products, the largest norm, and the check of screened pairs."""

import math

SCALE = 32_767


def naive_rounded(row):
    """A unit row's components rounded to int16 at SCALE (half to even, as Python's round), clamped."""
    return [min(max(round(float(x) * SCALE), -SCALE), SCALE) for x in row]


def naive_word_pairs(row):
    """:func:`naive_rounded` as int32 word pairs: component 2k in the low half, 2k + 1 (0 past the
    row) in the high half, the high half's sign the pair's."""
    q = naive_rounded(row) + [0]
    out = []
    for k in range((len(row) + 1) // 2):
        value = (q[2 * k] & 0xFFFF) | ((q[2 * k + 1] & 0xFFFF) << 16)
        out.append(value - (1 << 32) if value >= 1 << 31 else value)
    return out


def naive_int16_tile(unit, rows, lo, hi):
    """[[q(unit[r]) · q(unit[c]) for c in lo..hi-1] for r in rows], exact Python integers."""
    q = [naive_rounded(row) for row in unit]
    return [[sum(a * b for a, b in zip(q[r], q[c])) for c in range(lo, hi)] for r in rows]


def naive_largest_norm(unit):
    """The largest Euclidean norm of a row (its squares summed in float64, in order)."""
    return max((math.sqrt(sum(float(x) ** 2 for x in row)) for row in unit), default=0.0)


def naive_check_pairs(unit, i, j, cut):
    """The pairs whose cosine (float64 sum of the float32 components, in order) reaches ``cut``,
    weights clipped to [0, 1]."""
    out = []
    for a, b in zip(i, j):
        s = 0.0
        for x, y in zip(unit[a], unit[b]):
            s += float(x) * float(y)
        if s >= cut:
            out.append((a, b, min(max(s, 0.0), 1.0)))
    return out
