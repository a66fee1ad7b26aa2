"""The branch and bound kernel (kernels/bnb.py) against its twin (tests/naive/bnb.py) and against
enumeration of every subset, on fixed, random and edge inputs: the same mask, objective, status
and node count as the twin; the optimum of the enumeration whenever it says "proven"; a proven
infeasibility only when no subset meets the constraints."""

import itertools
import math
import time

import numpy as np
import pytest

from ctxselect.kernels.bnb import INFEASIBLE, LIMIT, PROVEN
from ctxselect.kernels.bnb_bound import ROOT_STEPS
from ctxselect.selection.solvers.exact import run_search
from tests.naive.bnb import naive_evaluate, naive_search


def _csr(rows, dtype=np.int64):
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    return ptr, np.array([v for r in rows for v in r], dtype=dtype)


def kernel(md, hint, node_limit=10**8, seconds=None, steps=ROOT_STEPS):
    """The kernel on the twin's model dict (``seconds``: a deadline that far ahead; ``steps``: the root's
    subgradient steps, None: ``run_search``'s default)."""
    m = len(md["w"])
    item_groups = [[g for g, part in enumerate(md["groups"]) if i in part] for i in range(m)]
    ov_ptr, ov_fam = _csr([[f for f, _ in md["families"][i]] for i in range(m)])
    _, ov_code = _csr([[c for _, c in md["families"][i]] for i in range(m)])
    nbr = [[] for _ in range(m)]
    val = [[] for _ in range(m)]
    for i, j, p in md["penalties"]:
        nbr[i].append(j), val[i].append(p), nbr[j].append(i), val[j].append(p)
    pen_ptr, pen_nbr = _csr(nbr)
    _, pen_val = _csr(val)
    n_fam = 1 + max([f for fams in md["families"] for f, _ in fams], default=-1)
    i64 = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    mask, objective, status, found, nodes = run_search((
        i64(md["w"]), i64(md["t"]), md["lo"], md["hi"], md["klo"], md["khi"], i64(md["src"]), i64(md["caps"]),
        i64(md["need"]), *_csr(item_groups), np.asarray(md["mu_cap"], dtype=np.float64), ov_ptr, ov_fam, ov_code,
        n_fam, *_csr(md["aspects"]), i64(md["gain"]), i64(md["cov_w"]), md["cov_need"],
        np.array(md["rows"], dtype=np.int64).reshape(len(md["rows"]), m), i64(md["row_lo"]), pen_ptr, pen_nbr,
        pen_val, np.asarray(hint, dtype=bool)), node_limit, 1e18 if seconds is None else time.perf_counter() + seconds,
        steps)
    return np.asarray(mask, dtype=bool), int(objective), int(status), bool(found), int(nodes)


def enumerate_best(md):
    """(best objective or None) over every subset."""
    best = None
    for size in range(len(md["w"]) + 1):
        for chosen in itertools.combinations(range(len(md["w"])), size):
            ok, value = naive_evaluate(dict(md, item_groups=[[g for g, part in enumerate(md["groups"]) if i in part]
                                                             for i in range(len(md["w"]))]), list(chosen))
            if ok and (best is None or value > best):
                best = value
    return best


def random_model(rng, m):
    n_src = int(rng.integers(1, 4))
    n_asp = int(rng.integers(0, 4))
    groups, caps = [], []
    for _ in range(int(rng.integers(0, 4))):  # hard at-most-one groups (clusters, forbidden pairs)
        groups.append(sorted(rng.choice(m, size=min(m, int(rng.integers(2, 4))), replace=False).tolist()) if m > 1 else [0])
        caps.append(math.inf)
    penalties = []
    for _ in range(int(rng.integers(0, 4)) if m > 1 else 0):  # soft pairs: a penalty, and a group for the bound
        i, j = sorted(rng.choice(m, size=2, replace=False).tolist())
        p = int(rng.integers(1, 400_000))
        penalties.append((i, j, p))
        groups.append([i, j])
        caps.append(float(p))
    families = [[(0, int(rng.integers(0, 3)))] if rng.random() < 0.3 else [] for _ in range(m)]
    aspects = [[a for a in range(n_asp) if rng.random() < 0.35] for _ in range(m)]
    t = rng.integers(1, 60, m).tolist()
    hi = int(rng.integers(0, max(2, sum(t) // 2 + 2)))
    rows, row_lo = [], []
    if rng.random() < 0.4:
        rows.append(rng.integers(-1_000, 1_000, m).tolist())
        row_lo.append(0)
    cov_w = rng.integers(0, 100, n_asp).tolist()
    return {
        "w": rng.integers(-200_000, 1_000_000, m).tolist(), "t": t, "lo": int(rng.integers(0, max(1, hi // 3 + 1))),
        "hi": hi, "klo": int(rng.random() < 0.3), "khi": int(rng.integers(1, m + 1)) if rng.random() < 0.3 else m,
        "src": rng.integers(0, n_src, m).tolist(), "caps": rng.integers(1, m + 1, n_src).tolist(),
        "need": [int(rng.random() < 0.3) for _ in range(n_src)], "groups": groups, "mu_cap": caps,
        "families": families, "aspects": aspects, "gain": rng.integers(0, 500_000, n_asp).tolist(),
        "cov_w": cov_w, "cov_need": int(rng.integers(0, sum(cov_w) + 1)) if rng.random() < 0.4 else 0,
        "rows": rows, "row_lo": row_lo, "penalties": penalties,
    }


def test_a_fixed_knapsack_by_hand():
    """Values 6, 5, 4 and 0.5 (x 1e5), tokens 4, 2, 2, 1, budget 4: the optimum takes items 1 and 2 (9);
    with items 1 and 2 in one cluster, it takes item 0 (6, more than 5 + 0.5)."""
    md = random_model(np.random.default_rng(0), 4)
    md.update(w=[600_000, 500_000, 400_000, 50_000], t=[4, 2, 2, 1], lo=0, hi=4, klo=0, khi=4, src=[0] * 4, caps=[4],
              need=[0], groups=[], mu_cap=[], families=[[]] * 4, aspects=[[]] * 4, gain=[], cov_w=[], cov_need=0,
              rows=[], row_lo=[], penalties=[])
    mask, objective, status, found, _ = kernel(md, [False] * 4)
    assert status == PROVEN and found and objective == 900_000 and mask.tolist() == [False, True, True, False]
    md.update(groups=[[1, 2]], mu_cap=[math.inf])
    mask, objective, status, _, _ = kernel(md, [False] * 4)
    assert status == PROVEN and objective == 600_000 and mask.tolist() == [True, False, False, False]
    assert naive_search(md, [False] * 4)[:3][1] == 600_000


@pytest.mark.parametrize("steps", [0, ROOT_STEPS])
@pytest.mark.parametrize("seed", range(8))
def test_the_kernel_is_the_twin_and_the_enumeration(seed, steps):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        m = int(rng.integers(1, 11))
        md = random_model(rng, m)
        hint = (rng.random(m) < 0.4).tolist()
        got = kernel(md, hint, steps=steps)
        twin = naive_search(md, hint, steps=steps)
        assert got[0].tolist() == twin[0].tolist() and got[1:] == twin[1:]
        best = enumerate_best(md)
        if best is None:
            assert got[2] == INFEASIBLE and not got[3]
        else:
            assert got[2] == PROVEN and got[1] == best
            assert naive_evaluate(dict(md, item_groups=[[g for g, part in enumerate(md["groups"]) if i in part]
                                                        for i in range(m)]), np.flatnonzero(got[0]).tolist()) == (True, best)


@pytest.mark.parametrize("steps", [0, ROOT_STEPS])
@pytest.mark.parametrize("seed", range(3))
def test_larger_models_against_the_twin(seed, steps):
    rng = np.random.default_rng(100 + seed)
    for _ in range(4):
        m = int(rng.integers(15, 30))
        md = random_model(rng, m)
        hint = [False] * m
        got, twin = kernel(md, hint, steps=steps), naive_search(md, hint, steps=steps)
        assert got[0].tolist() == twin[0].tolist() and got[1:] == twin[1:]


def test_the_root_takes_subgradient_steps_only_above_root_steps_from_items(monkeypatch):
    """run_search's default: no step up to ROOT_STEPS_FROM items, ROOT_STEPS above (a model whose
    search differs between the two, so the default is told apart)."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        md = random_model(rng, 25)
        none, some = kernel(md, [False] * 25, steps=0), kernel(md, [False] * 25, steps=ROOT_STEPS)
        if none[1:] != some[1:]:
            break
    else:
        pytest.fail("no model whose search depends on the root's steps")
    assert kernel(md, [False] * 25, steps=None)[1:] == none[1:]
    monkeypatch.setattr("ctxselect.selection.solvers.exact.ROOT_STEPS_FROM", 24)
    assert kernel(md, [False] * 25, steps=None)[1:] == some[1:]


def test_the_node_limit_returns_the_best_found():
    rng = np.random.default_rng(7)
    md = random_model(rng, 25)
    md.update(lo=0, klo=0, need=[0] * len(md["caps"]), cov_need=0, rows=[], row_lo=[])
    mask, objective, status, found, nodes = kernel(md, [False] * 25, node_limit=3)
    assert status == LIMIT and nodes == 4
    assert found and naive_search(md, [False] * 25, node_limit=3)[1:] == (objective, LIMIT, True, 4)


@pytest.mark.parametrize("case", ["empty", "budget 0", "infeasible minimum", "ties", "hint is optimal"])
def test_edge_inputs(case):
    rng = np.random.default_rng(3)
    md = random_model(rng, 5)
    md.update(lo=0, klo=0, khi=5, need=[0] * len(md["caps"]), cov_need=0, rows=[], row_lo=[], caps=[5] * len(md["caps"]))
    hint = [False] * 5
    if case == "empty":  # no item (every chunk ineligible)
        md = dict(md, w=[], t=[], src=[], families=[], aspects=[], groups=[], mu_cap=[], penalties=[], khi=0)
        hint = []
    elif case == "budget 0":
        md["hi"] = 0
    elif case == "infeasible minimum":
        md["need"] = [6] + md["need"][1:]
    elif case == "ties":  # five equal items, room for two: the first two of the branching order
        md.update(w=[100_000] * 5, t=[10] * 5, hi=20, groups=[], mu_cap=[], families=[[]] * 5, aspects=[[]] * 5,
                  penalties=[], src=[0] * 5, caps=[5], need=[0])
    elif case == "hint is optimal":
        md.update(w=[100_000, -5, -5, -5, -5], hi=1000, groups=[], mu_cap=[], penalties=[], aspects=[[]] * 5)
        hint = [True, False, False, False, False]
    got = kernel(md, hint)
    assert got[0].tolist() == naive_search(md, hint)[0].tolist() and got[1:] == naive_search(md, hint)[1:]
    best = enumerate_best(md)
    if case == "infeasible minimum":
        assert best is None and got[2] == INFEASIBLE
    else:
        assert got[2] == PROVEN and got[1] == best
    if case in ("empty", "budget 0"):
        assert not got[0].any() and got[1] == 0
    if case == "ties":
        assert got[0].sum() == 2 and got[1] == 200_000
        assert kernel(md, hint)[0].tolist() == got[0].tolist()  # deterministic
    if case == "hint is optimal":
        assert got[0].tolist() == hint


def test_the_kernels_clock_is_monotonic_and_read_in_nopython_mode():
    """``monotonic_ns`` read inside a kernel: ``clock_gettime(CLOCK_MONOTONIC)`` on Linux, the clock
    of ``time.monotonic_ns`` (so it lies between two Python reads around the call) and never going
    back; the object-mode reader kept for platforms without ``clock_gettime`` reads the same clock."""
    import sys

    from numba import config, njit

    from ctxselect.kernels.bnb import CLOCK_MONOTONIC, _monotonic_ns_objmode, monotonic_ns, quiet_compile

    @njit  # not cached: a test's kernel writes nothing to the disk cache
    def twice():
        first = monotonic_ns()
        total = 0
        for k in range(100_000):
            total += k % 7
        return first, monotonic_ns(), total

    before = time.monotonic_ns()
    first, second, total = twice()
    after = time.monotonic_ns()
    assert total == sum(k % 7 for k in range(100_000)) and first <= second
    if sys.platform == "linux":
        assert CLOCK_MONOTONIC == 1 and before <= first <= second <= after
        if not config.DISABLE_JIT:  # machine code that calls the C library's clock: no object mode
            assert "clock_gettime" in twice.inspect_llvm(twice.signatures[0])
    with quiet_compile():
        read = _monotonic_ns_objmode()
    assert before <= read <= time.monotonic_ns()


def test_a_deadline_stops_a_long_search_in_time():
    """A model whose search runs past 2 s, given 20 ms, stops with LIMIT after a few thousand nodes
    (the clock read every CLOCK_EVERY nodes: not at the first read, a 20 ms budget is no 20 µs one),
    far below its node limit. With the JIT off the kernel runs as Python, whose setup before the first
    node alone took 20 ms on a slow day (stopped at node 1; 0.2 s gave ~1,300 nodes): it gets 0.5 s."""
    from numba import config

    from ctxselect.kernels.bnb import CLOCK_EVERY

    md = random_model(np.random.default_rng(0), 400)
    kernel(md, np.zeros(400, dtype=bool), node_limit=10)  # the kernels loaded: the 20 ms are the search's
    seconds = 0.5 if config.DISABLE_JIT else 0.02
    mask, objective, status, found, nodes = kernel(md, np.zeros(400, dtype=bool), node_limit=500_000, seconds=seconds)
    assert status == LIMIT and CLOCK_EVERY < nodes < 100_000
