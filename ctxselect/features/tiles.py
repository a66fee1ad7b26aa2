"""The products of a call's cosine tiles: OpenBLAS's float32 GEMM, or exact int16 products checked.

:class:`Tiles` is made once per :func:`~ctxselect.features.similarity.cosine_pairs_until` call, on its
unit rows. :meth:`Tiles.rows` readies a tile's rows once, :meth:`Tiles.product` gives their tile against
a range of columns, :attr:`Tiles.screen` is the value a pair must reach in it, and :meth:`Tiles.check`
turns the pairs a kernel found there into the pairs at or above the cut, with their weights. With the
float32 GEMM the tile holds the cosines (``check`` keeps the pairs as found); with int16 products
(:data:`~ctxselect._config.INT16_PRODUCTS`, where the CPU has AVX-512 VNNI: :mod:`ctxselect.kernels.products`)
it holds exact integer products of the rows rounded at 32,767, the screen lies below the cut by the
rounding's worst error, and ``check`` computes each screened pair's cosine again from the unit rows
(float64 sums; in parallel from SERIAL_PAIRS pairs) and keeps those at or above the cut.
Buffers are the thread's kept ones (:mod:`ctxselect.features.scratch`).
"""

from __future__ import annotations

import numpy as np

from ctxselect._config import SERIAL_PAIRS
from ctxselect.features.scratch import scratch
from ctxselect.kernels.products import (
    BLOCK_COLUMNS,
    MAX_NORM,
    ROWS,
    _check_pairs,
    _check_pairs_serial,
    _int16_tile,
    _int16_tile_serial,
    _pack_columns,
    _pack_columns_serial,
    _pack_rows,
    screen_cut,
)

__all__ = ["Tiles"]


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
    int16 : bool
        Int16 products (else the float32 GEMM); never for d = 0, nor when a row's norm passes
        :data:`~ctxselect.kernels.products.MAX_NORM` (:attr:`int16` says which).
    serial : bool
        The int16 products on one thread (small products), else on every Numba thread.
    """

    def __init__(self, unit: np.ndarray, block: int, columns: int, cut, *, int16: bool, serial: bool) -> None:
        n, d = unit.shape
        self.unit, self.cut = unit, cut
        self.int16 = bool(int16 and d > 0 and n > 0)
        if self.int16:
            pairs = (d + 1) // 2
            self.packed = scratch("int16 columns", (_up(n, BLOCK_COLUMNS) // BLOCK_COLUMNS, pairs, BLOCK_COLUMNS),
                                  np.int32)
            # rows normalised from tiny numbers (subnormal squares) may pass norm 1: the screen's bound assumes not
            self.int16 = (_pack_columns_serial if serial else _pack_columns)(unit, self.packed) <= MAX_NORM
        if not self.int16:
            self.buffer = scratch("cosine tiles", (block * min(n, columns),), np.float32)
            self.screen = cut
            return
        self.left = scratch("int16 rows", (_up(block, ROWS), pairs), np.int32)
        width = min(_up(n, BLOCK_COLUMNS), columns + BLOCK_COLUMNS)  # a range [lo, hi) from its block's start
        self.buffer = scratch("int16 tiles", (_up(block, ROWS) * width,), np.int32)
        self.screen = np.int64(screen_cut(float(cut), d))
        self.kernel = _int16_tile_serial if serial else _int16_tile

    def rows(self, rows) -> tuple:
        """The unit rows ``rows`` (a slice or positions) made ready for :meth:`product` (gathered, or
        rounded into word pairs), once for all the column ranges they meet."""
        if not self.int16:
            return (self.unit[rows],)
        positions = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
        left = self.left[: _up(len(positions), ROWS)]
        _pack_rows(self.unit, positions, left)
        return left, len(positions)

    def product(self, ready: tuple, lo: int, hi: int) -> np.ndarray:
        """The tile (C-contiguous) of :meth:`rows`' rows against rows ``lo .. hi`` (at most ``columns``
        of them): ``tile[r, c]`` for row ``rows[r]`` and row ``lo + c``."""
        if not self.int16:
            left = ready[0]
            tile = self.buffer[: len(left) * (hi - lo)].reshape(len(left), hi - lo)
            np.matmul(left, self.unit[lo:hi].T, out=tile)
            return tile
        left, count = ready
        first = lo // BLOCK_COLUMNS
        shift = lo - first * BLOCK_COLUMNS  # 0 but for a tile size that is not a multiple of BLOCK_COLUMNS
        tile = self.buffer[: len(left) * (hi - lo + shift)].reshape(len(left), hi - lo + shift)
        self.kernel(left, self.packed, first, tile)
        return tile[:count] if not shift else np.ascontiguousarray(tile[:count, shift:])

    def check(self, i: np.ndarray, j: np.ndarray, w: np.ndarray):
        """The pairs a kernel found in a tile at or above :attr:`screen`: those whose cosine reaches
        the cut, with their weights (the int16 products' pairs computed again; the GEMM's as they are)."""
        if not self.int16:
            return i, j, w
        return (_check_pairs_serial if len(i) < SERIAL_PAIRS else _check_pairs)(self.unit, i, j, float(self.cut))
