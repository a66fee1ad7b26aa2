"""Jitted kernels that see only arrays: cosine tiles from exact int16 or int8 products (AVX-512 VNNI).

Unit rows (float32, norms within 1e-6 of 1: :func:`_pack_columns` returns the largest, and the caller
falls back to the float32 GEMM past it) are rounded to int16 at ``S`` = :data:`INT16_SCALE`
(``q = round(S·u)``, |u_k| ≤ 1). The tile ``q_a·q_b`` is exact integer arithmetic: each ``vpdpwssd``
adds two int16 products to an int32 lane, and every lane's partial sum is a sum over some components,
which Cauchy-Schwarz bounds by ‖q_a‖·‖q_b‖ < 2^31 for any d below ~7·10^8: nothing wraps. It differs
from S²·(u·v) by at most S·√d·max‖u‖ + d/4 (:func:`screen_cut`), so every pair whose cosine reaches a
cut has a product at or above the screen, and ``kernels.pairs._check_pairs`` computes the cosine of each
screened pair again (float64 sums of the float32 rows) and keeps those at or above the cut. On this
project's machine (AMD EPYC, Zen 4) the product ran 2.2x as fast as OpenBLAS's float32 GEMM on one
thread (472 x 2,048 x 384: 3.4 against 7.4 ms).

Layout: the columns are packed once per call into blocks of :data:`BLOCK_COLUMNS` rows, each block
``(⌈d/2⌉, BLOCK_COLUMNS)`` int32 holding two consecutive int16 of a row (``vpdpwssd``'s word pairs);
the tile's rows are ``(rows rounded up to ROWS, ⌈d/2⌉)`` int32 word pairs. The micro-kernel
(:func:`_block`) keeps ROWS x 4 accumulators of 16 lanes in registers over the word pairs.

int8 (:func:`_block8`, ``vpdpbusd``: four byte products a lane): each row rounded at its own step, the
columns' bytes + 128 and the rows' signed; the tile is one bit an entry, whether an upper bound of its
cosine (:func:`int8_slack`) reaches the screen.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic

from ctxselect._config import parallel, parallel_sums, serial, serial_sums, serial_twin

__all__ = ["INT16_SCALE", "INT8_SCALE", "INT8_ROUNDING", "INT8_MAX_DIM", "BLOCK_COLUMNS", "ROWS", "MAX_NORM",
           "screen_cut", "int8_slack", "int8_screen"]

#: int16 rounding scale of a unit row's components (|u_k| ≤ 1 gives |q_k| ≤ 32,767).
INT16_SCALE = 32_767
#: int8 rounding scale: a row's components in steps of its largest magnitude / INT8_SCALE.
INT8_SCALE = 127
#: The int8 route's bound, computed in float32, may fall this far below its exact value.
INT8_ROUNDING = 4e-6
#: The most components an int8 row may have: the lanes' int32 sums wrap, but the product q·q' (at most
#: 127²·d) and the rows' 128·Σq (at most 128·127·d) fit in int32 up to d = 132,000, so it comes out exact.
INT8_MAX_DIM = 100_000
#: Rows of a micro-kernel block, and lanes of each of its four accumulators per row.
ROWS, _LANES, _VECTORS = 4, 16, 4
#: Columns of a packed block: the micro-kernel's 4 x 16 lanes.
BLOCK_COLUMNS = _LANES * _VECTORS

_I16, _I32, _I64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
_V16, _W32 = ir.VectorType(_I32, _LANES), ir.VectorType(_I16, 2 * _LANES)
_VPDPWSSD, _VPDPBUSD = "llvm.x86.avx512.vpdpwssd.512", "llvm.x86.avx512.vpdpbusd.512"
_B64, _F16 = ir.VectorType(ir.IntType(8), 4 * _LANES), ir.VectorType(ir.FloatType(), _LANES)


#: Unit rows whose norms pass this are not rounded (the bound of :func:`screen_cut` assumes it).
MAX_NORM = 1.0 + 1e-6


def screen_cut(cut: float, d: int) -> int:
    """The least int16 product a pair whose cosine (of float32 rows of norm at most :data:`MAX_NORM`)
    reaches ``cut`` can have: S²·cut less the rounding's worst error S·√d·MAX_NORM + d/4, less 1; within
    ±2^62 (a cut of any size, infinite: nothing or everything screened; NaN: nothing)."""
    s = float(INT16_SCALE)
    value = s * s * cut - s * math.sqrt(d) * MAX_NORM - 0.25 * d - 1.0
    return 2**62 if math.isnan(value) else int(math.floor(min(max(value, -2.0**62), 2.0**62)))


def _broadcast(builder, value, kind):
    """``value`` (a scalar IR value) in every lane of the vector type ``kind`` (16 lanes)."""
    one = builder.insert_element(ir.Constant(kind, ir.Undefined), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(kind, ir.Undefined), ir.Constant(_V16, None))


def _vnni_sums(context, builder, signature, args, name: str, operand):
    """The shared loop of :func:`_block` and :func:`_block8`: ROWS x _VECTORS accumulators of 16 int32
    lanes, one ``name`` instruction per (row, 16 columns, dword of ``left``'s row); ``args`` start
    (left, row0, packed, block). Returns the accumulators (``operand``: the instruction's vector type)
    after the loop, the builder in the block after it. With ``vpdpbusd`` the column bytes are the
    unsigned operand (Intel's first multiplicand) and the row's the signed one."""
    a_arr, row0, b_arr, blk = args[:4]
    a = context.make_array(signature.args[0])(context, builder, a_arr)
    b = context.make_array(signature.args[2])(context, builder, b_arr)
    dwords = builder.extract_value(a.shape, 1)
    a_ptr = builder.gep(a.data, [builder.mul(row0, dwords)])
    b_ptr = builder.gep(b.data, [builder.mul(blk, builder.mul(dwords, ir.Constant(_I64, BLOCK_COLUMNS)))])
    fn_type = ir.FunctionType(_V16, [_V16, operand, operand])
    fn = builder.module.globals.get(name) or ir.Function(builder.module, fn_type, name)
    entry = builder.block
    loop, done = builder.append_basic_block("dwords"), builder.append_basic_block("store")
    builder.branch(loop)
    builder.position_at_end(loop)
    k = builder.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), entry)
    acc = [[builder.phi(_V16) for _ in range(_VECTORS)] for _ in range(ROWS)]
    for row in acc:
        for phi in row:
            phi.add_incoming(ir.Constant(_V16, None), entry)
    columns = []
    for v in range(_VECTORS):
        at = builder.add(builder.mul(k, ir.Constant(_I64, BLOCK_COLUMNS)), ir.Constant(_I64, _LANES * v))
        vector = builder.load(builder.bitcast(builder.gep(b_ptr, [at]), _V16.as_pointer()), align=4)
        columns.append(builder.bitcast(vector, operand))
    sums = []
    for r in range(ROWS):
        dword = builder.load(builder.gep(a_ptr, [builder.add(builder.mul(ir.Constant(_I64, r), dwords), k)]))
        spread = builder.bitcast(_broadcast(builder, dword, _V16), operand)
        pairs = [(spread, columns[v]) if name == _VPDPWSSD else (columns[v], spread) for v in range(_VECTORS)]
        sums.append([builder.call(fn, [acc[r][v], *pairs[v]]) for v in range(_VECTORS)])
    k_next = builder.add(k, ir.Constant(_I64, 1))
    tail = builder.block
    k.add_incoming(k_next, tail)
    for r in range(ROWS):
        for v in range(_VECTORS):
            acc[r][v].add_incoming(sums[r][v], tail)
    builder.cbranch(builder.icmp_signed("<", k_next, dwords), loop, done)
    builder.position_at_end(done)
    return sums


@intrinsic
def _block(typingctx, left, row0, packed, block, out, out_row0, out_col0):
    """``out[out_row0 + r, out_col0 + c] = Σ_k left[row0 + r, k] · packed[block, k, c]`` as word pairs
    (r < ROWS, c < BLOCK_COLUMNS), one ``vpdpwssd`` per (r, 16 columns, word pair); ``left`` (rows,
    ⌈d/2⌉) and ``packed`` (blocks, ⌈d/2⌉, BLOCK_COLUMNS) int32 C-contiguous with ⌈d/2⌉ ≥ 1, ``out``
    int32 C-contiguous (another layout does not compile). No bounds are checked: the caller's loops keep
    every index inside."""
    if any(getattr(a, "layout", None) != "C" or a.dtype != types.int32 for a in (left, packed, out)):
        return None  # (a strided view would be read and written as if contiguous)
    sig = types.void(left, types.int64, packed, types.int64, out, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        sums = _vnni_sums(context, builder, signature, args, _VPDPWSSD, _W32)
        o = context.make_array(signature.args[4])(context, builder, args[4])
        orow, ocol = args[5], args[6]
        stride = builder.extract_value(o.shape, 1)
        for r in range(ROWS):
            base = builder.add(builder.mul(builder.add(orow, ir.Constant(_I64, r)), stride), ocol)
            for v in range(_VECTORS):
                at = builder.add(base, ir.Constant(_I64, _LANES * v))
                builder.store(sums[r][v], builder.bitcast(builder.gep(o.data, [at]), _V16.as_pointer()), align=4)
        return context.get_dummy_value()

    return sig, codegen


@parallel
def _int16_tile(left, packed, first_block, out):
    """``out[r, c] = q(row r) · q(column first_block·BLOCK_COLUMNS + c)`` for every row of ``left`` (a
    multiple of ROWS) and every column of ``out`` (any width: a last partial block goes through a small
    buffer of its own); the blocks in parallel, each writing only its own columns of ``out``."""
    width = out.shape[1]
    blocks = (width + BLOCK_COLUMNS - 1) // BLOCK_COLUMNS
    for b in prange(blocks):
        at = b * BLOCK_COLUMNS
        if at + BLOCK_COLUMNS <= width:
            for r in range(0, left.shape[0], ROWS):
                _block(left, r, packed, first_block + b, out, r, at)
        else:
            part = np.empty((ROWS, BLOCK_COLUMNS), dtype=np.int32)
            for r in range(0, left.shape[0], ROWS):
                _block(left, r, packed, first_block + b, part, 0, 0)
                out[r:r + ROWS, at:] = part[:, : width - at]


_int16_tile_serial = serial_twin(_int16_tile, "_int16_tile_serial")


@serial
def _word_pair(first, second):
    """Two unit-row components rounded to int16 at INT16_SCALE (half to even; clamped: a norm of
    1 + 1e-7) as one int32 word pair: the first in the low half, the second in the high."""
    low = min(max(np.rint(np.float64(first) * INT16_SCALE), -INT16_SCALE), INT16_SCALE)
    high = min(max(np.rint(np.float64(second) * INT16_SCALE), -INT16_SCALE), INT16_SCALE)
    return np.int32((np.int64(low) & 0xFFFF) + np.int64(high) * 65536)


@parallel
def _pack_columns(unit, packed):
    """Every row of ``unit`` (float32, n x d) rounded into ``packed`` ((⌈n/BLOCK_COLUMNS⌉, ⌈d/2⌉,
    BLOCK_COLUMNS) int32): row i's components 2k and 2k + 1 in ``packed[i // B, k, i % B]`` (low and
    high half); the padding (rows past n, a last odd component) is zero. The blocks in parallel, each
    writing its own. Returns the largest norm of a row (float64 sums of its squares)."""
    n, d = unit.shape
    pairs = packed.shape[1]
    largest = np.zeros(packed.shape[0], dtype=np.float64)
    for b in prange(packed.shape[0]):
        first, rows = b * BLOCK_COLUMNS, min(BLOCK_COLUMNS, n - b * BLOCK_COLUMNS)
        packed[b, :, rows:] = 0
        squares = np.zeros(BLOCK_COLUMNS, dtype=np.float64)
        for k in range(pairs):
            for c in range(rows):
                low = unit[first + c, 2 * k]
                high = unit[first + c, 2 * k + 1] if 2 * k + 1 < d else np.float32(0.0)
                packed[b, k, c] = _word_pair(low, high)
                squares[c] += np.float64(low) ** 2 + np.float64(high) ** 2
        largest[b] = squares.max()
    return np.sqrt(largest.max()) if largest.shape[0] else 0.0


_pack_columns_serial = serial_twin(_pack_columns, "_pack_columns_serial")


@serial
def _pack_rows(unit, rows, left):
    """``unit[rows[r]]`` rounded into ``left[r]`` ((≥ len(rows), ⌈d/2⌉) int32 word pairs); the rows past
    ``len(rows)`` are zero."""
    d = unit.shape[1]
    pairs = left.shape[1]
    left[rows.shape[0]:] = 0
    for r in range(rows.shape[0]):
        i = rows[r]
        for k in range(d // 2):
            left[r, k] = _word_pair(unit[i, 2 * k], unit[i, 2 * k + 1])
        if pairs > d // 2:
            left[r, pairs - 1] = _word_pair(unit[i, d - 1], 0.0)


# --- int8 products: 64 multiply-adds an instruction, each row at its own scale --------------------------------


def int8_slack(residual: np.ndarray, rounded: float) -> np.ndarray:
    """Each row's slack in the int8 route's bound, float32 rounded up: ``M·ρ_i`` with ``ρ_i`` the norm of
    row i's rounding residual ``r_i = u_i − q_i·inv_i`` and ``M`` the largest of :data:`MAX_NORM` and
    ``rounded`` (the largest ‖q·inv‖). For rows of norm at most MAX_NORM,
    ``u_i·u_j − (q_i·inv_i)·(q_j·inv_j) = (q_i·inv_i)·r_j + r_i·u_j``, at most ``M·(ρ_i + ρ_j)`` in size:
    ``(q_i·q_j)·inv_i·inv_j + slack_i + slack_j`` is at least the cosine ``u_i·u_j``."""
    factor = max(MAX_NORM, float(rounded)) * (1.0 + 1e-6)
    slack = (np.asarray(residual, dtype=np.float64) * factor).astype(np.float32)
    return np.nextafter(slack, np.float32(np.inf))


def int8_screen(cut: float) -> np.float32:
    """The value a pair's int8 bound (computed in float32, :data:`INT8_ROUNDING` low at most) reaches
    when its cosine reaches ``cut``: float32, rounded down."""
    value = np.float32(float(cut) - INT8_ROUNDING)
    return value if float(value) <= float(cut) - INT8_ROUNDING else np.nextafter(value, np.float32(-np.inf))


@intrinsic
def _block8(typingctx, left, row0, packed, block, corr, row_scales, col_scales, screen, out, out_row0, out_word):
    """Bit c of ``out[out_row0 + r, out_word]``: whether the int8 route's upper bound (:func:`int8_slack`) for
    row ``row0 + r`` of ``left`` (s8 dwords) and column c of ``packed[block]`` (u8 dwords, each component
    + 128), ``(Σ_k left·packed − corr[row]) · inv_row · inv_col + slack_col + slack_row`` in float32, reaches
    ``screen`` (float32); ``row_scales`` and ``col_scales`` (2, ·) float32 hold (inv, slack) of each row and
    column (the columns' indexed from ``block``'s first). One ``vpdpbusd`` per (r, 16 columns, dword); the
    bounds stay in registers (with a float32 tile written and read again, the cosine took 128 against 95
    ms CPU in select() at 20,000 x 384). C-contiguous int32 ``left``, ``packed``, ``corr``, float32 scales
    and uint64 ``out`` (another layout does not compile); no bounds are checked."""
    if any(getattr(a, "layout", None) != "C" for a in (left, packed, corr, row_scales, col_scales, out)) or any(
            a.dtype != types.int32 for a in (left, packed, corr)) or any(
            a.dtype != types.float32 for a in (row_scales, col_scales)) or out.dtype != types.uint64:
        return None
    sig = types.void(left, types.int64, packed, types.int64, corr, row_scales, col_scales, types.float32, out,
                     types.int64, types.int64)

    def codegen(context, builder, signature, args):
        sums = _vnni_sums(context, builder, signature, args, _VPDPBUSD, _B64)
        row0, blk, orow, oword = args[1], args[3], args[9], args[10]
        corr_a, rows_a, cols_a, o = (context.make_array(signature.args[k])(context, builder, args[k])
                                     for k in (4, 5, 6, 8))
        row_stride = builder.extract_value(rows_a.shape, 1)
        col_stride = builder.extract_value(cols_a.shape, 1)
        stride = builder.extract_value(o.shape, 1)
        first = builder.mul(blk, ir.Constant(_I64, BLOCK_COLUMNS))

        def vector(data, at):
            return builder.load(builder.bitcast(builder.gep(data, [at]), _F16.as_pointer()), align=4)

        inv_c = [vector(cols_a.data, builder.add(first, ir.Constant(_I64, _LANES * v))) for v in range(_VECTORS)]
        slack_c = [vector(cols_a.data, builder.add(builder.add(first, col_stride), ir.Constant(_I64, _LANES * v)))
                   for v in range(_VECTORS)]
        screen_v = _broadcast(builder, args[7], _F16)
        for r in range(ROWS):
            row = builder.add(row0, ir.Constant(_I64, r))
            corr_r = _broadcast(builder, builder.load(builder.gep(corr_a.data, [row])), _V16)
            inv_r = _broadcast(builder, builder.load(builder.gep(rows_a.data, [row])), _F16)
            slack_r = _broadcast(builder, builder.load(builder.gep(rows_a.data, [builder.add(row, row_stride)])), _F16)
            word = ir.Constant(_I64, 0)
            for v in range(_VECTORS):
                value = builder.fmul(builder.fmul(builder.sitofp(builder.sub(sums[r][v], corr_r), _F16), inv_r),
                                     inv_c[v])
                value = builder.fadd(builder.fadd(value, slack_c[v]), slack_r)
                bits = builder.zext(builder.bitcast(builder.fcmp_ordered(">=", value, screen_v), _I16), _I64)
                word = builder.or_(word, builder.shl(bits, ir.Constant(_I64, _LANES * v)))
            at = builder.add(builder.mul(builder.add(orow, ir.Constant(_I64, r)), stride), oword)
            builder.store(word, builder.gep(o.data, [at]))
        return context.get_dummy_value()

    return sig, codegen


@parallel
def _int8_masks(left, corr, row_scales, packed, col_scales, first_block, screen, out):
    """:func:`_block8` for every row of ``left`` (a multiple of ROWS) and every word of ``out`` ((rows, words)
    uint64: word w's bits are the columns of block ``first_block + w``); the blocks in parallel, each
    writing only its own words."""
    for w in prange(out.shape[1]):
        for r in range(0, left.shape[0], ROWS):
            _block8(left, r, packed, first_block + w, corr, row_scales, col_scales, screen, out, r, w)


_int8_masks_serial = serial_twin(_int8_masks, "_int8_masks_serial")


@serial
def _row_step(row):
    """A row's int8 step ``inv`` (its largest magnitude / 127, float32; 0 for a zero row) and the factor
    its components are rounded by (1 / inv in float64; 0 for a zero row). The largest magnitude in four
    running maxima (one chain of dependent ``max`` took 0.5 ns a component, half of
    :func:`_pack_columns8`'s time: 391 against 165 µs at 2,000 x 384); the rows are finite."""
    d = row.shape[0]
    m0 = m1 = m2 = m3 = np.float32(0.0)
    k = 0
    while k + 4 <= d:
        m0, m1 = max(m0, abs(row[k])), max(m1, abs(row[k + 1]))
        m2, m3 = max(m2, abs(row[k + 2])), max(m3, abs(row[k + 3]))
        k += 4
    largest = max(max(m0, m1), max(m2, m3))
    for j in range(k, d):
        largest = max(largest, abs(row[j]))
    inv = np.float32(np.float64(largest) / INT8_SCALE)
    return inv, _factor(inv)


@serial
def _factor(inv):
    """What a row's components are multiplied by before rounding: 1 / its step ``inv`` in float64 (0 for
    a zero row's step)."""
    return 1.0 / np.float64(inv) if inv > 0 else 0.0


@serial
def _int8_of(x, factor):
    """``x`` times ``factor`` rounded half to even, clamped to ±127."""
    return int(min(max(np.rint(np.float64(x) * factor), -INT8_SCALE), INT8_SCALE))


@parallel_sums
def _pack_columns8(unit, packed, inverse, residual):
    """Every row of ``unit`` (float32, n x d) rounded to int8 at its own step (:func:`_row_step`, into
    ``inverse[i]``), as u8 (+ 128) into ``packed`` ((⌈n/BLOCK_COLUMNS⌉, ⌈d/4⌉, BLOCK_COLUMNS) int32: row
    i's components 4k .. 4k + 3 in ``packed[i // B, k, i % B]``, lowest byte first; padding 128, a zero),
    and the norm of its rounding's residual ``u - q·inv`` (float64) into ``residual[i]``. The blocks in
    parallel, each writing its own; the float64 sums in SIMD lanes. Returns (the largest norm of a row,
    the largest norm of a ``q·inv``)."""
    n, d = unit.shape
    dwords = packed.shape[1]
    norms = np.zeros((packed.shape[0], 2), dtype=np.float64)
    for b in prange(packed.shape[0]):
        first, rows = b * BLOCK_COLUMNS, min(BLOCK_COLUMNS, n - b * BLOCK_COLUMNS)
        packed[b, :, rows:] = 0x80808080 - 2**32
        row_bytes = np.full(4 * dwords, 128, dtype=np.uint8)
        words = row_bytes.view(np.int32)
        for c in range(rows):
            u = unit[first + c]
            inv, factor = _row_step(u)
            inverse[first + c] = inv
            step = np.float64(inv)
            square = rounded = left = 0.0
            for k in range(d):
                x = np.float64(u[k])
                q = _int8_of(x, factor)
                row_bytes[k] = np.uint8(q + 128)
                square += x * x
                rounded += (q * step) ** 2
                left += (x - q * step) ** 2
            packed[b, :, c] = words
            residual[first + c] = np.sqrt(left)
            norms[b, 0] = max(norms[b, 0], square)
            norms[b, 1] = max(norms[b, 1], rounded)
    return np.sqrt(norms[:, 0].max()) if n else 0.0, np.sqrt(norms[:, 1].max()) if n else 0.0


_pack_columns8_serial = serial_twin(_pack_columns8, "_pack_columns8_serial", serial_sums)


@serial
def _pack_rows8(unit, rows, inverse, left, corr):
    """``unit[rows[r]]`` rounded at its step ``inverse[rows[r]]`` (:func:`_pack_columns8`'s) into ``left[r]``
    (s8 dwords, lowest byte first, padding 0) and 128 x the sum of its int8 components into ``corr[r]``
    (what the columns' + 128 adds); the rows past ``len(rows)``: zero."""
    d = unit.shape[1]
    left[rows.shape[0]:] = 0
    corr[rows.shape[0]:] = 0
    row_bytes = np.zeros(4 * left.shape[1], dtype=np.int8)
    words = row_bytes.view(np.int32)
    for r in range(rows.shape[0]):
        u = unit[rows[r]]
        factor = _factor(inverse[rows[r]])
        total = 0
        for k in range(d):
            q = _int8_of(u[k], factor)
            total += q
            row_bytes[k] = q
        left[r] = words
        corr[r] = 128 * total
