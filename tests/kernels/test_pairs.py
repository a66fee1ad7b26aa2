"""The array kernels of ctxselect/kernels/pairs.py against their plain-Python twins
(tests/naive/signals.py): freshness, threshold extraction from a similarity tile, exact
differing-code pairs, connected components. Called directly, so they also run interpreted
(``NUMBA_DISABLE_JIT=1``)."""

import numpy as np
import pytest

from ctxselect.kernels.pairs import (
    _row_bits,
    _set_bits,
    _row_pairs_above,
    _components,
    _differing_code_pairs,
    _freshness,
    _upper_bits,
    _upper_pairs_above,
)
from tests.helpers import bit_words
from tests.naive.signals import (
    naive_row_bits,
    naive_row_pairs,
    naive_components,
    naive_differing_code_pairs,
    naive_freshness,
    naive_tile_pairs,
    naive_upper_bits,
)


@pytest.mark.parametrize("n", [0, 1, 7, 200])
@pytest.mark.parametrize("zero_outside", [False, True])
def test_freshness_matches_twin(n, zero_outside):
    rng = np.random.default_rng(n)
    decay = rng.uniform(0, 0.05, n)
    age = rng.uniform(0, 500, n)
    has = rng.random(n) < 0.7
    valid = rng.random(n) < 0.8
    got = _freshness(decay, age, has, valid, 0.25, zero_outside)
    want = naive_freshness(decay, age, has, valid, 0.25, zero_outside)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_differing_code_pairs_match_twin(seed):
    rng = np.random.default_rng(seed)
    n = [0, 1, 5, 30, 80, 120][seed]
    codes = rng.integers(-1, 4, n).astype(np.int64)
    group = rng.integers(-1, 3, n).astype(np.int64)
    got = list(zip(*_differing_code_pairs(codes, np.empty(0, np.int64))))
    assert [tuple(map(int, p)) for p in got] == naive_differing_code_pairs(codes.tolist())
    got = list(zip(*_differing_code_pairs(codes, group)))
    assert [tuple(map(int, p)) for p in got] == naive_differing_code_pairs(codes.tolist(), group.tolist())


@pytest.mark.parametrize("n,m", [(0, 0), (1, 0), (10, 4), (50, 30), (200, 150)])
def test_components_match_twin(n, m):
    rng = np.random.default_rng(n + m)
    i = rng.integers(0, max(n, 1), m).astype(np.int64)
    j = rng.integers(0, max(n, 1), m).astype(np.int64)
    got = _components(n, i, j).tolist()
    assert got == naive_components(n, list(zip(i.tolist(), j.tolist())))


def test_differing_code_pairs_do_not_scan_equal_pairs():
    """One odd value among 200,000 equal ones: 199,999 pairs, found without the 2e10 equal pairs."""
    codes = np.zeros(200_000, dtype=np.int64)
    codes[5] = 1
    i, j = _differing_code_pairs(codes, np.empty(0, np.int64))
    assert len(i) == 199_999
    assert (i[:5] == np.arange(5)).all() and (j[:5] == 5).all() and (i[5:] == 5).all()


@pytest.mark.parametrize("rows,cols,row_offset,col_offset", [(1, 1, 0, 0), (7, 7, 0, 0), (5, 12, 3, 3),
                                                             (4, 9, 0, 2), (6, 3, 9, 0), (0, 4, 0, 0)])
@pytest.mark.parametrize("threshold", [-1.0, 0.0, 0.3, 1.0])
def test_upper_pairs_above_matches_twin(rows, cols, row_offset, col_offset, threshold):
    rng = np.random.default_rng(rows * 31 + cols)
    tile = rng.uniform(-1.2, 1.2, (rows, cols)).astype(np.float32)  # float32 as BLAS gives, beyond [-1, 1]
    if rows and cols:
        tile[0, -1] = threshold  # exactly at the threshold: kept
    i, j, w = _upper_pairs_above(tile, row_offset, col_offset, np.float32(threshold))
    got = list(zip(i.tolist(), j.tolist(), w.tolist()))
    want = naive_tile_pairs(tile.tolist(), row_offset, col_offset, float(np.float32(threshold)))
    assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in want]
    assert [x for _, _, x in got] == [x for _, _, x in want]  # float32 values, clipped, exactly


@pytest.mark.parametrize("count,n", [(1, 1), (3, 7), (5, 12), (0, 4), (4, 4), (2, 30)])
@pytest.mark.parametrize("threshold", [-1.0, 0.0, 0.3, 1.0])
@pytest.mark.parametrize("keys", ["rank", "open", "none"])
def test_row_pairs_above_matches_twin(count, n, threshold, keys):
    rng = np.random.default_rng(count * 31 + n)
    rows = rng.permutation(n)[:count].astype(np.int64)
    tile = rng.uniform(-1.2, 1.2, (count, n)).astype(np.float32)  # float32 as BLAS gives, beyond [-1, 1]
    if count:
        tile[0, -1] = threshold  # exactly at the threshold: kept
        tile[:, rows] = 1.0  # each row with itself (and the others of the tile): the self pair never listed
    if keys == "rank":  # a priority tile: its rows' places, every other row's place after them, some before (-1)
        key = np.full(n, -1, dtype=np.int64)
        order = rng.permutation(n)
        key[order] = np.arange(n)
        limit = key[rows]
    elif keys == "open":  # a chained frontier: the uncompared columns only
        key = rng.integers(0, 2, n).astype(np.int64)
        limit = np.zeros(count, dtype=np.int64)
    else:
        key, limit = np.zeros(n, dtype=np.int64), np.zeros(count, dtype=np.int64)
    i, j, w = _row_pairs_above(tile, rows, key, limit, np.float32(threshold))
    got = list(zip(i.tolist(), j.tolist(), w.tolist()))
    want = naive_row_pairs(tile.tolist(), rows.tolist(), key.tolist(), limit.tolist(), float(np.float32(threshold)))
    assert got == want
    assert i.dtype == j.dtype == np.int64 and w.dtype == np.float64


def random_bits(rng, rows, words, density):
    """A bit tile (uint64 words) with about ``density`` of its bits set; bit 63 and bit 0 of the first
    word of row 0 set when there is one (the sign bit and the lowest)."""
    dense = rng.random((rows, 64 * words)) < density
    out = bit_words(dense)
    if rows and words:
        out[0, 0] |= np.uint64(1) | np.uint64(1) << np.uint64(63)
    return out


@pytest.mark.parametrize("count,words,density", [(0, 1, 0.5), (1, 1, 0.0), (1, 1, 1.0), (4, 2, 0.05), (8, 3, 0.5),
                                                 (5, 4, 0.9)])
@pytest.mark.parametrize("col_base,lo,hi", [(0, 0, 10**9), (64, 70, 190), (128, 128, 129), (0, 5, 5)])
def test_bit_pairs_match_twins(count, words, density, col_base, lo, hi):
    """The int8 route's extraction from bit tiles (Tiles.upper, Tiles.against): every bit in the range,
    filtered as the value tiles' kernels filter, in the same order; the rows past ``count`` unread."""
    rng = np.random.default_rng(count * 7 + words + lo)
    bits = random_bits(rng, count + 2, words, density)  # two junk rows past count
    words_list = [[int(x) for x in row] for row in bits.tolist()]
    assert _set_bits(bits, count) == sum(bin(x).count("1") for row in words_list[:count] for x in row)
    for row_offset in (0, col_base + 3, col_base + 64 * words):
        i, j = _upper_bits(bits, count, row_offset, col_base, lo, hi)
        assert list(zip(i.tolist(), j.tolist())) == naive_upper_bits(words_list, count, row_offset, col_base, lo, hi)
        assert i.dtype == j.dtype == np.int64
    n = col_base + 64 * words + 3
    rows = rng.permutation(n)[:count].astype(np.int64)
    if count:
        rows[0] = col_base  # a row against itself: never listed
    found = []
    for key, limit in ((np.ones(n, np.int64), np.zeros(count, np.int64)),  # every column open, then some
                       (rng.integers(-1, 3, n).astype(np.int64), rng.integers(-1, 3, count).astype(np.int64))):
        i, j = _row_bits(bits[:count], rows, key, limit, col_base, lo, hi)
        want = naive_row_bits(words_list, rows.tolist(), key.tolist(), limit.tolist(), col_base, lo, hi)
        assert list(zip(i.tolist(), j.tolist())) == want
        found.append(len(want))
    if count and density == 1.0 and hi > lo + 1:  # precondition: all bits set give pairs
        assert found[0] > 0


@pytest.mark.parametrize("rows,cols,lo", [(1, 64, 0), (5, 130, 64), (8, 200, 3), (3, 64, 63)])
@pytest.mark.parametrize("threshold", [-1.0, 0.0, 0.4, 1.0])
def test_bits_give_the_pairs_of_a_tile_of_values(rows, cols, lo, threshold):
    """The same pairs, in the same order, from a tile of values (the float32 and int16 routes' kernels)
    and from its bits at the threshold (the int8 route's): upper-triangle tiles from any row, and rows
    against every row."""
    rng = np.random.default_rng(rows * cols + lo)
    tile = rng.uniform(-1.0, 1.0, (rows, cols)).astype(np.float32)
    tile[0, 0] = threshold  # exactly at the threshold: kept by both
    first = lo - lo % 64  # the bits of block first // 64 on: the columns before lo are junk
    padded = np.zeros((rows, -(-(lo - first + cols) // 64) * 64), dtype=bool)
    padded[:, :lo - first] = True
    padded[:, lo - first:lo - first + cols] = tile >= np.float32(threshold)
    bits = bit_words(padded)
    for start in (0, lo - 2, lo + 3):
        i, j, _ = _upper_pairs_above(tile, start, lo, np.float32(threshold))
        bi, bj = _upper_bits(bits, rows, start, first, lo, lo + cols)
        assert bi.tolist() == i.tolist() and bj.tolist() == j.tolist()
    n = lo + cols
    which = rng.permutation(n)[:rows].astype(np.int64)
    key, limit = rng.integers(-1, 4, n).astype(np.int64), rng.integers(-1, 3, rows).astype(np.int64)
    i, j, _ = _row_pairs_above(tile, which - lo, key[lo:], limit, np.float32(threshold))
    bi, bj = _row_bits(bits, which, key, limit, first, lo, n)
    assert bi.tolist() == (i + lo).tolist() and bj.tolist() == (j + lo).tolist()
    assert len(i) > 0 or threshold == 1.0  # precondition: pairs to compare
