"""One BLAS thread for small cosine products, scoped to the call: the user's setting is read on
entry and put back on exit, the pairs are the same, and entering the limit stays cheap. The tiles
here are BLAS's float32 products (on a CPU with AVX-512 VNNI they are int16 products by default:
tests/features/test_tiles.py)."""

import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

from ctxselect.features import blas, similarity, tiles  # noqa: E402
from ctxselect.features.similarity import cosine_pairs, one_blas_thread  # noqa: E402


@pytest.fixture(autouse=True)
def float32_products(monkeypatch):
    monkeypatch.setattr(similarity, "COSINE_PRODUCTS", "float32")


@pytest.fixture(scope="module")
def numpy_blas():
    """File paths of the BLAS libraries NumPy itself loads (those ``np.matmul`` calls)."""
    code = ("import json, numpy, threadpoolctl; print(json.dumps([i['filepath'] for i in "
            "threadpoolctl.threadpool_info() if i['user_api'] == 'blas']))")
    paths = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True).stdout)
    if not paths:
        pytest.skip("NumPy has no BLAS threadpoolctl can see")
    return set(paths)


def _settings(info):
    return {i["filepath"]: i["num_threads"] for i in info}


def _threads(paths):
    return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info() if i["filepath"] in paths}


def _blas_threads_seen_by_the_tiles(monkeypatch, paths):
    """Run by each tile's pair kernel, i.e. right after each BLAS product."""
    seen = []
    kernel = tiles._upper_pairs_above

    def recording(*args):
        seen.append(_threads(paths))
        return kernel(*args)

    monkeypatch.setattr(tiles, "_upper_pairs_above", recording)
    return seen


@pytest.mark.parametrize("user_threads", [2, 3])
def test_small_products_run_on_one_blas_thread_and_the_users_setting_comes_back(monkeypatch, numpy_blas, user_threads):
    emb = np.random.default_rng(0).normal(size=(600, 32))
    with threadpoolctl.threadpool_limits(user_threads, user_api="blas"):  # the user's own setting
        before = threadpoolctl.threadpool_info()
        seen = _blas_threads_seen_by_the_tiles(monkeypatch, numpy_blas)
        cosine_pairs(emb, 0.5, block=256)
        assert len(seen) == 3 and all(set(s.values()) == {1} for s in seen), seen
        after = _settings(threadpoolctl.threadpool_info())
        assert {k: after[k] for k in _settings(before)} == _settings(before)
        # NumPy's BLAS took the user's setting (another BLAS a test loaded, e.g. SciPy's, may cap it)
        assert {v for k, v in _settings(before).items() if k in numpy_blas} == {user_threads}


def test_large_products_keep_the_users_threads(monkeypatch, numpy_blas):
    monkeypatch.setattr(similarity, "ONE_BLAS_THREAD_WORK", 0)
    emb = np.random.default_rng(0).normal(size=(300, 16))
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        before = threadpoolctl.threadpool_info()
        seen = _blas_threads_seen_by_the_tiles(monkeypatch, numpy_blas)
        cosine_pairs(emb, 0.5, block=128)
        assert seen and all(set(s.values()) == {2} for s in seen), seen
        after = _settings(threadpoolctl.threadpool_info())
        assert {k: after[k] for k in _settings(before)} == _settings(before)


def test_the_pairs_are_the_same_on_one_thread_and_on_several(monkeypatch):
    """The same pairs, their weights within float32 rounding: OpenBLAS 0.3.31 (NumPy 2.4.6) sums a
    tile's products in another order on two threads on this machine's CPU (weights 1.8e-7 apart on
    2,907 of 61,756 pairs; asserting equal bits had passed in earlier sessions' CI), so a pair within
    that of the threshold may fall either side."""
    emb = np.random.default_rng(1).normal(size=(1500, 64))
    threshold = 0.2
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        limited = cosine_pairs(emb, threshold)
        monkeypatch.setattr(similarity, "ONE_BLAS_THREAD_WORK", 0)
        threaded = cosine_pairs(emb, threshold)
    assert len(limited[0]) > 1000
    one = {(int(i), int(j)): float(w) for i, j, w in zip(*limited)}
    several = {(int(i), int(j)): float(w) for i, j, w in zip(*threaded)}
    for key in set(one) ^ set(several):
        assert abs(one.get(key, several.get(key)) - threshold) <= 1e-6, key
    assert len(set(one) & set(several)) >= len(one) - 5
    for key in set(one) & set(several):
        assert abs(one[key] - several[key]) <= 1e-6, key


def test_the_setting_comes_back_after_an_error_and_after_nested_and_concurrent_use(numpy_blas):
    before = threadpoolctl.threadpool_info()
    with pytest.raises(ValueError), one_blas_thread():
        raise ValueError("inside")
    assert threadpoolctl.threadpool_info() == before
    for round_ in range(20):  # threads entering and leaving in every order
        inside, read, seen = threading.Barrier(4), threading.Barrier(4), []

        def work(k):
            with one_blas_thread():
                if round_ % 2:
                    inside.wait()
                with one_blas_thread():
                    seen.append(_threads(numpy_blas))
                if round_ % 2:
                    read.wait()  # nobody leaves before all have read the setting
                if k == round_ % 4:
                    time.sleep(0.001)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(seen) == 4
        if round_ % 2:  # all four inside at once: the first one's limit is in force for all
            assert all(set(s.values()) == {1} for s in seen), seen
        assert threadpoolctl.threadpool_info() == before


def test_the_controller_is_found_once_not_per_call(monkeypatch):
    made = []
    real = threadpoolctl.ThreadpoolController

    class Counting(real):
        def __init__(self, *args, **kwargs):
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", Counting)
    monkeypatch.setattr(blas._BlasLimit, "controller", None)
    emb = np.random.default_rng(2).normal(size=(50, 8))
    for _ in range(5):
        cosine_pairs(emb, 0.5)
    assert len(made) == 1
