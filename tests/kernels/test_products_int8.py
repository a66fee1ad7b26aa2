"""The int8 product kernels of ctxselect/kernels/products.py against their plain-Python twins
(tests/naive/products.py): each row's step, the packed bytes (columns + 128, rows signed, with their
sums), the residuals and slacks, the tiles' bits (whether each bound reaches the screen; serial and
parallel), and that a bound never lies below its pair's cosine by more than float32 rounding (the screen
lets every pair at the cut through).
The packing runs interpreted too (``NUMBA_DISABLE_JIT=1``); the tiles need the compiled kernel and a
CPU with AVX-512 VNNI."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core import config as numba_config

from ctxselect._config import COSINE_PRODUCTS
from ctxselect.kernels.products import (
    BLOCK_COLUMNS,
    INT8_ROUNDING,
    MAX_NORM,
    ROWS,
    _int8_masks,
    _int8_masks_serial,
    _pack_columns8,
    _pack_columns8_serial,
    _pack_rows8,
    int8_screen,
    int8_slack,
)
from tests.helpers import bit_rows
from tests.naive.products import (
    naive_int8_bound,
    naive_int8_columns,
    naive_int8_rows,
    naive_residual,
    naive_row_step,
)
from tests.strategies import unit_rows

needs_vnni = pytest.mark.skipif(COSINE_PRODUCTS == "float32", reason="int8 products need the JIT and AVX-512 VNNI")


def packed(unit, kernel=_pack_columns8):
    """The columns packed (junk first: the kernel writes every byte), their steps and slacks as
    :class:`~ctxselect.features.tiles.Tiles` keeps them, and the norms the kernel returns."""
    n, d = unit.shape
    blocks = -(-n // BLOCK_COLUMNS)
    cols = np.full((blocks, -(-d // 4), BLOCK_COLUMNS), 7, np.int32)
    scales = np.full((2, blocks * BLOCK_COLUMNS), 5.0, np.float32)
    residual = np.full(n, 9.0)
    norm, rounded = kernel(unit, cols, scales[0], residual)
    scales[1, :n] = int8_slack(residual, rounded)
    scales[:, n:] = 0.0
    return cols, scales, residual, norm, rounded


def packed_rows(unit, rows, scales):
    count = -(-len(rows) // ROWS) * ROWS
    left, corr = np.full((count, -(-unit.shape[1] // 4)), 7, np.int32), np.full(count, 7, np.int32)
    _pack_rows8(unit, np.asarray(rows, dtype=np.int64), scales[0], left, corr)
    row_scales = np.zeros((2, count), np.float32)
    row_scales[:, : len(rows)] = scales[:, rows]
    return left, corr, row_scales


def test_steps_and_bytes_by_hand():
    unit = np.array([[0.6, -0.8, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], np.float32)
    cols, scales, residual, norm, rounded = packed(unit)
    assert scales[0, :3].tolist() == [np.float32(0.8 / 127), 0.0, np.float32(1 / 127)]
    # row 0: 0.6 / (0.8 / 127) = 95.25 -> 95, -127, 0; + 128 -> 223, 1, 128; padding 128
    assert cols[0, 0, 0] == np.int32(np.uint32(223 | 1 << 8 | 128 << 16 | 128 << 24).view(np.int32))
    assert cols[0, 0, 1] == np.uint32(0x80808080).view(np.int32)  # a zero row: 128s
    assert cols[0, 0, 3:].tolist() == [np.uint32(0x80808080).view(np.int32)] * (BLOCK_COLUMNS - 3)
    assert residual[1] == 0.0 and 0.0 < residual[2] < 1e-8 < residual[0]  # (1 / 127 is not a float32)
    left, corr, _ = packed_rows(unit, [0, 2], scales)
    assert left[0, 0] == np.int32(95 | (-127 & 0xFF) << 8) and corr[:2].tolist() == [128 * (95 - 127), 128 * 127]
    assert not left[2:].any() and not corr[2:].any()
    assert norm == pytest.approx(1.0, abs=1e-6) and rounded == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("n, d", [(1, 1), (3, 2), (65, 5), (130, 64), (200, 384), (70, 7)])
def test_packing_matches_the_twin(n, d):
    unit = unit_rows(np.random.default_rng(n + d), n, d, zero=[0], spread=True)
    for kernel in (_pack_columns8, _pack_columns8_serial):
        cols, scales, residual, norm, rounded = packed(unit, kernel)
        twins = [naive_residual(row.tolist()) for row in unit]
        for i in range(n):
            assert cols[i // BLOCK_COLUMNS, :, i % BLOCK_COLUMNS].tolist() == naive_int8_columns(unit[i].tolist())
            assert scales[0, i] == naive_row_step(unit[i].tolist())[0]
            assert residual[i] == pytest.approx(twins[i][0], rel=1e-9, abs=1e-15)  # sums in SIMD lanes
        assert rounded == pytest.approx(max(t[1] for t in twins), rel=1e-12)
        assert norm == pytest.approx(max(math.sqrt(sum(float(x) ** 2 for x in row)) for row in unit), rel=1e-12)
    rows = list(range(n - 1, -1, -2))
    left, corr, _ = packed_rows(unit, rows, scales)
    assert [(a, int(b)) for a, b in zip(left[: len(rows)].tolist(), corr)] == [naive_int8_rows(unit[r].tolist())
                                                                             for r in rows]


def test_slack_and_screen():
    residual = np.array([0.0, 1e-3, 0.02, 0.5])
    for rounded in (0.5, 1.0, 1.003):
        slack = int8_slack(residual, rounded)
        want = residual * max(MAX_NORM, rounded)
        assert slack.dtype == np.float32 and (slack >= want).all() and (slack <= want * (1 + 1e-5) + 1e-40).all()
    for cut in (-1.0, 0.0, 0.5, 0.8 - 1e-5, 0.999, 1.0):
        screen = int8_screen(cut)
        assert screen.dtype == np.float32 and float(screen) <= cut - INT8_ROUNDING
        assert float(screen) >= cut - INT8_ROUNDING - 1e-7


def screened(left, corr, row_scales, cols, scales, first, screen, words, kernel=_int8_masks_serial):
    """The bit tile of ``words`` words a row (junk first: the kernel writes every word)."""
    out = np.full((len(left), words), 0x5A5A5A5A5A5A5A5A, np.uint64)
    kernel(left, corr, row_scales, cols, scales, first, np.float32(screen), out)
    return out


@needs_vnni
@pytest.mark.parametrize("n, d, first", [(4, 1, 0), (64, 2, 0), (70, 7, 1), (200, 384, 1), (300, 33, 2)])
def test_tiles_match_the_twin_serial_and_parallel(n, d, first):
    """At screens through the bounds' range, a bit is set where the twin's bound (float64) reaches the
    screen and clear where it lies below, but for float32 rounding right at the screen."""
    rng = np.random.default_rng(n * d)
    unit = unit_rows(rng, n, d, zero=[1], spread=True)
    cols, scales, *_ = packed(unit)
    rows = sorted(rng.choice(n, size=min(n, 9), replace=False).tolist())
    left, corr, row_scales = packed_rows(unit, rows, scales)
    lo, hi = first * BLOCK_COLUMNS, n
    want = np.array(naive_int8_bound(unit.tolist(), rows, lo, hi, scales[1]))
    cosines = unit[rows].astype(np.float64) @ unit[lo:hi].T.astype(np.float64)
    assert (want >= cosines - 1e-12).all()  # the bound (int8_slack's docstring)
    for screen in np.quantile(want, [0.0, 0.3, 0.9, 1.0]).tolist() + [-2.0, 0.9, 2.0]:
        sure = np.abs(want - np.float32(screen)) > INT8_ROUNDING
        for kernel in (_int8_masks_serial, _int8_masks):
            # every block from ``first`` on, and a range that ends a block earlier (its last word all columns)
            for words in {cols.shape[0] - first, max(1, cols.shape[0] - first - 1)}:
                width = min(hi - lo, words * BLOCK_COLUMNS)
                bits = bit_rows(screened(left, corr, row_scales, cols, scales, first, screen, words, kernel),
                               len(rows))[:, :width]
                known = sure[:, :width]
                assert np.array_equal(bits[known], (want[:, :width] >= np.float32(screen))[known])
                assert bits[cosines[:, :width] >= screen + INT8_ROUNDING].all()
    with pytest.raises(Exception, match="(?i)typing|no implementation|invalid use"):  # a strided view
        _int8_masks_serial(left, corr, row_scales, cols, scales, first, np.float32(0.5),
                           np.zeros((len(left), 3), np.uint64)[:, :-1])
    with pytest.raises(Exception, match="(?i)typing|no implementation|invalid use"):  # words not uint64
        _int8_masks_serial(left, corr, row_scales, cols, scales, first, np.float32(0.5),
                           np.zeros((len(left), 2), np.int64))


@needs_vnni
@settings(max_examples=60, deadline=None)
@given(d=st.integers(1, 70), seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([0.0, 1.0, 8.0, 30.0]),
       near=st.floats(0.0, 0.3), cut=st.sampled_from([-0.5, 0.0, 0.5, 0.9, 0.99, 1.0, "a cosine"]))
def test_every_pair_at_the_cut_passes_the_screen(d, seed, spread, near, cut):
    """Rows of any spread of magnitudes (a power of uniform numbers), half of them near copies of the
    others, cut at a fixed value or exactly at one of their cosines: every pair whose cosine (float64
    sums of the float32 rows) reaches the cut has its bit set at that cut's screen (each bound lies at
    most float32 rounding below its cosine), and only pairs whose bound (the twin's) reaches it do."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((40, d)) * rng.random((40, d)) ** spread
    x[20:] = x[:20] + near * rng.standard_normal((20, d)) * np.abs(x[:20]).max()
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = (x / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    if np.linalg.norm(unit.astype(np.float64), axis=1).max() > MAX_NORM:
        return  # (such rows take the GEMM: features/tiles.py)
    cols, scales, *_ = packed(unit)
    left, corr, row_scales = packed_rows(unit, list(range(40)), scales)
    cosines = unit.astype(np.float64) @ unit.T.astype(np.float64)
    if cut == "a cosine":
        cut = float(cosines[rng.integers(40), rng.integers(40)])
    screen = int8_screen(cut)
    bits = bit_rows(screened(left, corr, row_scales, cols, scales, 0, screen, 1), 40)[:, :40]
    assert bits[cosines >= cut].all()
    bound = np.array(naive_int8_bound(unit.tolist(), list(range(40)), 0, 40, scales[1]))
    assert not bits[bound < float(screen) - INT8_ROUNDING].any()


@pytest.mark.skipif(numba_config.DISABLE_JIT, reason="compiled kernels only")
def test_the_parallel_kernels_are_parallel_and_their_twins_serial():
    for parallel, serial in ((_int8_masks, _int8_masks_serial), (_pack_columns8, _pack_columns8_serial)):
        assert parallel.targetoptions.get("parallel") and not serial.targetoptions.get("parallel")
        assert parallel.py_func.__qualname__ != serial.py_func.__qualname__
        assert parallel.targetoptions.get("fastmath") == serial.targetoptions.get("fastmath")
