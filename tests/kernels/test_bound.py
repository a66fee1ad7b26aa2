"""The Lagrangian bound kernel (kernels/bound.py) against its twin (tests/naive/bound.py): the LP
value of a knapsack with per-group caps, on fixed, random and edge inputs; never below the integer
optimum; never above the fractional knapsack without caps."""

import numpy as np
import pytest

from ctxselect.kernels.bound import _capped_bound, _dual, _kth_largest
from tests.naive.bound import naive_capped_bound, naive_capped_optimum, naive_dual


def kernel_bound(w, t, groups, caps, budget, iterations=60):
    order = np.array([i for members in groups for i in members], dtype=np.int64)
    starts = np.zeros(len(groups) + 1, dtype=np.int64)
    np.cumsum([len(m) for m in groups], out=starts[1:])
    value, lam = _capped_bound(np.asarray(w, float), np.asarray(t, float), order, starts,
                               np.asarray(caps, dtype=np.int64), float(budget), iterations)
    # the multiplier returned is the one whose dual value is the bound
    assert float(value) == pytest.approx(naive_dual(w, t, groups, caps, budget, float(lam)), rel=1e-9, abs=1e-9)
    assert lam >= 0.0
    return float(value)


def fractional(w, t, budget):
    room, total = float(budget), 0.0
    for i in sorted((i for i in range(len(w)) if w[i] > 0), key=lambda i: -w[i] / t[i]):
        take = min(1.0, room / t[i])
        total += take * w[i]
        room -= take * t[i]
        if room <= 0:
            break
    return total


def test_a_fixed_instance_by_hand():
    """Two groups, cap 1 each: items (w, t) = (6, 4), (5, 2) | (4, 2), (1, 1); budget 4. The LP
    takes (5, 2) and (4, 2): 9, the integer optimum too. With budget 6 the caps bind: one item per
    group, (6, 4) and (4, 2) = 10 (LP and integer), where the fractional knapsack without caps takes
    (5, 2), (4, 2) and half of (6, 4): 12."""
    w, t, groups = [6.0, 5.0, 4.0, 1.0], [4.0, 2.0, 2.0, 1.0], [[0, 1], [2, 3]]
    assert kernel_bound(w, t, groups, [1, 1], 4) == pytest.approx(9.0)
    assert kernel_bound(w, t, groups, [1, 1], 6) == pytest.approx(naive_capped_bound(w, t, groups, [1, 1], 6))
    assert naive_capped_bound(w, t, groups, [1, 1], 6) == pytest.approx(10.0)
    assert naive_capped_optimum(w, t, groups, [1, 1], 6) == pytest.approx(10.0)
    assert fractional(w, t, 6) == pytest.approx(12.0)


@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_is_the_twin_and_bounds_the_optimum(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(1, 12))
        w = (rng.random(n) * 2 - 0.3).round(3).tolist()
        t = rng.integers(1, 20, n).astype(float).tolist()
        k = int(rng.integers(1, 4))
        labels = rng.integers(0, k, n)
        groups = [[i for i in range(n) if labels[i] == g] for g in range(k)]
        caps = rng.integers(0, 4, k).tolist()
        budget = float(rng.integers(0, 60))
        got = kernel_bound(w, t, groups, caps, budget)
        assert got == pytest.approx(naive_capped_bound(w, t, groups, caps, budget), rel=1e-7, abs=1e-9)
        assert got >= naive_capped_optimum(w, t, groups, caps, budget) - 1e-9
        assert got <= fractional(w, t, budget) + 1e-9


def test_edges_empty_no_budget_zero_caps_and_ties():
    assert kernel_bound([], [], [[]], [3], 10) == 0.0
    assert kernel_bound([1.0, 2.0], [1.0, 1.0], [[0, 1]], [2], 0) == pytest.approx(0.0)
    assert kernel_bound([1.0, 2.0], [1.0, 1.0], [[0, 1]], [0], 10) == 0.0
    assert kernel_bound([-1.0, -2.0], [1.0, 1.0], [[0, 1]], [2], 10) == 0.0
    ties = [1.0] * 6
    assert kernel_bound(ties, [1.0] * 6, [list(range(6))], [2], 10) == pytest.approx(2.0)
    assert kernel_bound(ties, [1.0] * 6, [list(range(6))], [5], 3) == pytest.approx(3.0)


def test_every_multiplier_gives_a_valid_bound():
    rng = np.random.default_rng(9)
    w, t = rng.random(10), rng.integers(1, 9, 10).astype(float)
    groups, caps = [list(range(5)), list(range(5, 10))], [2, 3]
    order = np.arange(10, dtype=np.int64)
    starts = np.array([0, 5, 10], dtype=np.int64)
    optimum = naive_capped_optimum(w.tolist(), t.tolist(), groups, caps, 12)
    for lam in np.linspace(0, 2, 21):
        value, _ = _dual(w[order], t[order], starts, np.array(caps, dtype=np.int64), 12.0, lam,
                         np.empty(10, dtype=np.int64), np.empty(10), np.empty(10))
        assert value == pytest.approx(naive_dual(w.tolist(), t.tolist(), groups, caps, 12, lam))
        assert value >= optimum - 1e-9


@pytest.mark.parametrize("case", ["fixed", "random", "ties", "edge"])
def test_the_kth_largest_against_its_twin(case):
    """``_kth_largest`` (the cut of a capped group) is the k-th largest of ``values[:m]`` as a sorted
    list gives it (the twin) and as ``np.partition``, which it replaced, gives it; values past ``m``
    are not read."""
    rng = np.random.default_rng(3)
    if case == "fixed":
        shapes = [([3.0, 1.0, 2.0], 3, 1), ([3.0, 1.0, 2.0], 3, 3), ([0.5, 9.0, 9.0, 4.0], 4, 2)]
    elif case == "edge":
        shapes = [([7.0], 1, 1), ([1.0, 2.0, 99.0], 2, 1), ([2.0, 2.0, 2.0], 3, 2), ([1e-300, -0.0, 0.0], 3, 2)]
    else:
        shapes = []
        for _ in range(300):
            m = int(rng.integers(1, 200))
            values = rng.integers(0, 5, m + 3).astype(float) if case == "ties" else rng.normal(size=m + 3)
            if rng.random() < 0.2:  # ascending: every value replaces the heap's root
                values[:m].sort()
            shapes.append((values.tolist(), m, int(rng.integers(1, m + 1))))
    for values, m, k in shapes:
        arr = np.asarray(values, dtype=np.float64)
        got = _kth_largest(arr, m, k, np.full(len(values), np.nan))
        assert got == sorted(values[:m])[m - k] == np.partition(arr[:m], m - k)[m - k]
