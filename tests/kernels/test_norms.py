"""The unit rows kernel of ctxselect/kernels/norms.py against its plain-Python twin
(tests/naive/signals.py) and NumPy's norm. Called directly, so it also runs interpreted
(``NUMBA_DISABLE_JIT=1``)."""

import math

import numpy as np
import pytest

from ctxselect.kernels.norms import TINY_SQUARES, _unit_rows
from tests.naive.signals import naive_unit_rows


def _unit_rows_of(emb, limit=math.inf):
    out = np.full(emb.shape, np.float32(7.0))
    return out, int(_unit_rows(np.ascontiguousarray(emb, dtype=np.float64), out, limit))


@pytest.mark.parametrize("n,d", [(0, 3), (1, 1), (3, 7), (5, 8), (4, 9), (6, 128), (3, 129), (2, 384), (2, 1000)])
def test_unit_rows_match_twin(n, d):
    rng = np.random.default_rng(n * 1000 + d)
    emb = rng.normal(size=(n, d)) * rng.choice([1e-150, 1e-3, 1.0, 1e5, 1e150], size=(n, 1))
    if n > 2:
        emb[1] = 0.0  # a zero row stays zero
        emb[2, 0] = -0.0
    got, bad = _unit_rows_of(emb)
    want, want_bad = naive_unit_rows(emb.tolist())
    assert bad == want_bad == -1
    assert got.tolist() == want  # the same float32 values, bit for bit
    # and NumPy's reading of a unit row (the norm is np.linalg.norm's, summed in its order)
    norms = np.linalg.norm(emb, axis=1)
    np.testing.assert_allclose(got, emb / np.where(norms > 0, norms, 1.0)[:, None], rtol=1e-6, atol=1e-30)


def test_unit_rows_edges():
    # the squares overflow: the norm is infinite and the row becomes zero, as NumPy's norm makes it
    big = np.array([[1e200, 1e200], [3.0, 4.0]])
    got, bad = _unit_rows_of(big)
    assert bad == -1 and got.tolist() == [[0.0, 0.0], [0.6000000238418579, 0.800000011920929]]
    assert got.tolist() == naive_unit_rows(big.tolist())[0]
    for value in (np.nan, np.inf, -np.inf):  # the first row with a non-finite value, rows before it written
        emb = np.ones((4, 3))
        emb[2, 1] = value
        emb[3, 0] = np.nan
        got, bad = _unit_rows_of(emb)
        assert bad == 2 == naive_unit_rows(emb.tolist())[1]
        assert np.allclose(got[:2], 1 / np.sqrt(3))
    got, bad = _unit_rows_of(np.zeros((2, 0)))
    assert bad == -1 and got.shape == (2, 0)
    # a norm that is not finite is looked into: overflowing squares (a zero row) or a non-finite value
    mixed = np.array([[1e200, -1e200, 1.0], [1e200, np.inf, 1.0], [1.0, 0.0, 0.0]])
    got, bad = _unit_rows_of(mixed)
    assert bad == 1 == naive_unit_rows(mixed.tolist())[1] and got[0].tolist() == [0.0, 0.0, 0.0]


def test_unit_rows_random_against_twin():
    rng = np.random.default_rng(11)
    for _ in range(40):
        n, d = int(rng.integers(1, 6)), int(rng.integers(1, 300))
        emb = rng.standard_cauchy(size=(n, d))
        got, bad = _unit_rows_of(emb)
        want, want_bad = naive_unit_rows(emb.tolist())
        assert bad == want_bad and got.tolist() == want


@pytest.mark.parametrize("scale", [1e-140, 1e-155, 1e-170, 1e-300])  # (below, the values themselves are subnormal)
def test_tiny_rows_point_where_the_row_points(scale):
    # squares that underflow (1e-170² is 0) made such a row "similar to nothing"; cosine ignores scale
    rng = np.random.default_rng(7)
    emb = rng.normal(size=(5, 384))
    emb[2, 100:] = 0.0  # a row of few values
    emb[3] = 0.0  # a zero row stays zero
    emb[4, 1:] = 0.0  # one value
    tiny = emb * scale
    got, bad = _unit_rows_of(tiny)
    want, want_bad = naive_unit_rows(tiny.tolist())
    assert bad == want_bad == -1 and got.tolist() == want  # the twin's reading, bit for bit
    np.testing.assert_allclose(got, _unit_rows_of(emb)[0], rtol=1e-5, atol=1e-7)
    assert got[3].tolist() == [0.0] * 384 and got[4, 0] == 1.0
    assert (np.einsum("ij,ij->i", got.astype(np.float64), got) > 0.999).sum() == 4


def test_the_smallest_values_and_the_threshold():
    smallest = np.array([[5e-324, 0.0], [0.0, -5e-324], [5e-324, 5e-324]])  # subnormal: largest / largest is 1
    got, bad = _unit_rows_of(smallest)
    assert bad == -1 and got.tolist() == naive_unit_rows(smallest.tolist())[0]
    assert got[0].tolist() == [1.0, 0.0] and got[1].tolist() == [0.0, -1.0]
    assert got[2, 0] == got[2, 1] == np.float32(2 ** -0.5)
    # on either side of TINY_SQUARES (NumPy's norm above it, the norm over the largest value below) the row is
    # read right, and as the twin reads it
    for squares in (TINY_SQUARES * 1.01, TINY_SQUARES * 0.99):
        row = np.array([[np.sqrt(squares), 0.0, 0.0]])
        got, bad = _unit_rows_of(row)
        assert bad == -1 and got.tolist() == [[1.0, 0.0, 0.0]] == naive_unit_rows(row.tolist())[0]


@pytest.mark.parametrize("limit", [1.0, 1e100])
def test_unit_rows_find_a_value_past_the_limit(limit):
    """The first row with a value whose magnitude passes ``limit``: by a norm past it (one large value, or
    many values each within it), by squares that overflow, and not a row whose values all stay within."""
    rng = np.random.default_rng(5)
    cases = [
        [[0.5, -0.5], [limit * 1.5, 0.0], [np.nan, 1.0]],         # one value past: row 1
        [[limit * 0.9] * 4, [-limit * 2, 1.0, 0.0, 0.0]],          # row 0: a norm past the limit, values within
        [[0.1, 0.2], [1e160, 1.0], [1.0, 1.0]],                    # squares overflow: row 1
        [[limit, -limit], [limit * 0.99, 1e-200]],                 # at the limit: within
        rng.normal(size=(6, 50)).tolist(),
    ]
    for rows in cases:
        emb = np.array(rows, dtype=np.float64)
        got, bad = _unit_rows_of(emb, limit)
        want, want_bad = naive_unit_rows(rows, limit)
        assert bad == want_bad
        assert got[: len(want)].tolist() == want
    assert _unit_rows_of(np.array(cases[0]), limit)[1] == 1
    assert _unit_rows_of(np.array(cases[1]), limit)[1] == 1
    assert _unit_rows_of(np.array(cases[2]), limit)[1] == 1
    assert _unit_rows_of(np.array(cases[3]), limit)[1] == -1
