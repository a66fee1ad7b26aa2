"""The cosine's cuts (:func:`ctxselect.features.similarity.cosine_pairs_until`): the priority it takes rows
by, how many rows a tile takes under a pair budget, and the rows a chaining stopped by that budget leaves
uncertain."""

from __future__ import annotations

import numpy as np

from ctxselect.errors import InputError
from ctxselect.kernels.pairs import _components

__all__ = ["TOO_ALIKE"]

#: Why the pair budget cut, as the reasons of select() say it.
TOO_ALIKE = "embeddings so alike that nearly every pair is one"


def _priority_array(priority, n: int, field: str = "priority") -> np.ndarray:
    """``priority`` as n finite float64 numbers, else a located :class:`InputError` naming ``field``."""
    try:
        out = np.asarray(priority)
    except (TypeError, ValueError, OverflowError):
        out = np.asarray(None)
    found = (f"shape {out.shape}" if out.shape != (n,) else f"{out.dtype} values" if out.dtype.kind not in "iuf"
             else "NaN or infinity" if not np.isfinite(out).all() else None)
    if found is not None:
        raise InputError(field=field, expected=f"one finite number per row ({n})", found=found)
    return out.astype(np.float64)


def _rows_within(room: float, found: int, done: int, block: int) -> int:
    """A tile's rows under a pair budget with ``room`` pairs left: ``block`` for the first tile (its tiles are
    those of a call without a budget), then as many as fit if each row pairs as the rows so far did on
    average: ``block`` unless the rows are alike enough that nearly every pair is one."""
    if room == np.inf or not done:
        return block
    return int(max(1, min(block, room // max(found / done, 1.0))))


def _untainted(n: int, i, j, strong: np.ndarray, compared: np.ndarray, pending: np.ndarray) -> np.ndarray:
    """``compared`` less every row whose component, by the ``strong`` pairs and with the ``pending`` rows (a
    chaining stopped before them) taken as one, holds a pending row."""
    a, b = i[strong], j[strong]
    if len(pending) > 1:
        a, b = np.concatenate([a, pending[:-1]]), np.concatenate([b, pending[1:]])
    label = _components(n, a.astype(np.int64), b.astype(np.int64))
    return compared & ~np.isin(label, label[pending])


def _said(info: dict | None, timed_out: bool, pair_cut: bool) -> None:
    if info is not None:
        info.update(timed_out=timed_out, pair_cut=pair_cut)
