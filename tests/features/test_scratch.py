"""The scratch arrays a thread keeps between calls (``features.scratch``), and the cosine that
uses them: one buffer per name and thread, grown to fit, never kept past ``KEPT_BYTES``; no result
of a cosine call shares memory with them, and a later call with other rows leaves it unchanged."""

import dataclasses
import threading

import numpy as np
import pytest

from ctxselect.features import scratch as kept
from ctxselect.features import similarity
from ctxselect.features.similarity import cosine_pairs, cosine_pairs_until
from ctxselect.model.embeddings import held_rows
from tests.naive.signals import naive_cosine_pairs


def test_a_name_is_one_buffer_per_thread_grown_to_fit():
    a = kept.scratch("test a", (10, 4), np.float32)
    assert a.shape == (10, 4) and a.dtype == np.float32 and a.flags.c_contiguous
    again = kept.scratch("test a", (3, 2), np.float64)  # smaller, another dtype: the same memory
    assert np.shares_memory(a, again) and again.shape == (3, 2) and again.dtype == np.float64
    other = kept.scratch("test b", (10, 4), np.float32)
    assert not np.shares_memory(a, other)
    grown = kept.scratch("test a", (1000, 4), np.float32)  # larger: a new buffer, kept from then on
    assert grown.shape == (1000, 4) and np.shares_memory(grown, kept.scratch("test a", (5,), np.int64))
    assert not np.shares_memory(kept.scratch(None, (10, 4), np.float32), kept.scratch(None, (10, 4), np.float32))
    empty = kept.scratch("test a", (0, 4), np.float32)
    assert empty.shape == (0, 4)


def test_larger_than_the_kept_size_is_fresh_and_not_kept(monkeypatch):
    monkeypatch.setattr(kept, "KEPT_BYTES", 64)
    small = kept.scratch("test c", (16,), np.float32)  # 64 bytes: kept
    assert np.shares_memory(small, kept.scratch("test c", (4,), np.float32))
    big = kept.scratch("test c", (17,), np.float32)
    assert not np.shares_memory(big, kept.scratch("test c", (17,), np.float32))
    assert np.shares_memory(small, kept.scratch("test c", (16,), np.float32))  # the kept one unchanged


def test_threads_get_buffers_of_their_own():
    seen = {}
    ready = threading.Barrier(2)

    def run(k):
        ready.wait()
        seen[k] = kept.scratch("test d", (100,), np.float64)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not np.shares_memory(seen[0], seen[1])
    assert not np.shares_memory(seen[0], kept.scratch("test d", (100,), np.float64))


def _held(matrix):
    """The rows as validated candidates hold them (read-only float64 rows: ``HeldRows``)."""
    rows = [np.array(r, dtype=np.float64) for r in matrix]
    for row in rows:
        row.flags.writeable = False
    held = held_rows(rows)
    assert held is not None
    return held


def _pairs(result):
    return {(int(a), int(b)): float(x) for a, b, x in zip(*result[:3])}


@pytest.mark.parametrize("held", [False, True])
def test_a_cosine_result_outlives_the_next_call(held, monkeypatch):
    """Rows kept from a larger call hold stale values: a smaller call after it finds its own pairs
    (the twin's), and the first result is unchanged by the second call (it shares no memory with
    the kept buffers); tiles of few columns make several products share the kept tile buffer."""
    monkeypatch.setattr(similarity, "TILE_COLUMNS", 7)
    rng = np.random.default_rng(5)
    big, small = rng.normal(size=(60, 8)), rng.normal(size=(25, 8))
    small[4] = small[1] * 3.0  # a parallel copy: cosine 1
    inputs = [_held(m) if held else m for m in (big, small)]
    first = cosine_pairs_until(inputs[0], 0.3, block=5)
    copy = [np.array(a) for a in first[:3]]
    unit = kept.scratch("unit rows", (60, 8), np.float32)
    assert not any(np.shares_memory(a, unit) for a in first[:3])
    second = cosine_pairs(inputs[1], 0.3, block=5)
    assert all(np.array_equal(a, b) for a, b in zip(first[:3], copy))
    want = naive_cosine_pairs(small.tolist(), 0.3)
    got = _pairs(second)
    for key in set(got) ^ set(want):  # float32 tiles: only pairs at the threshold may differ
        assert abs(want.get(key, got.get(key)) - 0.3) <= 1e-5
    assert (1, 4) in got
    assert _pairs(cosine_pairs(big, 0.3, block=5)) == _pairs(first)


def test_cosine_in_two_threads_at_once():
    rng = np.random.default_rng(9)
    inputs = [rng.normal(size=(300, 16)) for _ in range(2)]
    alone = [_pairs(cosine_pairs(m, 0.2)) for m in inputs]
    out = {}
    ready = threading.Barrier(2)

    def run(k):
        ready.wait()
        for _ in range(5):
            out.setdefault(k, []).append(_pairs(cosine_pairs(inputs[k], 0.2)))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got == alone[k] for k in range(2) for got in out[k])


def _arrays(value, seen=None):
    """Every NumPy array reachable from ``value`` through dataclass fields, tuples, lists and dicts."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return [value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in _arrays(item, seen)]
    return []


@pytest.mark.parametrize("question", [None, "flooded homes"])
def test_signatures_kept_between_calls_leave_each_result_its_own(question):
    """The MinHash signatures of a ``signals()`` call are the thread's kept "signatures" (fresh
    memory a call, 51 MB at 50,000): no array of its ``Signals`` shares memory with a kept buffer,
    and a call on other texts right after leaves every one of them as it was, with and without a
    question (two signing kernels); the signals of the first texts again are the same."""
    from ctxselect.features.compute import signals
    from ctxselect.features.similarity import signature_rows, text_signatures
    from ctxselect.packing import pack

    def packed(k, n):
        rng = np.random.default_rng(k)
        words = [f"w{i}" for i in range(40)]
        texts = [" ".join(rng.choice(words, 30)) for _ in range(n)]
        texts[1] = texts[0] + " flooded homes"  # a near copy: a redundancy pair
        chunks = [{"id": f"c{i}", "text": t, "tokens": 10, "relevance": 0.5,
                   "source": "s"} for i, t in enumerate(texts)]
        return pack(chunks, {"token_budget": 50})

    a, b = packed(1, 30), packed(2, 300)
    first = signals(a, question)
    held = _arrays(first)
    copies = [np.array(x) for x in held]
    buffers = list(kept._KEPT.buffers.values())
    assert len(held) > 5 and buffers and not any(np.shares_memory(x, k) for x in held for k in buffers)
    signals(b, question)
    assert all(np.array_equal(x, c) for x, c in zip(held, copies))
    again = signals(a, question)
    red = first.redundancy
    assert (0, 1) in zip(red.i.tolist(), red.j.tolist())
    assert all(np.array_equal(x, y) for x, y in zip(_arrays(again), held))
    kept_sig = signature_rows(np.arange(31), 128, kept=True)
    assert np.shares_memory(kept_sig, signature_rows(np.arange(11), 64, kept=True))
    assert not np.shares_memory(signature_rows(np.arange(11), 64), signature_rows(np.arange(11), 64))
    sig, _ = text_signatures(["a b c d", "a b c e"])  # the default: an array of the caller's own
    assert not np.shares_memory(sig, kept_sig)


def test_buffers_grow_by_half_and_a_thread_keeps_at_most_the_kept_size(monkeypatch):
    kept.release()
    kept.scratch("test g", (1000,), np.float32)
    grown = kept.scratch("test g", (1001,), np.float32)  # grown by half: 6,000 bytes
    assert np.shares_memory(grown, kept.scratch("test g", (1500,), np.float32))
    monkeypatch.setattr(kept, "KEPT_BYTES", 10_000)
    a = kept.scratch("test a", (500,), np.float64)  # 4,000 bytes: with test g's 6,000, at the cap
    a[:] = 7.0
    b = kept.scratch("test b", (300,), np.float64)  # past it: the others are let go
    assert not np.shares_memory(a, kept.scratch("test a", (500,), np.float64))
    assert (a == 7.0).all()  # an array in use stays valid: only the thread's reference went
    assert np.shares_memory(b, kept.scratch("test b", (10,), np.float64))
    assert kept.release() <= 10_000
    assert kept.release() == 0 and not np.shares_memory(b, kept.scratch("test b", (10,), np.float64))
    with pytest.raises(ValueError, match="negative"):
        kept.scratch("test a", (-1, 5), np.float32)
    assert kept.scratch("test a", (3, 0), np.float32).shape == (3, 0)
