"""The cosine cut at a deadline or a reach (features.similarity.cosine_pairs_until): the pairs it
lists are the plain-Python twin's pairs with an end in the compared rows, the compared rows are the
input's first rows then the rest by priority (with a reach, by priority from the first row, at most
``most`` of them), and with no deadline (or one that is never reached) and no reach it is
cosine_pairs itself. The clock is replaced, so every cut point is drawn, not timed."""

import time
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxselect.errors import InputError
from ctxselect.features import compute, similarity
from ctxselect.features.similarity import cosine_pairs, cosine_pairs_until
from ctxselect.packing import pack
from tests.features.test_similarity import _assert_pairs_match, as_dict
from tests.naive.signals import naive_cosine_pairs


def fake_clock(monkeypatch, readings):
    """``time.perf_counter`` in features.similarity reads ``readings`` in turn, then the last one."""
    it = iter(readings)
    last = [readings[-1] if readings else 0.0]

    def now():
        last[0] = next(it, last[0])
        return last[0]
    monkeypatch.setattr(similarity, "time", types.SimpleNamespace(perf_counter=now))


def embeddings(seed, n, d):
    rng = np.random.default_rng(seed)
    emb = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    copies = rng.integers(0, n, size=n // 3)
    emb[rng.integers(0, n, size=n // 3)] = emb[copies] * 2  # parallel copies: cosine 1
    return emb


def components(n, pairs):
    label = list(range(n))
    for a, b in pairs:
        old, new = label[b], label[a]
        label = [new if x == old else x for x in label]
    return label


def check_cut(emb, threshold, block, priority, out, chain=None, most=None, base=None, budget=False):
    """The invariants of one cut's output. With ``chain``, ``base`` is the compared rows of the
    same cut without it: the rows compared are those and the rows chained to them (the components
    of the pairs at or above ``chain`` that hold one of them, pairs within 1e-5 of it aside)."""
    i, j, w, compared = out
    n = len(emb)
    keys = list(zip(i.tolist(), j.tolist()))
    assert all(a < b for a, b in keys) and keys == sorted(set(keys))
    if compared is None:  # every pair: cosine_pairs' (its tiles' bits, unless rows were reordered first)
        _assert_pairs_match(as_dict(i, j, w), as_dict(*cosine_pairs(emb, threshold, block=block)), threshold, 1e-6)
        return
    assert compared.dtype == bool and compared.shape == (n,) and not compared.all()
    every = naive_cosine_pairs(emb.tolist(), threshold)
    got = as_dict(i, j, w)
    want = {k: v for k, v in every.items() if compared[k[0]] or compared[k[1]]}
    assert all(compared[a] or compared[b] for a, b in got)  # no pair of two rows left uncompared
    _assert_pairs_match(got, want, threshold, 1e-5)  # every row compared: with every other row
    if chain is not None:
        assert base is not None and (compared >= base).all()
        whole = components(n, [k for k, v in every.items() if v >= chain + 1e-5])
        found = components(n, [k for k, v in got.items() if v >= chain - 1e-5])
        held = {whole[k] for k in np.flatnonzero(base).tolist()}
        assert all(compared[k] for k in range(n) if whole[k] in held)  # whole clusters
        near = {found[k] for k in np.flatnonzero(base).tolist()}
        assert all(found[k] in near for k in np.flatnonzero(compared).tolist())  # chained rows only
        compared = base
    reach = n if most is None or 2 * most >= n else most  # from n / 2 on, every pair (a cut is the deadline's)
    assert (0 if budget else min(block, reach)) <= compared.sum() <= (n if budget else reach)  # (a budget: its own)
    # the input's first rows, then the rest from the highest priority (ties in input order)
    start = int(np.argmin(compared)) if not compared.all() else n
    rest = np.arange(start, n)
    rest = rest[np.lexsort((rest, -np.asarray(priority, dtype=float)[rest]))]
    flags = compared[rest]
    assert not (flags[1:] & ~flags[:-1]).any()  # a prefix of the rest in priority order


def check_budget_cut(emb, threshold, chain, out):
    """A chained cut the pair budget stopped: every compared row has all its pairs, no pair joins two rows left
    uncompared, and two compared rows of one cluster (pairs at or above ``chain``) are joined by pairs found."""
    i, j, w, compared = out
    n = len(emb)
    every = naive_cosine_pairs(emb.tolist(), threshold)
    got = as_dict(i, j, w)
    assert all(compared[a] or compared[b] for a, b in got)
    _assert_pairs_match(got, {k: v for k, v in every.items() if compared[k[0]] or compared[k[1]]}, threshold, 1e-5)
    whole = components(n, [k for k, v in every.items() if v >= chain + 1e-5])
    found = components(n, [k for k, v in got.items() if v >= chain - 1e-5])
    rows = np.flatnonzero(compared).tolist()
    assert all(found[a] == found[b] for a in rows for b in rows if whole[a] == whole[b])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.integers(1, 5), st.integers(1, 45),
       st.sampled_from([0.3, 0.8, 1.0, 0.0]),
       st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=40, max_size=40),
       st.lists(st.floats(0, 3), max_size=12), st.floats(-1, 10), st.sampled_from([0.0, 40.0, 1e9]),
       st.sampled_from([None, 0.9, 1.0]), st.sampled_from([None, 1, 2, 5, 17, 100]), st.booleans(),
       st.sampled_from([None, 1, 3, 8]), st.sampled_from([None, None, 0, 3, 40]))
def test_a_cut_lists_the_twins_pairs_of_the_compared_rows(seed, n, d, block, threshold, priority, clock, deadline,
                                                          uncut, chain, most, timed, columns, max_pairs):
    emb = embeddings(seed, n, d)
    priority = priority[:n]
    runs, infos = [], []
    for link in ([None, chain] if chain is not None else [None]):  # the same clock: the same tiles
        with pytest.MonkeyPatch.context() as monkeypatch:
            fake_clock(monkeypatch, list(np.cumsum(clock)))
            monkeypatch.setattr(similarity, "UNCUT_WORK", uncut)
            if columns is not None:  # products in column blocks (TILE_COLUMNS is 4,096)
                monkeypatch.setattr(similarity, "TILE_COLUMNS", columns)
            infos.append({})
            runs.append(cosine_pairs_until(emb, threshold, deadline=deadline if timed else None, priority=priority,
                                           block=block, chain=link, most=most, info=infos[-1], max_pairs=max_pairs))
    if not timed:
        assert not any(info["timed_out"] for info in infos)
    if max_pairs is None:
        assert not any(info["pair_cut"] for info in infos)
    for (i, _j, _w, _compared), info in zip(runs, infos):  # a budget that cut: passed by a tile or chain block
        assert not info["pair_cut"] or len(i) <= max_pairs + min(block, n) * n
    if (most is None or 2 * most >= n) and runs[0][3] is not None:  # no reach: a cut is the deadline's or the budget's
        assert infos[0]["timed_out"] or infos[0]["pair_cut"]
    check_cut(emb, threshold, block, priority, runs[0], None, most, budget=max_pairs is not None)
    if chain is not None and infos[1]["pair_cut"] and runs[1][3] is not None:  # the chaining stopped by the budget:
        check_budget_cut(emb, threshold, chain, runs[1])  # no cluster joins compared rows but through compared rows
    if chain is not None and not infos[1]["pair_cut"]:
        base = runs[0][3] if runs[0][3] is not None else np.ones(n, dtype=bool)
        check_cut(emb, threshold, block, priority, runs[1], chain, most, base=base, budget=max_pairs is not None)
    out = runs[0]
    if most is not None and 2 * most < n and uncut < n * n * d / 2:  # the reach cuts: its rows, from the first tile
        assert out[3] is not None and out[3][np.lexsort((np.arange(n), -np.asarray(priority)))[0]]
        if not timed and not infos[0]["pair_cut"]:  # and only the reach: exactly its rows
            expected = np.lexsort((np.arange(n), -np.asarray(priority)))[:most]
            assert set(np.flatnonzero(out[3]).tolist()) == set(expected.tolist())
    elif most is not None and not timed and not infos[0]["pair_cut"]:  # half the rows or more: every pair
        assert out[3] is None


def test_a_passed_deadline_compares_one_tile_of_the_highest_priorities(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)  # cut however little is left
    emb = embeddings(7, 30, 3)
    priority = np.arange(30)[::-1] % 7  # ties: the input order among equals
    i, j, w, compared = cosine_pairs_until(emb, 0.5, deadline=0.0, priority=priority, block=8)
    expected = np.lexsort((np.arange(30), -priority))[:8]
    assert set(np.flatnonzero(compared)) == set(expected.tolist())
    check_cut(emb, 0.5, 8, priority, (i, j, w, compared))


def test_no_deadline_or_a_far_one_is_cosine_pairs(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)  # the deadline is read at every tile
    emb = embeddings(3, 300, 8)
    full = cosine_pairs(emb, 0.5, block=64)
    for deadline in (None, time.perf_counter() + 3600):
        *pairs, compared = cosine_pairs_until(emb, 0.5, deadline=deadline, priority=np.ones(300), block=64)
        assert compared is None
        assert all(np.array_equal(x, y) for x, y in zip(pairs, full))


def test_a_small_cosine_is_never_cut():
    emb = embeddings(5, 600, 8)  # 1.4 million multiply-adds, below UNCUT_WORK
    *pairs, compared = cosine_pairs_until(emb, 0.5, deadline=0.0, priority=np.arange(600.0), block=512)
    assert compared is None
    assert all(np.array_equal(x, y) for x, y in zip(pairs, cosine_pairs(emb, 0.5, block=512)))


def test_edges(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    for n in (0, 1):
        *pairs, compared = cosine_pairs_until(np.ones((n, 3)), 0.5, deadline=0.0)
        assert compared is None and all(len(p) == 0 for p in pairs)
    emb = embeddings(1, 12, 3)  # no priority: the input's order
    _, _, _, compared = cosine_pairs_until(emb, 0.5, deadline=0.0, block=5)
    assert np.flatnonzero(compared).tolist() == [0, 1, 2, 3, 4]
    for bad, found in (([1.0, 2.0, 3.0], r"shape \(3,\)"), (["high"] * 12, "<U4 values"), ([True] * 12, "bool values"),
                       ([float("nan")] * 12, "NaN or infinity"), ([10**400] * 12, "object values"), (5.0, r"shape \(\)")):
        with pytest.raises(InputError, match=r"priority.*one finite number per row \(12\).*" + found):
            cosine_pairs_until(emb, 0.5, deadline=0.0, priority=bad)
    for deadline in ("soon", float("nan"), True):
        with pytest.raises(InputError, match="deadline"):
            cosine_pairs_until(emb, 0.5, deadline=deadline)
    with pytest.raises(InputError, match="block"):
        cosine_pairs_until(emb, 0.5, block=0)  # it looped for ever when tiles of no rows were allowed
    for most in (0, -3, 2.5, True, "5"):
        with pytest.raises(InputError, match="most"):
            cosine_pairs_until(emb, 0.5, most=most)
    for most in (11, 12, 10**9):  # every row but one compared: the last one with all of them
        *pairs, compared = cosine_pairs_until(emb, 0.5, most=most, block=5)
        assert compared is None and all(np.array_equal(x, y) for x, y in zip(pairs, cosine_pairs(emb, 0.5)))


def test_the_reach_compares_its_rows_without_a_clock(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    emb = embeddings(4, 50, 4)
    priority = np.random.default_rng(0).permutation(50).astype(float)
    alone = cosine_pairs_until(emb, 0.5, priority=priority, most=7, block=3)
    assert set(np.flatnonzero(alone[3]).tolist()) == set(np.argsort(-priority)[:7].tolist())
    check_cut(emb, 0.5, 3, priority, alone, most=7)
    out = cosine_pairs_until(emb, 0.5, priority=priority, most=7, block=3, chain=0.95)
    assert out[3].sum() > 7  # parallel copies of the seven: chained, and then compared with every row
    check_cut(emb, 0.5, 3, priority, out, chain=0.95, most=7, base=alone[3])
    monkeypatch.setattr(similarity, "UNCUT_WORK", 50 * 50 * 4 / 2)  # a small cosine: never cut
    assert cosine_pairs_until(emb, 0.5, priority=priority, most=7)[3] is None


def chunks(n, d, seed=0):
    """Chunks whose embeddings hold no near-duplicate pair (no chained rows: the cut's rows alone)."""
    emb = np.random.default_rng(seed).standard_normal((n, d))
    return [{"id": f"c{k}", "source": "s", "tokens": 5, "relevance": (k % 10) / 10, "text": f"chunk {k}",
             "embedding": emb[k].tolist()} for k in range(n)]


def test_signals_hold_the_compared_chunks(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    packed = pack(chunks(40, 32), {"token_budget": 50})
    assert compute.signals(packed).compared is None
    sig = compute.signals(packed, deadline=0.0, block_size=10)
    assert sig.compared.sum() == 10
    top = np.lexsort((np.arange(40), -packed.relevance))[:10]  # the most relevant first (all equally fresh)
    assert set(np.flatnonzero(sig.compared).tolist()) == set(top.tolist())
    assert compute.signals(pack(chunks(40, 32), {"token_budget": 50}), similarity="minhash",
                           deadline=0.0).compared is None  # MinHash is not cut
    with pytest.raises(InputError, match="deadline"):
        compute.signals(packed, deadline="soon")


def test_signals_compare_the_reach(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    packed = pack(chunks(40, 32), {"token_budget": 50})
    seen = []

    def reach(freshness, probes):  # the caller's priority, told the freshness (and no question)
        seen.append((freshness.shape, probes))
        return -np.arange(40.0), 6
    sig = compute.signals(packed, reach=reach, block_size=4)
    assert seen == [((40,), None)]
    assert np.flatnonzero(sig.compared).tolist() == [0, 1, 2, 3, 4, 5] and sig.reach == 6 and not sig.cut_by_time
    sig = compute.signals(packed, reach=reach, block_size=4, deadline=0.0)  # the deadline cuts first
    assert np.flatnonzero(sig.compared).tolist() == [0, 1, 2, 3] and sig.cut_by_time
    assert compute.signals(packed, reach=lambda f, p: (np.zeros(40), 40)).compared is None
    assert compute.signals(packed, reach=lambda f, p: (-np.arange(40.0), 6.0), block_size=4).compared.sum() == 6
    monkeypatch.setattr(similarity, "UNCUT_WORK", 40 * 40 * 32 / 2)  # a cosine never cut: no reach asked
    seen.clear()
    assert compute.signals(packed, reach=reach, block_size=4, deadline=0.0).compared is None and seen == []
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    for bad, field in ((lambda f, p: (np.zeros(3), 6), "reach.priority"), (lambda f, p: (np.zeros(40), 0), "reach.count"),
                       (lambda f, p: (np.full(40, np.nan), 6), "reach.priority"), (lambda f, p: None, "reach"),
                       (lambda f, p: (np.zeros(40), 2.5), "reach.count"), ("reach", "reach")):
        with pytest.raises(InputError, match=field.replace(".", r"\.")):
            compute.signals(packed, reach=bad)


def test_a_pair_budget_stops_the_tiles_and_holds_no_uncertain_cluster_compared(monkeypatch):
    """30 distinct rows, then 200 equal ones (every pair of them a pair): the budget of 50 pairs stops the tiles
    in the equal rows, however small the work (UNCUT_WORK as it is), the chaining through them stops too, and
    none of their cluster stays compared (a cluster through rows never compared with each other could join two
    compared rows); every row still compared has every one of its pairs, and the tiles and chaining found the
    budget's pairs and one block's more at most (of 19,900)."""
    rng = np.random.default_rng(3)
    emb = np.vstack([rng.integers(-3, 4, size=(30, 6)).astype(float), np.tile([9.0, 0, 0, 0, 0, 0], (200, 1))])
    emb[:30, 0] = 0.0  # the distinct rows: orthogonal to the equal ones
    produced = []
    for name in ("_upper_pairs", "_row_pairs"):
        real = getattr(similarity, name)
        monkeypatch.setattr(similarity, name, lambda *a, real=real: produced.append(real(*a)) or produced[-1])
    info = {}
    i, j, w, compared = cosine_pairs_until(emb, 0.8, block=8, chain=0.95, info=info, max_pairs=50)
    assert info == {"timed_out": False, "pair_cut": True}
    assert compared is not None and not compared[30:].any() and compared[:30].all()
    check_budget_cut(emb, 0.8, 0.95, (i, j, w, compared))
    assert sum(len(p[0]) for p in produced) <= 50 + 8 * 230
    assert cosine_pairs_until(emb, 0.8, block=8, chain=0.95)[3] is None  # no budget: every pair
