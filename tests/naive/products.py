"""Plain-Python twins of ctxselect/kernels/products.py (no numpy in the algorithms): unit rows rounded
to int16, their exact products, the largest norm, and the check of screened pairs (kernels/pairs.py);
rows rounded to int8 at their own steps, their residuals and the int8 route's bounds."""

import math
import struct

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


# --- int8: each row at its own step ---------------------------------------------------------------------------

INT8_SCALE = 127


def naive_float32(x):
    """``x`` rounded to the nearest float32 (ties to even)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def naive_row_step(row):
    """A row's int8 step (its largest magnitude / 127, rounded to float32) and 1 / step (0 and 0 for a
    zero row)."""
    step = naive_float32(max((abs(float(x)) for x in row), default=0.0) / INT8_SCALE)
    return step, (1.0 / step if step > 0 else 0.0)


def naive_int8(row):
    """A row's components rounded to int8 at its step (half to even), clamped to ±127; and the step."""
    step, factor = naive_row_step(row)
    return [min(max(round(float(x) * factor), -INT8_SCALE), INT8_SCALE) for x in row], step


def _dwords(values, pad):
    values = list(values) + [pad] * (-len(values) % 4)
    out = []
    for k in range(0, len(values), 4):
        word = sum((values[k + b] & 0xFF) << (8 * b) for b in range(4))
        out.append(word - (1 << 32) if word >= 1 << 31 else word)
    return out


def naive_int8_columns(row):
    """A row's int8 components + 128 as dwords of four bytes (lowest first), padded with 128 (a zero)."""
    return _dwords([q + 128 for q in naive_int8(row)[0]], 128)


def naive_int8_rows(row):
    """A row's int8 components as dwords of four signed bytes (lowest first), padded with 0; and 128 x
    their sum."""
    q = naive_int8(row)[0]
    return _dwords(q, 0), 128 * sum(q)


def naive_residual(row):
    """The norm of a row's rounding residual ``u - q·step`` and of ``q·step`` (float64 sums, in order)."""
    q, step = naive_int8(row)
    return (math.sqrt(sum((float(x) - a * step) ** 2 for x, a in zip(row, q))),
            math.sqrt(sum((a * step) ** 2 for a in q)))


def naive_int8_bound(unit, rows, lo, hi, slack):
    """[[q_r·q_c · step_r · step_c + slack[r] + slack[c] for c in lo..hi-1] for r in rows]: the exact
    product in Python integers, scaled and shifted in float64."""
    rounded = [naive_int8(row) for row in unit]
    out = []
    for r in rows:
        qr, sr = rounded[r]
        out.append([sum(a * b for a, b in zip(qr, rounded[c][0])) * sr * rounded[c][1] + float(slack[r])
                    + float(slack[c]) for c in range(lo, hi)])
    return out
