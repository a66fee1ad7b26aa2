"""The products of a call's cosine tiles: OpenBLAS's float32 GEMM, or exact integer products screened.

:class:`Tiles` is made once per :func:`~ctxselect.features.similarity.cosine_pairs_until` call, on its
unit rows. :meth:`Tiles.rows` readies a tile's rows once, :meth:`Tiles.product` gives their tile against
a range of columns, :attr:`Tiles.screen` is the value a pair must reach in it, :meth:`Tiles.upper` and
:meth:`Tiles.against` find the pairs that do (of the upper triangle, or of rows against every row), and
:meth:`Tiles.check` turns them into the pairs at or above the cut, with their weights. Three routes
(:data:`~ctxselect._config.COSINE_PRODUCTS`; the integer ones where the CPU has AVX-512 VNNI:
:mod:`ctxselect.kernels.products`):

- ``float32``: the tile holds the cosines; ``check`` keeps the pairs as found.
- ``int16``: the tile holds exact products of the rows rounded at 32,767; the screen lies below the cut
  by the rounding's worst error (~1e-4 of a cosine at d = 384).
- ``int8`` (twice as many multiply-adds an instruction): each row rounded to int8 at its own step; the
  kernel computes float32 upper bounds of the cosines (the exact product scaled, plus each side's slack:
  ~0.01-0.02 above the cosine at d = 384) and the tile holds one bit an entry, whether its bound reaches
  the screen, the cut less float32 rounding (with a float32 tile written and read again, the cosine took
  128 against 95 ms CPU in select() at 20,000 x 384). When more than :data:`INT8_BAND` of a call's
  compared entries pass the screen without reaching the cut (cosines crowding just under it), the next
  column range goes the int16 way: a check costs ~100 entries' products (100-260 against ~2 ns CPU at
  20,000 x 384).

With integer products ``check`` computes each screened pair's cosine again from the unit rows (float64
sums; in parallel from SERIAL_PAIRS pairs) and keeps those at or above the cut. Buffers are the
thread's kept ones (:mod:`ctxselect.features.scratch`).
"""

from __future__ import annotations

import numpy as np

from ctxselect._config import SERIAL_PAIRS
from ctxselect.features.scratch import scratch
from ctxselect.kernels.pairs import (
    _check_pairs,
    _check_pairs_serial,
    _row_bits,
    _row_pairs_above,
    _upper_bits,
    _upper_pairs_above,
)
from ctxselect.kernels.products import (
    BLOCK_COLUMNS,
    INT8_MAX_DIM,
    MAX_NORM,
    ROWS,
    _int8_masks,
    _int8_masks_serial,
    _int16_tile,
    _int16_tile_serial,
    _pack_columns,
    _pack_columns8,
    _pack_columns8_serial,
    _pack_columns_serial,
    _pack_rows,
    _pack_rows8,
    int8_screen,
    int8_slack,
    screen_cut,
)

__all__ = ["Tiles", "PRODUCT_KINDS", "INT8_BAND"]

#: The routes of :class:`Tiles`.
PRODUCT_KINDS = ("float32", "int16", "int8")
#: The int8 route gives way to int16 once the pairs it screened in vain pass this share of its entries.
INT8_BAND = 0.002


def _up(value: int, step: int) -> int:
    return -(-value // step) * step


class Tiles:
    """A call's tile products (module docstring).

    Parameters
    ----------
    unit : ndarray
        The call's unit rows, (n, d) float32.
    block : int
        The most rows a tile has.
    columns : int
        The most columns a tile has.
    cut : numpy.float32
        The least cosine a pair keeps.
    kind : {"float32", "int16", "int8"}
        The route; an integer one is never taken for d = 0, nor when a row's norm passes
        :data:`~ctxselect.kernels.products.MAX_NORM`, and int8 is int16 past
        :data:`~ctxselect.kernels.products.INT8_MAX_DIM` components (:attr:`kind` says which is taken).
    serial : bool
        The integer products on one thread (small products), else on every Numba thread.
    """

    def __init__(self, unit: np.ndarray, block: int, columns: int, cut, *, kind: str, serial: bool) -> None:
        if kind not in PRODUCT_KINDS:
            raise ValueError(f"kind: one of {', '.join(PRODUCT_KINDS)}, not {kind!r}")
        n, d = unit.shape
        self.unit, self.cut, self.block, self.serial = unit, cut, block, serial
        self.width = min(_up(n, BLOCK_COLUMNS), columns + BLOCK_COLUMNS)  # a range [lo, hi) from its block's start
        self.kind = kind if d > 0 and n > 0 else "float32"
        if self.kind == "int8" and d > INT8_MAX_DIM:  # (its int32 sums would not be exact)
            self.kind = "int16"
        self.entries = self.in_vain = 0  # the int8 route's compared entries, and its screened pairs not kept
        self.switched = False  # whether int8 tried to give way to int16 (once)
        if self.kind == "int8" and not self._int8():
            self.kind = "float32"
        if self.kind == "int16" and not self._int16():
            self.kind = "float32"
        if self.kind == "float32":
            self.buffer = scratch("cosine tiles", (block * min(n, columns),), np.float32)
            self.screen = cut

    def _int16(self) -> bool:
        """Ready the int16 route (its columns packed); False, and nothing changed, when a row's norm
        passes MAX_NORM (its sums differ in order from int8's: a row can pass one and not the other)."""
        n, d = self.unit.shape
        pairs = (d + 1) // 2
        packed = scratch("int16 columns", (_up(n, BLOCK_COLUMNS) // BLOCK_COLUMNS, pairs, BLOCK_COLUMNS), np.int32)
        # a guard: the screen's bound assumes no row past norm 1 (kernels/norms.py makes none since it reads rows
        # of tiny values over their largest value; they once made such rows)
        if (_pack_columns_serial if self.serial else _pack_columns)(self.unit, packed) > MAX_NORM:
            return False
        self.packed = packed
        self.left = scratch("int16 rows", (_up(self.block, ROWS), pairs), np.int32)
        self.buffer = scratch("int16 tiles", (_up(self.block, ROWS) * self.width,), np.int32)
        self.screen = np.int64(screen_cut(float(self.cut), d))
        self.kernel = _int16_tile_serial if self.serial else _int16_tile
        return True

    def _int8(self) -> bool:
        """Ready the int8 route (its columns packed, their steps and slacks); False when a row's norm
        passes MAX_NORM."""
        n, d = self.unit.shape
        dwords, blocks, rows = (d + 3) // 4, _up(n, BLOCK_COLUMNS) // BLOCK_COLUMNS, _up(self.block, ROWS)
        self.packed = scratch("int8 columns", (blocks, dwords, BLOCK_COLUMNS), np.int32)
        self.scales = scratch("int8 column scales", (2, blocks * BLOCK_COLUMNS), np.float32)
        residual = scratch("int8 residuals", (n,), np.float64)
        norm, rounded = (_pack_columns8_serial if self.serial else _pack_columns8)(
            self.unit, self.packed, self.scales[0], residual)
        if norm > MAX_NORM:
            return False
        self.scales[1, :n] = int8_slack(residual, rounded)
        self.scales[:, n:] = 0.0
        self.left = scratch("int8 rows", (rows, dwords), np.int32)
        self.corrections = scratch("int8 row sums", (rows,), np.int32)
        self.row_scales = scratch("int8 row scales", (2, rows), np.float32)
        self.buffer = scratch("int8 bits", (rows * _up(self.width, BLOCK_COLUMNS) // BLOCK_COLUMNS,), np.uint64)
        self.screen = int8_screen(float(self.cut))
        self.kernel = _int8_masks_serial if self.serial else _int8_masks
        return True

    def rows(self, rows) -> list:
        """The unit rows ``rows`` (a slice or positions) made ready for :meth:`product` (gathered, or
        rounded), once for all the column ranges they meet (a list :meth:`product` may redo in place)."""
        if self.kind == "float32":
            return [self.unit[rows]]
        return self._rounded(np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows)

    def _rounded(self, positions: np.ndarray) -> list:
        """The rows at ``positions`` rounded for the integer route taken: [left, count] for int16,
        [left, count, corrections, scales, positions] for int8."""
        count = len(positions)
        left = self.left[: _up(count, ROWS)]
        if self.kind == "int16":
            _pack_rows(self.unit, positions, left)
            return [left, count]
        corrections, scales = self.corrections[: len(left)], self.row_scales[:, : len(left)]
        _pack_rows8(self.unit, positions, self.scales[0], left, corrections)
        scales[:, :count] = self.scales[:, positions]
        scales[:, count:] = 0.0
        return [left, count, corrections, np.ascontiguousarray(scales), positions]

    def product(self, ready: list, lo: int, hi: int) -> np.ndarray:
        """The tile (C-contiguous) of :meth:`rows`' rows against rows ``lo .. hi`` (at most ``columns``
        of them). float32 and int16: ``tile[r, c]`` for row ``rows[r]`` and row ``lo + c``; int8: uint64
        words, bit b of ``tile[r, w]`` set when the bound of row ``rows[r]`` and row ``f + 64·w + b``
        reaches the screen, ``f`` the start of ``lo``'s block of BLOCK_COLUMNS (columns outside ``lo .. hi``
        are junk). Once int8's pairs screened in vain pass :data:`INT8_BAND` of its compared entries, first
        the switch to int16 (tried once; ``ready`` redone in place)."""
        if len(ready) == 5 and not self.switched and self.in_vain > INT8_BAND * self.entries:
            self.switched = True
            if self._int16():
                self.kind = "int16"  # cosines crowd under the cut: the narrower screen from here on
        if len(ready) == 5 and self.kind == "int16":
            ready[:] = self._rounded(ready[4])
        if len(ready) == 1:
            left = ready[0]
            tile = self.buffer[: len(left) * (hi - lo)].reshape(len(left), hi - lo)
            np.matmul(left, self.unit[lo:hi].T, out=tile)
            return tile
        left, count = ready[:2]
        first = lo // BLOCK_COLUMNS
        shift = lo - first * BLOCK_COLUMNS  # 0 but for a tile size that is not a multiple of BLOCK_COLUMNS
        if len(ready) == 5:
            words = _up(hi - lo + shift, BLOCK_COLUMNS) // BLOCK_COLUMNS
            bits = self.buffer[: len(left) * words].reshape(len(left), words)
            self.kernel(left, ready[2], ready[3], self.packed, self.scales, first, self.screen, bits)
            return bits[:count]
        tile = self.buffer[: len(left) * (hi - lo + shift)].reshape(len(left), hi - lo + shift)
        self.kernel(left, self.packed, first, tile)
        return tile[:count] if not shift else np.ascontiguousarray(tile[:count, shift:])

    def upper(self, ready: list, start: int, lo: int, hi: int):
        """The pairs (i < j, weight) at or above :attr:`screen` between :meth:`rows`' rows, ``start ..``, and
        rows ``lo .. hi`` after each, row-major order (:func:`~ctxselect.kernels.pairs._upper_pairs_above`, or
        its twin for int8's bits). The weights are the cosines on the float32 route; on the integer ones
        :meth:`check` computes them (int8: None, int16: the products, clipped)."""
        tile = self.product(ready, lo, hi)
        if tile.dtype == np.uint64:
            return (*_upper_bits(tile, len(tile), start, lo - lo % BLOCK_COLUMNS, lo, hi), None)
        return _upper_pairs_above(tile, start, lo, self.screen)

    def against(self, ready: list, rows: np.ndarray, key: np.ndarray, limit: np.ndarray, lo: int, hi: int):
        """The pairs (min, max, weight) at or above :attr:`screen` between :meth:`rows`' rows ``rows`` and
        rows ``lo .. hi`` whose ``key`` (one per row) exceeds the row's ``limit``, row-major order
        (:func:`~ctxselect.kernels.pairs._row_pairs_above`, or its twin for int8's bits); the weights as
        :meth:`upper` gives them."""
        tile = self.product(ready, lo, hi)
        if tile.dtype == np.uint64:
            return (*_row_bits(tile, rows, key, limit, lo - lo % BLOCK_COLUMNS, lo, hi), None)
        # the tile's column c is row lo + c: the kernel sees the rows shifted by lo, and its (min, max) of
        # shifted indices shifted back is the pair's
        i, j, w = _row_pairs_above(tile, rows - lo, key[lo:hi], limit, self.screen)
        return (i + lo, j + lo, w) if lo else (i, j, w)

    def check(self, i: np.ndarray, j: np.ndarray, w: np.ndarray | None, compared):
        """The pairs :meth:`upper` or :meth:`against` found at or above :attr:`screen`: those whose cosine
        reaches the cut, with their weights (the integer products' pairs computed again; the GEMM's as they are).
        ``compared``: how many of the tile's entries the kernel looked at (a number, or a callable giving
        it: asked only on the int8 route, which counts them against the checks in vain)."""
        if self.kind == "float32":
            return i, j, w
        out = (_check_pairs_serial if len(i) < SERIAL_PAIRS else _check_pairs)(self.unit, i, j, float(self.cut))
        if self.kind == "int8":
            self.in_vain += len(i) - len(out[0])
            self.entries += int(compared() if callable(compared) else compared)
        return out
