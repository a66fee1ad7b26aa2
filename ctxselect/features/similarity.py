"""Sparse redundancy pairs: blocked cosine of embeddings, or MinHash/LSH of word shingles.

These functions validate and prepare arrays, then call the jitted kernels; they return ``(i, j, weight)``
arrays with i < j, sorted by (i, j), holding only pairs at or above the threshold (``cosine_pairs_until``
also the rows it compared when a deadline or a reach cut it). Memory: the unit rows (and, with integer
products, the rows packed as int8 or int16: features/tiles.py), block x TILE_COLUMNS similarities (int8: their
bits) and the pairs;
no n x n matrix is ever built."""

from __future__ import annotations

import itertools
import time
from contextlib import nullcontext

import numpy as np

from ctxselect._config import COSINE_PRODUCTS, SERIAL_BYTES, SERIAL_PAIRS, SIMILARITY_EPSILON
from ctxselect.errors import InputError
from ctxselect.features.blas import one_blas_thread
from ctxselect.features.cut_rows import _priority_array, _rows_within, _said, _untainted
from ctxselect.features.scratch import scratch
from ctxselect.features.tiles import Tiles
from ctxselect.kernels.minhash import (
    _all_pairs_above,
    _all_pairs_above_serial,
    _band_keys,
    _lsh_pairs,
    _signature_similarity,
)
from ctxselect.kernels.norms import _unit_rows
from ctxselect.kernels.words import _signatures, _signatures_serial
from ctxselect.model import validation as checks
from ctxselect.model.embeddings import MAX_EMBEDDING_ABS, HeldRows, check_rows, stack_rows
from ctxselect.packing import text_buffer

__all__ = ["cosine_may_cut", "cosine_pairs", "cosine_pairs_until", "signature_rows", "text_signatures", "minhash_pairs",
           "minhash_route", "lsh_bands", "one_blas_thread", "EXHAUSTIVE_PAIR_LIMIT", "ONE_BLAS_THREAD_WORK",
           "TILE_COLUMNS", "UNCUT_WORK", "PAIR_FLOOR", "PAIRS_PER_ROW"]

# Up to this many pairs, MinHash compares every pair; above it, LSH banding proposes candidates.
EXHAUSTIVE_PAIR_LIMIT = 200_000
# An LSH bucket larger than this proposes a chain of neighbours, not every pair of its members.
MAX_BUCKET = 400
# float32 tiles: identical vectors may score 0.99999994; accept pairs this close to the threshold
COSINE_TOLERANCE = 1e-5
#: A deadline never cuts the cosine's tiles while those left hold at most this many multiply-adds
#: (~5 ms at the ~40 G/s of one thread's sgemm measured here, n = 1,000 at d = 384): leaving chunks
#: uncompared to save less is not worth the worse selection, and a small call never depends on time.
UNCUT_WORK = 2e8
#: Up to this much work (n * n * d) the cosine products run BLAS on one thread. Measured on a
#: 2-core machine at d = 384, median ms, OpenBLAS at 2 threads vs 1: idle, n = 200 0.48 vs 0.44,
#: 1,000 5.3 vs 6.6, 5,000 82 vs 128; with one core busy, 200 11.1 vs 0.49, 1,000 36 vs 15,
#: 2,000 92 vs 48, 3,000 158 vs 104. Two threads win only on an idle machine and large inputs.
ONE_BLAS_THREAD_WORK = 2_000 * 2_000 * 384
#: Columns of a cosine tile: a product of ``block`` rows takes at most this many columns at a time
#: (8 MB of float32 at 512 rows), whatever n is. A tile of 512 rows against all 50,000 columns was a
#: fresh 102 MB a call; on a VM that hands freed memory back to its host (this one: re-touching it
#: cost 4.5-8.6 s a GB against 0.17 s for memory the process still held) its first touch alone cost
#: more than the product. Measured here (1,280 rows against n at d = 384, float32, two threads, CPU):
#: n = 20,000 139 ms in full rows against 129 ms in blocks of 4,096; n = 50,000 333 against 297 ms.
TILE_COLUMNS = 4_096


#: ``signals()``' cosine keeps at most max(PAIR_FLOOR, PAIRS_PER_ROW x n) pairs (checked between tiles): past
#: them the rows left are not compared, as under a deadline. Every embedding equal made every pair a pair: 2,000
#: chunks 2.3-2.75 s and 483 MiB, 5,000 11.1 s and 1,987 MiB under a 1 s limit (session 32).
PAIR_FLOOR, PAIRS_PER_ROW = 200_000, 100


def cosine_may_cut(n: int, d: int) -> bool:
    """Whether the cosine of n rows of d numbers does more than :data:`UNCUT_WORK` multiply-adds,
    the least a deadline or a reach ever cuts."""
    return n * n * d / 2 > UNCUT_WORK


def _empty_pairs():
    return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64)


def normalised_rows(embeddings: np.ndarray, ids=None, *, kept: bool = False) -> np.ndarray:
    """Rows scaled to unit length as float32; zero rows stay zero (similar to nothing), rows of tiny
    values point where they point (their squares may be 0). ``kept``: in the thread's
    :func:`~ctxselect.features.scratch.scratch` buffer, which its next such call overwrites.

    A NaN or infinite entry, or not an (n, d) array: an :class:`InputError` naming the chunk. One jitted
    pass (:func:`~ctxselect.kernels.norms._unit_rows`, the norms summed in NumPy's order, the rows equal
    bit for bit but for rows whose squares sum below 1e-290): on the packed embeddings of fresh latency.py
    queries (n = 2,000, d = 384) 2.0 ms where NumPy's isfinite, norm, division and cast took 5.0 ms (four
    passes, two fresh float64 temporaries)."""
    if isinstance(embeddings, HeldRows):  # PackedCandidates.embedding_data
        return _normalised_held_rows(embeddings, ids, kept)
    emb = np.ascontiguousarray(embeddings, dtype=np.float64)
    if emb.ndim != 2:
        raise InputError(field="embeddings", expected="an (n, d) array, one row per chunk",
                         found=f"an array of shape {emb.shape}")
    out = scratch("unit rows" if kept else None, emb.shape, np.float32)
    row = int(_unit_rows(emb, out, np.inf))
    if row >= 0:
        raise InputError(candidate_id=None if ids is None else ids[row], candidate_index=row,
                         field="embedding", expected="finite numbers", found="NaN or infinity")
    return out


#: Held rows stacked at a time into one float64 block to be normalised (kept as the unit rows): 2 MB at d = 384.
HELD_BLOCK_ROWS = 640


def _normalised_held_rows(rows: HeldRows, ids=None, kept: bool = False) -> np.ndarray:
    """:func:`normalised_rows` of the (n, d) matrix the 1-d float64 ``rows``
    (:func:`ctxselect.model.embeddings.held_rows`) make, bit for bit, without making it: they are
    copied :data:`HELD_BLOCK_ROWS` at a time into one small block that is reused, and checked there
    as a stacked matrix is (the kernel finds a NaN, an infinity or a value past
    :data:`~ctxselect.model.embeddings.MAX_EMBEDDING_ABS`, and
    :func:`~ctxselect.model.embeddings.check_rows` raises its error: ``ids`` names the row)."""
    n, d = len(rows), len(rows[0])
    ids = [None] * n if ids is None else ids
    out = scratch("unit rows" if kept else None, (n, d), np.float32)
    block = scratch("held block" if kept else None, (min(n, HELD_BLOCK_ROWS), d), np.float64)
    for lo in range(0, n, len(block)):
        hi = min(lo + len(block), n)
        part = stack_rows(rows, ids, lo, hi, block[: hi - lo], check=False)  # read-only, as a packed matrix
        if _unit_rows(part, out[lo:hi], MAX_EMBEDDING_ABS) >= 0:  # (one compiled kernel for both)
            check_rows(part, ids, lo)
            raise RuntimeError("ctxselect: the unit rows kernel and check_rows disagree on a row")  # a bug, never input
    return out


def cosine_pairs(embeddings: np.ndarray, threshold: float, *, block: int = 512, ids=None):
    """Pairs with cosine similarity >= threshold (weights clipped to [0, 1]).

    BLAS multiplies upper-triangle tiles of ``block`` rows, :data:`TILE_COLUMNS` columns at a time, in
    float32 into a buffer the thread keeps, as it keeps the unit rows (:mod:`ctxselect.features.scratch`:
    fresh memory costs page faults); a jitted kernel extracts the pairs above the threshold from each
    tile. Up to :data:`ONE_BLAS_THREAD_WORK` (n * n * d) BLAS runs on one thread (:func:`one_blas_thread`)."""
    return cosine_pairs_until(embeddings, threshold, block=block, ids=ids)[:3]


def cosine_pairs_until(embeddings: np.ndarray, threshold: float, *, deadline: float | None = None,
                       priority: np.ndarray | None = None, chain: float | None = None, block: int = 512, ids=None,
                       most: int | None = None, info: dict | None = None, max_pairs: int | None = None):
    """:func:`cosine_pairs` that compares at most ``most`` rows with every other row, and stops its
    tiles at ``deadline`` (a ``time.perf_counter()`` instant), the most promising rows first.

    With ``most`` below half of n, the rows are taken by ``priority`` from the first tile on, and
    the tiles stop after ``most`` rows (the pairs within those rows and between them and the others:
    ``most`` x n x d multiply-adds instead of n x n x d / 2; from half of n on, every pair costs no
    more and is compared).

    The tiles run in the input's order while the work left (n·n·d/2 multiply-adds at the rate of
    the last tile, judged from the second tile on) fits before ``deadline``: then every pair is
    compared, in the same tiles as :func:`cosine_pairs`. When it would not fit (or ``deadline`` has
    passed before the first tile), the rows not yet compared are taken by ``priority`` (highest
    first, ties in input order; each tile's rows against every row) and each further tile runs only
    if its own work fits: every row of a finished tile has been compared with every other row. The
    first tile always runs, and so do the tiles left when they hold at most :data:`UNCUT_WORK`
    multiply-adds. After a cut, with ``chain``, the uncompared rows
    reachable from a compared row through pairs at or above ``chain`` are compared with the other
    uncompared rows too, a frontier at a time, so that the components of those pairs (near-duplicate
    clusters) that hold a compared row are whole; those rows are then compared with every row.
    With ``max_pairs``, once the pairs found pass it the tiles stop as under a deadline (whatever the work
    left), and so does the chaining; every compared row whose cluster (pairs at or above ``chain``) reaches a
    row the chaining did not compare is then left uncompared, with its pairs between uncompared rows: the
    pairs found stay within ``max_pairs`` and one tile's (``block`` x n), however alike the rows.

    Returns
    -------
    i, j, weight : arrays
        As :func:`cosine_pairs`: i < j, sorted by (i, j), every pair at or above ``threshold`` with
        at least one end in ``compared`` (and, with ``chain``, those between the chained rows and
        the other uncompared rows).
    compared : bool array (n,) or None
        The rows compared with every other row; None when all were (nothing was cut).

    ``info`` (a dict, if given) gets ``"timed_out"``: whether the deadline stopped the tiles before
    every row, or ``most`` of them, were compared; and ``"pair_cut"``: whether ``max_pairs`` did.
    """
    n = len(embeddings)
    checks.integer(block, "block", low=1)
    if most is not None:
        most = checks.integer(most, "most", low=1)
    if deadline is not None:
        checks.number(deadline, "deadline")
    if max_pairs is not None:
        max_pairs = checks.integer(max_pairs, "max_pairs", low=0)
    priority = None if priority is None else _priority_array(priority, n)
    if n < 2:
        return (*_empty_pairs(), None)
    unit = normalised_rows(embeddings, ids, kept=True)  # (neither escapes the call)
    block = min(block, n)
    cut = np.float32(threshold - COSINE_TOLERANCE)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    order = rank = None  # once the rows go by priority: the rows left in that order, and each row's place there
    switched = 0  # the input's rows compared in its order, before the switch
    start = tiles = 0  # the next tile's first row (of the input, or of ``order``); tiles done
    rate = 0.0  # multiply-adds a second of the last tile (the first runs slower: 75 against ~115 G/s at 20,000 x 384)
    width, left = unit.shape[1], n
    small = n * n * width <= ONE_BLAS_THREAD_WORK
    products = Tiles(unit, block, TILE_COLUMNS, cut, kind=COSINE_PRODUCTS, serial=small)
    most = n if most is None or 2 * most >= n else most  # half the rows against all cost as much as every pair
    timed_out = pair_cut = False
    limit = np.inf if max_pairs is None else max_pairs
    found = done = 0  # pairs found, rows tiled: limit - found may yet be found before the tiles stop
    with one_blas_thread() if small and products.kind == "float32" else nullcontext():
        while start < left:
            now = time.perf_counter()
            rows_cap = _rows_within(room := limit - found, found, done, block)
            if order is None:  # upper-triangle tiles in the input's order
                rows, cols = min(block, n - start, rows_cap), n - start
                rest = cols * cols / 2 * width  # the tiles left, in multiply-adds
                if room < 0 or rest > UNCUT_WORK and (most < n or deadline is not None and (  # (the budget: any size)
                        now >= deadline or tiles >= 2 and now + rest / rate > deadline)):
                    key = np.zeros(n) if priority is None else priority  # the rest by priority, from here on
                    order = start + np.argsort(-key[start:], kind="stable")
                    rank = np.full(n, -1, dtype=np.int64)
                    rank[order] = np.arange(len(order))
                    switched, start, left = start, 0, len(order)
                    continue
                parts.append(_upper_pairs(products, start, rows))
                work = rows * cols * width
            else:  # the tile's rows against every row (no reordered copy): their pairs with the rows after them
                rows, rest = min(block, left - start, most - switched - start, rows_cap), (left - start) * n * width
                if room < 0:
                    pair_cut = True
                    break
                if rows <= 0:
                    break
                if deadline is not None and tiles and rest > UNCUT_WORK and now + rows * n * width / rate > deadline:
                    timed_out = True
                    break
                parts.append(_row_pairs(products, order[start:start + rows], rank,
                                        np.arange(start, start + rows, dtype=np.int64)))
                work = rows * n * width
            start, tiles, rate = start + rows, tiles + 1, work / max(time.perf_counter() - now, 1e-9)
            found, done = found + len(parts[-1][0]), done + rows
        if order is None:
            _said(info, timed_out, pair_cut)
            return (*_joined(parts), None)
        compared = np.zeros(n, dtype=bool)
        compared[:switched] = True
        compared[order[:start if start < len(order) - 1 else len(order)]] = True  # a last row: with every other
        i, j, w = _joined(parts)
        if chain is not None and not compared.all():  # the chained rows: compared with every row by then
            strong = np.float32(chain - COSINE_TOLERANCE)
            i, j, w, compared, pending = _chained_pairs(products, (i, j, w), compared, strong, block, limit - found)
            if pending is not None:  # the budget stopped the chaining: a cluster through the rows it did not reach
                pair_cut = True      # may join compared rows, so none of theirs is held compared
                compared = _untainted(n, i, j, w >= strong, compared, pending)
                keep = compared[i] | compared[j]
                i, j, w = i[keep], j[keep], w[keep]
        _said(info, timed_out, pair_cut)
        _, first = np.unique(i * n + j, return_index=True)  # sorted by (i, j); a pair found twice: its first weight
    return i[first], j[first], w[first], (None if compared.all() else compared)


def load_cosine() -> None:
    """Load (or compile) every kernel a cosine runs, before a time limit starts: the unit rows, the
    products on one thread and on several (:class:`~ctxselect.features.tiles.Tiles`; int8's and the
    int16 it may give way to), the upper triangle's and a reach's or chain's extraction, and the
    check; on six rows of two numbers."""
    unit = normalised_rows(np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]] * 2), kept=True)
    kinds = (COSINE_PRODUCTS, "int16") if COSINE_PRODUCTS == "int8" else (COSINE_PRODUCTS,)
    for kind, serial in itertools.product(kinds, (True, False)):
        products = Tiles(unit, 4, TILE_COLUMNS, np.float32(0.5), kind=kind, serial=serial)
        _upper_pairs(products, 0, 4)
        _row_pairs(products, np.arange(4), np.arange(6), np.full(4, -1))
        many = np.zeros(SERIAL_PAIRS if serial else 1, dtype=np.int64)  # the check's parallel and serial kernels
        products.check(many, many + 1, many.astype(np.float64), len(many))


def _column_blocks(first: int, n: int):
    """The column ranges [lo, hi) of :data:`TILE_COLUMNS` from ``first`` to ``n``."""
    return ((lo, min(lo + TILE_COLUMNS, n)) for lo in range(first, n, TILE_COLUMNS))


def _upper_pairs(products: Tiles, start: int, rows: int):
    """(i < j, weight), sorted by (i, j), of the pairs at or above the cut between rows
    ``start .. start + rows`` and the rows after each, a column block (:data:`TILE_COLUMNS`) at a time
    (:meth:`Tiles.upper`, :meth:`Tiles.check`)."""
    parts = []
    ready = products.rows(slice(start, start + rows))
    for lo, hi in _column_blocks(start, len(products.unit)):
        parts.append(products.check(*products.upper(ready, start, lo, hi), _upper_entries(start, rows, lo, hi)))
    if len(parts) == 1:
        return parts[0]
    i, j, w = _joined(parts)  # each block row-major, the blocks in column order: stable by i is (i, j)
    order = np.argsort(i, kind="stable")
    return i[order], j[order], w[order]


def _upper_entries(start: int, rows: int, lo: int, hi: int) -> int:
    """The entries an upper-triangle tile compares: Σ over its rows r < ``rows`` of the columns after row
    ``start + r`` within ``lo .. hi``, max(0, hi − max(lo, start + r + 1)), summed in closed form."""
    before = min(max(lo - start, 0), rows)  # the rows whose columns start at lo
    first = hi - start - 1  # row r's count after those: first - r, while positive
    last = min(rows, first)
    return before * max(hi - lo, 0) + (last - before) * (first + first - before - last + 1) // 2 * (last > before)


def _row_pairs(products: Tiles, rows: np.ndarray, key: np.ndarray, limit: np.ndarray):
    """(i < j, weight) of the pairs at or above the cut between ``rows`` and every other row whose
    ``key`` exceeds the row's ``limit``, a column block (:data:`TILE_COLUMNS`) at a time (:meth:`Tiles.against`,
    :meth:`Tiles.check`); in column-block order."""
    rows = np.asarray(rows, dtype=np.int64)  # shifted by lo (Tiles.against): never unsigned
    parts = []
    ready = products.rows(rows)
    # the int8 route's compared entries (Tiles.check asks for them only there): per column, the rows whose limit
    # its key exceeds, counted against the rows' sorted limits (sorting each column range's keys instead: 3.1
    # against 2.2 ms a call at 20,000 x 384)
    below = np.sort(limit) if products.kind == "int8" else None
    for lo, hi in _column_blocks(0, len(products.unit)):
        compared = (lambda lo=lo, hi=hi: np.searchsorted(below, key[lo:hi], side="left").sum())
        parts.append(products.check(*products.against(ready, rows, key, limit, lo, hi), compared))
    return parts[0] if len(parts) == 1 else _joined(parts)


def _chained_pairs(products: Tiles, pairs, compared: np.ndarray, chain, block: int, room=np.inf):
    """``pairs`` (i, j, w) and the pairs at or above the cut between the uncompared rows reachable
    from a compared row through pairs at or above ``chain`` and the other uncompared rows, found a
    frontier (``block`` rows a product) at a time (a pair between two frontier rows comes twice);
    ``compared`` with those rows (compared with every row: the others' tiles held the rest); and, when
    ``room`` (pairs) ran out first, the rows reached but not compared (else None)."""
    seen = compared.copy()
    open_columns = (~compared).astype(np.int64)  # key 1: an uncompared row, paired with the frontier's
    i, j, w = pairs
    strong = w >= chain
    frontier = np.unique(np.concatenate([i[strong], j[strong]]))
    found = [pairs]
    while (frontier := frontier[~seen[frontier]]).size:
        reached = []
        for at in range(0, len(frontier), block):
            if room < 0:
                pending = np.unique(np.concatenate([frontier[at:], *reached]))
                return (*(np.concatenate(column) for column in zip(*found)), seen, pending[~seen[pending]])
            rows = frontier[at:at + block]
            a, b, v = _row_pairs(products, rows, open_columns, np.zeros(len(rows), dtype=np.int64))
            seen[rows] = True
            room -= len(a)
            found.append((a, b, v))
            near = v >= chain
            reached += [a[near], b[near]]
        frontier = np.unique(np.concatenate(reached))
    return (*(np.concatenate(column) for column in zip(*found)), seen, None)


def _joined(parts):
    """One (i, j, weight) of a list of tiles' pairs (empty arrays for none)."""
    return tuple(np.concatenate(p) for p in zip(*parts)) if parts else _empty_pairs()


def signature_rows(offsets: np.ndarray, bins: int, kept: bool = False) -> np.ndarray:
    """The matrix a signing kernel of :mod:`ctxselect.kernels.words` writes (uint64, a row per text of ``offsets``),
    by NumPy, which asks Linux for huge pages (a kernel's own allocation does not: 5,000 page faults for 20 MB
    at n = 20,000); ``kept``: the thread's :func:`~ctxselect.features.scratch.scratch` "signatures"."""
    return scratch("signatures" if kept else None, (len(offsets) - 1, bins), np.uint64)


def text_signatures(texts, *, shingle_size: int = 3, bins: int = 128, buffer=None, kept: bool = False):
    """MinHash signatures (n x bins, uint64; ``kept``: :func:`signature_rows`') and word counts of
    ``texts`` (or of a prebuilt :func:`~ctxselect.packing.text_buffer` ``buffer`` of them)."""
    buf, offsets = text_buffer(texts) if buffer is None else buffer
    kernel = _signatures_serial if len(buf) < SERIAL_BYTES else _signatures
    return kernel(buf, offsets, shingle_size, signature_rows(offsets, bins, kept))


def lsh_bands(threshold: float, bins: int) -> int:
    """The number of bands (rows = bins / bands) whose S-curve midpoint (1/b)^(1/r) lies at or
    below 85 % of the threshold, with the fewest bands (fewest false candidates)."""
    best = bins
    for bands in sorted({b for b in range(1, bins + 1) if bins % b == 0}, reverse=True):
        rows = bins // bands
        if (1.0 / bands) ** (1.0 / rows) <= 0.85 * threshold:
            best = bands
    return best


def minhash_route(n: int, exhaustive: bool | None = None) -> str:
    """How :func:`minhash_pairs` compares n signatures: every pair, "serial" or "parallel" (below or from
    SERIAL_PAIRS pairs), or "lsh" banding (above :data:`EXHAUSTIVE_PAIR_LIMIT` pairs, or ``exhaustive=False``)."""
    pairs = n * (n - 1) // 2
    exhaustive = pairs <= EXHAUSTIVE_PAIR_LIMIT if exhaustive is None else exhaustive
    return "lsh" if not exhaustive else "serial" if pairs < SERIAL_PAIRS else "parallel"


def minhash_pairs(signatures: np.ndarray, threshold: float, *, exhaustive: bool | None = None):
    """Pairs whose signature similarity (estimated Jaccard) is >= threshold: every pair of a small set,
    else those LSH banding proposes (:func:`minhash_route`; a bucket over MAX_BUCKET gives a chain)."""
    n, bins = signatures.shape
    if n < 2:
        return _empty_pairs()
    route = minhash_route(n, exhaustive)
    if route != "lsh":
        return (_all_pairs_above_serial if route == "serial" else _all_pairs_above)(signatures, threshold)
    keys = _band_keys(signatures, lsh_bands(threshold, bins))
    i, j = _lsh_pairs(keys, MAX_BUCKET)
    code = np.unique(i * n + j)
    i, j = code // n, code % n
    w = _signature_similarity(signatures, i, j)
    keep = w >= threshold - SIMILARITY_EPSILON
    return i[keep], j[keep], w[keep]
