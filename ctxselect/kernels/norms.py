"""Jitted kernels that see only arrays: rows scaled to unit length for the cosine
(:func:`_unit_rows`), their norms summed in the order of NumPy's pairwise summation."""

from __future__ import annotations

import numpy as np

from ctxselect._config import inlined, serial

#: Leaves of the pairwise sum: NumPy's ``PW_BLOCKSIZE`` (numpy/_core/src/umath/loops_utils.h.src).
_PAIRWISE_BLOCK = 128


@serial
def _leaf_squares(row, lo, n):
    """Σ row[lo:lo + n]², n ≤ 128, as NumPy's pairwise sum adds a leaf: below 8 values in turn, else
    eight interleaved sums combined as ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), then the rest."""
    if n < 8:
        total = 0.0
        for k in range(n):
            total += row[lo + k] ** 2
        return total
    r0, r1, r2, r3 = row[lo] ** 2, row[lo + 1] ** 2, row[lo + 2] ** 2, row[lo + 3] ** 2
    r4, r5, r6, r7 = row[lo + 4] ** 2, row[lo + 5] ** 2, row[lo + 6] ** 2, row[lo + 7] ** 2
    k = 8
    while k < n - n % 8:  # (eight scalars, not an array: no allocation per leaf)
        r0 += row[lo + k] ** 2
        r1 += row[lo + k + 1] ** 2
        r2 += row[lo + k + 2] ** 2
        r3 += row[lo + k + 3] ** 2
        r4 += row[lo + k + 4] ** 2
        r5 += row[lo + k + 5] ** 2
        r6 += row[lo + k + 6] ** 2
        r7 += row[lo + k + 7] ** 2
        k += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while k < n:
        total += row[lo + k] ** 2
        k += 1
    return total


@serial
def _pairwise_program(d):
    """NumPy's pairwise sum of d values as a post-order program: (start, length) of each leaf, and
    length -1 for "add the last two sums" (a node above 128 values splits at a multiple of eight
    below its half). Built without recursion (a recursive kernel loaded from Numba's cache crashed):
    a stack of nodes still to emit, an add pushed as length -1 under its two halves."""
    size = 2 * (d // 32) + 16  # leaves hold at least 64 values: fewer than d / 64 + 1 of them
    prog_lo = np.empty(size, dtype=np.int64)
    prog_n = np.empty(size, dtype=np.int64)
    todo_lo = np.empty(size, dtype=np.int64)
    todo_n = np.empty(size, dtype=np.int64)
    todo_lo[0], todo_n[0] = 0, d
    top, ops = 1, 0
    while top > 0:
        top -= 1
        lo, n = todo_lo[top], todo_n[top]
        if n <= _PAIRWISE_BLOCK:  # a leaf, or an add (-1)
            prog_lo[ops], prog_n[ops] = lo, n
            ops += 1
            continue
        half = n // 2 - (n // 2) % 8
        todo_lo[top], todo_n[top] = lo, -1  # the add, after both halves
        todo_lo[top + 1], todo_n[top + 1] = lo + half, n - half
        todo_lo[top + 2], todo_n[top + 2] = lo, half  # the first half first
        top += 3
    return prog_lo[:ops], prog_n[:ops]


#: Below this sum of squares a row's norm is taken again over the row divided by its largest value:
#: squares under ~2.2e-308 lose bits, and a row of values under ~1e-162 would square to zero.
TINY_SQUARES = 1e-290


@inlined
def _squares(row, prog_lo, prog_n, sums):
    """Σ row² in the order of NumPy's pairwise summation (:func:`_pairwise_program`'s ``prog_lo``,
    ``prog_n``; ``sums``: scratch of one more than the program's length)."""
    top = 0
    for op in range(prog_lo.shape[0]):
        if prog_n[op] >= 0:
            sums[top] = _leaf_squares(row, prog_lo[op], prog_n[op])
            top += 1
        else:
            sums[top - 2] = sums[top - 2] + sums[top - 1]
            top -= 1
    return sums[0]  # (the program holds one leaf at least: d = 0 sums nothing)


@serial
def _unit_rows(emb, out, limit):
    """Each row of ``emb`` (float64) divided by its Euclidean norm, into ``out`` (float32, the same
    shape); a zero row stays zero (divided by 1), a row whose squares overflow becomes zero (divided
    by infinity). The squares are summed in the order of NumPy's pairwise summation, so a norm here is
    ``np.linalg.norm``'s (checked equal bit for bit for d = 1 to 3,072), but for a row whose squares sum
    below :data:`TINY_SQUARES`: it is divided by its largest absolute value m, then by the norm of the
    row over m, so a row of tiny values (1e-170, say, whose squares are 0) points where the row points,
    as cosine similarity says, not nowhere. Returns the first row holding a NaN, an infinity or a value
    whose magnitude passes ``limit`` (at least 1; -1: none); rows after it are not written. A row's
    values are looked at one by one only when its norm is not finite, passes ``limit`` (no value's
    magnitude passes the norm: its square is a term of the sum) or is tiny (at 2,000 x 384: 0.77
    against 1.0 ms with a check of every value first). One pass instead of NumPy's four, without their
    (n, d) float64 temporaries; with the range checked here, not in two NumPy passes before."""
    n, d = emb.shape
    prog_lo, prog_n = _pairwise_program(d)
    sums = np.empty(prog_lo.shape[0] + 1, dtype=np.float64)
    for i in range(n):
        row = emb[i]
        squares = _squares(row, prog_lo, prog_n, sums)
        norm = np.sqrt(squares)
        if not np.isfinite(norm) or norm > limit:  # a NaN, an infinity, squares that overflow, or a norm past
            for k in range(d):                      # the limit: look (never on rows of a norm within it)
                if not np.isfinite(row[k]) or abs(row[k]) > limit:
                    return i
        elif squares < TINY_SQUARES:  # tiny values (or a zero row): the norm over the largest value
            largest = 0.0
            for k in range(d):
                largest = max(largest, abs(row[k]))
            if largest > 0.0:  # (divided in two steps: largest * root may itself be subnormal)
                root = np.sqrt(_squares(row / largest, prog_lo, prog_n, sums))
                for k in range(d):
                    out[i, k] = np.float32(row[k] / largest / root)
                continue
        scale = norm if norm > 0.0 else 1.0
        for k in range(d):
            out[i, k] = np.float32(row[k] / scale)
    return -1
