"""The int16 product kernels of ctxselect/kernels/products.py against their plain-Python twins
(tests/naive/products.py): the word pairs, the tiles (serial and parallel), the screen's bound and
the check (kernels/pairs.py). The packing and the check run interpreted too (``NUMBA_DISABLE_JIT=1``); the tiles need
the compiled kernel and a CPU with AVX-512 VNNI."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core import config as numba_config

from ctxselect._config import COSINE_PRODUCTS
from ctxselect.kernels.products import (
    BLOCK_COLUMNS,
    INT16_SCALE,
    MAX_NORM,
    ROWS,
    _int16_tile,
    _int16_tile_serial,
    _pack_columns,
    _pack_columns_serial,
    _pack_rows,
    screen_cut,
)
from ctxselect.kernels.pairs import _check_pairs, _check_pairs_serial
from tests.naive.products import (
    naive_check_pairs,
    naive_int16_tile,
    naive_largest_norm,
    naive_word_pairs,
)
from tests.strategies import unit_rows

needs_vnni = pytest.mark.skipif(COSINE_PRODUCTS == "float32", reason="int16 products need the JIT and AVX-512 VNNI")


def packed_columns(unit):
    n, d = unit.shape
    out = np.full((-(-n // BLOCK_COLUMNS), (d + 1) // 2, BLOCK_COLUMNS), 7, np.int32)  # junk: the kernel clears it
    largest = _pack_columns(unit, out)
    assert largest == pytest.approx(naive_largest_norm(unit.tolist()), rel=1e-12)
    return out


def packed_rows(unit, rows, extra=0):
    out = np.full((-(-len(rows) // ROWS) * ROWS + extra, (unit.shape[1] + 1) // 2), 7, np.int32)
    _pack_rows(unit, np.asarray(rows, dtype=np.int64), out)
    return out


def test_word_pairs_by_hand():
    """0.5 · 32,767 = 16,383.5 rounds to even (16,384); -1 and 1 stay within ±32,767; the odd last
    component's high half is 0; a negative high half makes the pair negative."""
    unit = np.array([[0.5, -1.0, 1.0], [0.0, -0.25, 1e-9]], np.float32)
    assert naive_word_pairs(unit[0]) == [(16_384 & 0xFFFF) - 32_767 * 65_536, 32_767]
    np.testing.assert_array_equal(packed_rows(unit, [0, 1])[:2], [naive_word_pairs(r) for r in unit])
    cols = packed_columns(unit)
    assert cols.shape == (1, 2, BLOCK_COLUMNS)
    np.testing.assert_array_equal(cols[0, :, :2].T, [naive_word_pairs(r) for r in unit])
    assert not cols[0, :, 2:].any() and not packed_rows(unit, [0, 1])[2:].any()  # the padding is zero


@pytest.mark.parametrize("n, d", [(1, 1), (3, 2), (65, 5), (130, 64), (200, 384)])
def test_packing_matches_the_twin(n, d):
    unit = unit_rows(np.random.default_rng(n + d), n, d, zero=[0])
    cols = packed_columns(unit)
    for i in range(n):
        assert cols[i // BLOCK_COLUMNS, :, i % BLOCK_COLUMNS].tolist() == naive_word_pairs(unit[i])
    rows = list(range(n - 1, -1, -2))
    assert packed_rows(unit, rows)[: len(rows)].tolist() == [naive_word_pairs(unit[r]) for r in rows]


@needs_vnni
@pytest.mark.parametrize("n, d, first", [(4, 1, 0), (64, 2, 0), (70, 7, 1), (200, 384, 1), (300, 33, 2)])
def test_tiles_match_the_twin_serial_and_parallel(n, d, first):
    rng = np.random.default_rng(n * d)
    unit = unit_rows(rng, n, d, zero=[1])
    unit[2] = np.float32(1.0) if d == 1 else unit[2]
    rows = sorted(rng.choice(n, size=min(n, 9), replace=False).tolist())
    left, cols = packed_rows(unit, rows), packed_columns(unit)
    width = cols.shape[0] * BLOCK_COLUMNS - first * BLOCK_COLUMNS
    lo, hi = first * BLOCK_COLUMNS, n
    want = naive_int16_tile(unit, rows, lo, hi)
    for kernel in (_int16_tile_serial, _int16_tile):
        out = np.full((len(left), width), 9, np.int32)
        kernel(left, cols, first, out)
        assert out[: len(rows), : hi - lo].tolist() == want
        assert not out[len(rows):].any() and not out[:, hi - lo:].any()  # zero rows and columns give 0
        exact = np.full((len(left), hi - lo), 9, np.int32)  # a partial last block: its columns only
        kernel(left, cols, first, exact)
        assert exact[: len(rows)].tolist() == want and not exact[len(rows):].any()
    with pytest.raises(Exception, match="(?i)typing|no implementation|invalid use"):  # a strided view
        _int16_tile_serial(left, cols, first, np.zeros((len(left), hi - lo + 1), np.int32)[:, :-1])


@needs_vnni
def test_the_largest_products_are_exact():
    """Rows of ±1 in one component, and rows spread evenly: products up to ±32,767² (the int32 lanes
    never wrap: each partial sum is bounded as the whole is) are exact."""
    d = 256
    unit = np.zeros((8, d), np.float32)
    unit[0, 0], unit[1, 0], unit[2, 5] = 1.0, -1.0, 1.0
    unit[3:5] = np.float32(1 / math.sqrt(d))
    unit[5:7] = -np.float32(1 / math.sqrt(d))
    unit[7, ::2] = np.float32(math.sqrt(2 / d))
    left, cols = packed_rows(unit, range(8)), packed_columns(unit)
    out = np.empty((len(left), BLOCK_COLUMNS), np.int32)
    _int16_tile_serial(left, cols, 0, out)
    assert out[:8, :8].tolist() == naive_int16_tile(unit, range(8), 0, 8)
    assert out[0, 0] == 32_767**2 and out[0, 1] == -(32_767**2)


def test_screen_cut_of_any_cut():
    """Infinite and huge cuts screen nothing or everything; NaN nothing (as a comparison with it)."""
    assert screen_cut(math.inf, 384) == screen_cut(1e300, 384) == screen_cut(math.nan, 384) == 2**62
    assert screen_cut(-math.inf, 384) == screen_cut(-1e300, 384) == -(2**62)
    assert screen_cut(1.0, 1) == math.floor(INT16_SCALE**2 - INT16_SCALE * MAX_NORM - 0.25 - 1)


@needs_vnni
@pytest.mark.parametrize("d", [1, 2, 3, 4, 8, 16, 64])
def test_every_pair_at_its_own_cosine_passes_the_screen(d):
    """Each of ~20,000 pairs of random rows, and of rows whose components round by almost half a unit,
    taken with a cut at its own checked cosine: its product reaches the screen. At small d the worst
    error comes within ~0.9 of the bound; a bound a third of this one fails here."""
    rng = np.random.default_rng(d)
    unit = unit_rows(rng, 200, d)
    half = np.round(unit * INT16_SCALE) + rng.choice([-0.4999, 0.4999], size=unit.shape)  # rounding's worst
    unit[100:] = (half[100:] / np.linalg.norm(half[100:], axis=1, keepdims=True)).astype(np.float32)
    left, cols = packed_rows(unit, range(200)), packed_columns(unit)
    out = np.empty((len(left), cols.shape[0] * BLOCK_COLUMNS), np.int32)
    _int16_tile_serial(left, cols, 0, out)
    exact = unit.astype(np.float64) @ unit.astype(np.float64).T
    worst = 0.0
    for a in range(200):
        for b in range(a + 1, 200):
            assert out[a, b] >= screen_cut(exact[a, b], d), (a, b)
            worst = max(worst, INT16_SCALE**2 * exact[a, b] - out[a, b])
    assert worst <= INT16_SCALE * math.sqrt(d) * MAX_NORM + d / 4 + 1


@needs_vnni
@settings(max_examples=60, deadline=None)
@given(d=st.integers(1, 96), seed=st.integers(0, 2**32 - 1), cut=st.floats(-0.5, 0.999))
def test_no_pair_at_the_cut_is_screened_out(d, seed, cut):
    """Pairs made to sit right at the cut (either side): every one whose checked cosine reaches the
    cut has an int16 product at or above the screen."""
    rng = np.random.default_rng(seed)
    base = unit_rows(rng, 1, d)[0].astype(np.float64)
    other = rng.standard_normal(d)
    other -= (other @ base) * base
    other /= max(np.linalg.norm(other), 1e-300)
    angles = np.arccos(np.clip(cut + rng.uniform(-2e-3, 2e-3, size=31), -1, 1))
    rows = [base] + [np.cos(a) * base + np.sin(a) * other for a in angles]
    unit = np.array(rows, np.float32)
    left, cols = packed_rows(unit, [0]), packed_columns(unit)
    out = np.empty((len(left), cols.shape[0] * BLOCK_COLUMNS), np.int32)
    _int16_tile_serial(left, cols, 0, out)
    screen = screen_cut(cut, d)
    reached = naive_check_pairs(unit, [0] * 32, range(32), cut)
    assert reached  # (the row with itself at least)
    for _, c, _ in reached:
        assert out[0, c] >= screen, (c, int(out[0, c]), screen)


@pytest.mark.parametrize("count", [0, 1, 50])
def test_check_pairs_matches_the_twin(count):
    rng = np.random.default_rng(count)
    unit = unit_rows(rng, 20, 7, zero=[3])
    unit[5] = unit[4]
    i = rng.integers(0, 20, size=count).astype(np.int64)
    j = rng.integers(0, 20, size=count).astype(np.int64)
    if count:
        i[0], j[0] = 4, 5  # the same row twice: a cosine of ~1, clipped
    for cut in (-1.0, 0.0, 0.3):
        got = _check_pairs(unit, i, j, cut)
        want = naive_check_pairs(unit, i.tolist(), j.tolist(), cut)  # sums in another order: the last bits
        assert [(a, b) for a, b, _ in want] == list(zip(got[0].tolist(), got[1].tolist()))
        np.testing.assert_allclose(got[2], [w for _, _, w in want], rtol=0, atol=1e-12)
        assert got[0].dtype == np.int64 and got[2].dtype == np.float64
        serial = _check_pairs_serial(unit, i, j, cut)
        assert all(np.array_equal(x, y) for x, y in zip(got, serial))  # the same sums on one thread


@pytest.mark.skipif(numba_config.DISABLE_JIT, reason="compiled kernels only")
def test_the_parallel_kernels_are_parallel_and_their_twins_serial():
    """Each parallel kernel compiles with ``parallel`` and its serial twin without, under a name of its
    own: one cache entry each (they once shared one, and the "parallel" kernel ran serially)."""
    for parallel, serial in ((_int16_tile, _int16_tile_serial), (_pack_columns, _pack_columns_serial),
                             (_check_pairs, _check_pairs_serial)):
        assert parallel.targetoptions.get("parallel") and not serial.targetoptions.get("parallel")
        assert parallel.py_func.__qualname__ != serial.py_func.__qualname__
        assert parallel.targetoptions.get("fastmath") == serial.targetoptions.get("fastmath")
