"""Cosine tiles by any route (features/tiles.py): BLAS's float32 GEMM, or the int16 or int8 products
screened and checked (kernels/products.py, where the CPU has AVX-512 VNNI). Each gives the twin's
pairs (tests/naive/signals.py), and the same pairs as the others, whole or cut by a reach; int8 gives
way to int16 when cosines crowd under the cut."""

import numpy as np
import pytest

from ctxselect.features import similarity
from ctxselect.features.similarity import cosine_pairs, cosine_pairs_until
from ctxselect.features.tiles import Tiles
from tests.helpers import bit_rows
from tests.naive.signals import naive_cosine_pairs

needs_vnni = pytest.mark.skipif(similarity.COSINE_PRODUCTS == "float32",
                                reason="integer products need the JIT and AVX-512 VNNI")
ROUTES = ["float32", pytest.param("int16", marks=needs_vnni), pytest.param("int8", marks=needs_vnni)]


def as_dict(i, j, w, *_):
    return {(int(a), int(b)): float(v) for a, b, v in zip(i, j, w)}


def near_duplicates(seed, n, d):
    """Rows in clusters (copies with noise of several sizes): pairs on both sides of any threshold."""
    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(n, d))
    for k in range(0, n - 1, 3):
        emb[k + 1] = emb[k] + rng.normal(scale=rng.choice([0.05, 0.3, 0.6, 1.0]), size=d)
    return emb


@pytest.mark.parametrize("kind", ROUTES)
@pytest.mark.parametrize("n, d, threshold, block, columns", [(90, 7, 0.8, 16, None), (150, 33, 0.5, 64, 64),
                                                           (70, 1, 0.99, 8, 1), (200, 384, 0.8, 512, None)])
def test_every_product_gives_the_twins_pairs(monkeypatch, kind, n, d, threshold, block, columns):
    monkeypatch.setattr(similarity, "COSINE_PRODUCTS", kind)
    if columns is not None:
        monkeypatch.setattr(similarity, "TILE_COLUMNS", columns)
    emb = near_duplicates(n + d, n, d)
    got = as_dict(*cosine_pairs(emb, threshold, block=block))
    want = naive_cosine_pairs(emb.tolist(), threshold)
    assert len(want) >= 5  # precondition: pairs to find
    for key in set(got) ^ set(want):  # only float32 rounding at the threshold may differ
        assert abs(want.get(key, got.get(key)) - threshold) <= 1e-5, key
    for key in set(got) & set(want):
        assert got[key] == pytest.approx(want[key], abs=1e-6)


@needs_vnni
@pytest.mark.parametrize("most", [None, 40])
def test_all_products_find_the_same_pairs(monkeypatch, most):
    """2,000 x 64 clustered rows, whole and with a reach of 40 rows (and chained near-duplicates):
    the same pairs and compared rows, weights within float32 rounding."""
    emb = near_duplicates(5, 2_000, 64)
    priority = np.random.default_rng(6).random(2_000)
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0)  # (a reach cuts only a larger product)
    runs = []
    for kind in ("float32", "int16", "int8"):
        monkeypatch.setattr(similarity, "COSINE_PRODUCTS", kind)
        runs.append(cosine_pairs_until(emb, 0.8, priority=priority, most=most, chain=0.95, block=256))
    a = runs[0]
    assert len(a[0]) > (300 if most is None else 10)  # precondition: pairs to compare
    for b in runs[1:]:
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        np.testing.assert_allclose(a[2], b[2], atol=1e-6, rtol=0)
        assert (a[3] is None) == (most is None) and (a[3] is None or np.array_equal(a[3], b[3]))
    assert all(np.array_equal(x, y) for x, y in zip(runs[1][:3], runs[2][:3]))  # both checked: the same sums


@pytest.mark.parametrize("kind", ROUTES)
def test_a_tile_against_any_column_range(kind):
    """Ranges that start and end inside a 64-column block, and a tile of one row: int16's products
    are the cosines at 32,767²; int8's bits are set where a cosine reaches the cut, and only where its
    bound does (the bounds lie at most ~0.05 above the cosines at d = 10)."""
    emb = near_duplicates(9, 150, 10)
    unit = similarity.normalised_rows(emb)
    products = Tiles(unit, 8, 256, np.float32(0.0), kind=kind, serial=True)
    assert products.kind == kind
    for rows, lo, hi in [(slice(0, 8), 0, 150), (np.array([149, 3, 70]), 5, 69), (slice(10, 11), 130, 150)]:
        tile = products.product(products.rows(rows), lo, hi)
        assert tile.flags.c_contiguous  # (the pair kernels compile for one layout)
        want = unit[rows].astype(np.float64) @ unit[lo:hi].T.astype(np.float64)
        if kind == "int8":
            bits = bit_rows(tile)[:, lo % 64: lo % 64 + hi - lo]  # (word 0 starts at lo's block)
            assert bits.shape == want.shape and bits[want >= 0.0].all() and not bits[want < -0.05].any()
            assert bits.any() and not bits.all()  # precondition: cosines on both sides
        else:
            scale = float(32_767**2) if kind == "int16" else 1.0
            np.testing.assert_allclose(tile / scale, want, atol=1e-3 if kind == "int16" else 1e-6)


def test_unit_rows_past_norm_one_take_the_float32_products():
    """Unit rows past norm 1 (the screen's bound assumes none): that call's tiles are the float32
    GEMM's. Rows of numbers whose squares are subnormal once made them; they are now read over their
    largest value (kernels/norms.py), as unit rows, and their pairs are the float32 GEMM's too."""
    past = np.array([[1.0 + 1e-5, 0.0], [0.8, 0.6], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    for kind in ("int16", "int8"):
        assert Tiles(past, 4, 64, np.float32(0.5), kind=kind, serial=True).kind == "float32"
    emb = np.array([[2.5e-162, 0.0], [0.8, 0.6], [1.0, 0.0], [0.0, 1.0]])
    assert similarity.normalised_rows(emb)[0].tolist() == [1.0, 0.0]
    got = cosine_pairs(emb, 0.85)
    assert (got[0].tolist(), got[1].tolist()) == ([0], [2])  # the tiny row is [1, 0]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(similarity, "COSINE_PRODUCTS", "float32")
        want = cosine_pairs(emb, 0.85)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


@needs_vnni
def test_rows_of_more_than_int8_max_dim_components_take_int16():
    """int8's int32 sums are exact up to INT8_MAX_DIM components (kernels/products.py): past it, int16."""
    from ctxselect.kernels.products import INT8_MAX_DIM

    for d, kind in ((INT8_MAX_DIM, "int8"), (INT8_MAX_DIM + 1, "int16")):
        unit = np.full((3, d), np.float32(1 / np.sqrt(d)), np.float32)
        unit[2, ::2] *= -1
        products = Tiles(unit, 4, 64, np.float32(0.9), kind="int8", serial=True)
        assert products.kind == kind
        i, j, w = similarity._upper_pairs(products, 0, 3)
        assert (i.tolist(), j.tolist()) == ([0], [1]) and w[0] == pytest.approx(1.0, abs=1e-6)


@needs_vnni
def test_int8_gives_way_to_int16_when_cosines_crowd_under_the_cut(monkeypatch):
    """Rows around one direction (cosines 0.978-0.985) cut at 0.99, each with a near copy: most entries
    pass int8's screen (its bounds lie ~0.01 above) and few reach the cut; after the first column range
    the rows go the int16 way, and the pairs are the GEMM's."""
    rng = np.random.default_rng(3)
    emb = rng.normal(size=384) + rng.normal(scale=0.14, size=(600, 384))
    emb[1::2] = emb[::2] + rng.normal(scale=0.002, size=(300, 384))  # 300 pairs above the cut
    unit = similarity.normalised_rows(emb)
    products = Tiles(unit, 100, 4096, np.float32(0.99), kind="int8", serial=True)
    kinds = []
    for start in range(0, 600, 100):
        similarity._upper_pairs(products, start, 100)
        kinds.append(products.kind)
    assert kinds == ["int8"] + ["int16"] * 5
    assert products.in_vain > 0.5 * products.entries  # precondition: the first tile's checks were mostly in vain
    got = {}
    for kind in ("int8", "float32"):
        monkeypatch.setattr(similarity, "COSINE_PRODUCTS", kind)
        got[kind] = cosine_pairs(emb, 0.99, block=100)
    assert len(got["float32"][0]) == 300
    assert all(np.array_equal(a, b) for a, b in zip(got["int8"][:2], got["float32"][:2]))
    # narrow column ranges: the switch within a tile's rows, from its second range on (the rows redone)
    monkeypatch.setattr(similarity, "TILE_COLUMNS", 128)
    products = Tiles(unit, 600, 128, np.float32(0.99), kind="int8", serial=True)
    i, j, _ = similarity._upper_pairs(products, 0, 600)
    assert products.kind == "int16" and products.entries < 600 * 128  # it stopped counting after one range
    assert np.array_equal(i, got["float32"][0]) and np.array_equal(j, got["float32"][1])


@needs_vnni
def test_a_switch_to_int16_that_fails_keeps_int8_whole():
    """A row whose norm int8's packing admits (sums in SIMD lanes) and int16's refuses (sums in pairs):
    the switch is tried once, fails, and the call stays on int8 with its own columns: the same pairs as
    the GEMM's (once, a failed switch left int16 columns under the int8 kernel and missed most pairs)."""
    odd = np.array([1.0, 0.0013653389178216457, 0.00023645481269340962, 0.0002827362040989101], np.float32)
    rng = np.random.default_rng(3)
    emb = np.array([1.0, 0.5, 0.3, 0.2]) + rng.normal(scale=0.1, size=(600, 4))
    emb[1::2] = emb[::2] + rng.normal(scale=0.001, size=(300, 4))
    unit = similarity.normalised_rows(emb)
    unit[599] = odd
    products = Tiles(unit, 100, 4096, np.float32(0.9999), kind="int8", serial=True)
    got = set()
    for start in range(0, 600, 100):
        i, j, _ = similarity._upper_pairs(products, start, 100)
        got |= set(zip(i.tolist(), j.tolist()))
    assert products.switched and products.kind == "int8"  # precondition: the switch was tried, and failed
    cosines = unit.astype(np.float64) @ unit.T.astype(np.float64)
    want = {(a, b) for a in range(600) for b in range(a + 1, 600) if cosines[a, b] >= np.float32(0.9999)}
    assert len(want) > 100 and got == want


@needs_vnni
def test_int8_counts_the_entries_its_kernels_compare():
    """The in-vain share is of the entries compared: an upper-triangle tile's pairs after each row, a
    reach's columns whose key passes the row's limit (the whole rectangle once overstated them)."""
    unit = similarity.normalised_rows(near_duplicates(4, 300, 8))
    products = Tiles(unit, 300, 4096, np.float32(1.5), kind="int8", serial=True)  # no pair: no switch
    similarity._upper_pairs(products, 0, 300)
    assert products.entries == 300 * 299 // 2
    similarity._upper_pairs(products, 100, 50)  # rows 100-149 against the rows after each
    assert products.entries == 300 * 299 // 2 + sum(299 - r for r in range(100, 150))
    before, key, limit = products.entries, np.arange(300) % 7, np.array([0, 3, 6, 9])
    similarity._row_pairs(products, np.array([5, 6, 7, 8]), key, limit)
    assert products.entries - before == sum(int((key > v).sum()) for v in limit)
    assert products.kind == "int8" and products.in_vain == 0


@needs_vnni
def test_int8_gives_way_within_a_reachs_rows(monkeypatch):
    """The reach's tiles (rows by priority against every row, column range by column range): the
    switch within a tile's rows there too, and the pairs are the GEMM's."""
    rng = np.random.default_rng(3)
    emb = rng.normal(size=384) + rng.normal(scale=0.14, size=(600, 384))
    emb[1::2] = emb[::2] + rng.normal(scale=0.002, size=(300, 384))
    unit = similarity.normalised_rows(emb)
    monkeypatch.setattr(similarity, "TILE_COLUMNS", 128)
    order = rng.permutation(600)
    rank = np.empty(600, np.int64)
    rank[order] = np.arange(600)
    found = {}
    for kind in ("int8", "float32"):
        products = Tiles(unit, 200, 128, np.float32(0.99), kind=kind, serial=True)
        parts = [similarity._row_pairs(products, order[s:s + 200], rank, np.arange(s, s + 200, dtype=np.int64))
                 for s in range(0, 600, 200)]
        found[kind] = sorted(zip(np.concatenate([p[0] for p in parts]).tolist(),
                                 np.concatenate([p[1] for p in parts]).tolist()))
        if kind == "int8":
            assert products.kind == "int16" and products.entries < 200 * 600  # within the first tile's rows
    assert len(found["float32"]) == 300 and found["int8"] == found["float32"]


def test_an_unknown_kind_names_the_valid_ones():
    with pytest.raises(ValueError, match="kind: one of float32, int16, int8, not 'int4'"):
        Tiles(np.ones((2, 2), np.float32), 4, 64, np.float32(0.5), kind="int4", serial=True)


def test_the_entries_an_upper_tile_compares_in_closed_form():
    """similarity._upper_entries (the int8 route's count of compared entries) against the sum it
    closes: each row r's columns after it within lo .. hi."""
    from itertools import product

    rng = np.random.default_rng(4)
    cases = list(product(range(8), range(7), range(11), range(13)))
    cases += [tuple(int(v) for v in rng.integers(0, 50_000, 4)) for _ in range(300)]
    for start, rows, lo, hi in cases:
        want = int(np.clip(hi - np.maximum(lo, start + 1 + np.arange(rows)), 0, None).sum())
        assert similarity._upper_entries(start, rows, lo, hi) == want, (start, rows, lo, hi)
