"""Jitted kernels that see only arrays: the Lagrangian bound of a knapsack with per-group caps.

maximise Σ w_i x_i  subject to  Σ t_i x_i ≤ B,  Σ_{i in group g} x_i ≤ c_g,  x ∈ {0, 1}

Dualising the budget with λ ≥ 0 leaves, per group, "the c_g largest positive w_i − λ t_i":

    D(λ) = λ B + Σ_g (sum of the c_g largest positive values of w_i − λ t_i over group g)

and D(λ) ≥ the optimum for *every* λ ≥ 0 (weak duality), so any λ gives a valid bound. D is convex
and piecewise linear; its subgradient B − Σ t_i (over the items counted) falls as λ grows, so a
bisection on its sign finds the minimum, which equals the LP relaxation's value. Items are given
grouped: ``order`` lists item positions group after group, ``starts`` the first entry of each
group (length groups + 1).
"""

from __future__ import annotations

import numpy as np

from ctxselect._config import serial


@serial
def _dual(w, t, starts, caps, budget, lam, scratch, values, heap):
    """D(λ) and the tokens of the items it counts (the subgradient is ``budget`` − those tokens);
    ``w`` and ``t`` of the items group after group (as :func:`_capped_bound` gathers them by its
    ``order``), ``scratch``, ``values`` and ``heap`` (one per item) written over."""
    total = lam * budget
    used = 0.0
    for g in range(starts.shape[0] - 1):
        m = 0
        for k in range(starts[g], starts[g + 1]):
            r = w[k] - lam * t[k]
            if r > 0.0:
                scratch[m] = k
                m += 1
        cap = caps[g]
        if m <= cap:  # every positive item counts
            for q in range(m):
                i = scratch[q]
                total += w[i] - lam * t[i]
                used += t[i]
        elif cap > 0:  # the cap largest: threshold by the cap-th largest value, ties counted once each up to cap
            for q in range(m):
                i = scratch[q]
                values[q] = w[i] - lam * t[i]
            cut = _kth_largest(values, m, cap, heap)
            taken = 0
            for q in range(m):  # strictly above the cut first, then ties
                if values[q] > cut:
                    i = scratch[q]
                    total += values[q]
                    used += t[i]
                    taken += 1
            for q in range(m):
                if taken >= cap:
                    break
                if values[q] == cut:
                    i = scratch[q]
                    total += values[q]
                    used += t[i]
                    taken += 1
    return total, used


@serial
def _kth_largest(values, m, k, heap):
    """The ``k``-th largest of ``values[:m]`` (1 <= k <= m), equal (==) to what
    ``np.partition(values[:m], m - k)[m - k]`` gives (a zero's sign may differ: never in :func:`_dual`,
    whose values are > 0): a min-heap of the ``k`` largest in ``heap[:k]``, one comparison per value for
    most, a cap being small beside its source's chunks. With the partition's copy per group and step, and
    w and t read through ``order``, one select()'s 13 bounds took 7.65 against 5.07 ms at 20,000 x 384."""
    for q in range(k):
        heap[q] = values[q]
    for a in range(k // 2 - 1, -1, -1):
        _sift_down(heap, a, k)
    for q in range(k, m):
        if values[q] > heap[0]:
            heap[0] = values[q]
            _sift_down(heap, 0, k)
    return heap[0]


@serial
def _sift_down(heap, a, k):
    """Restore the min-heap ``heap[:k]`` below position ``a``."""
    v = heap[a]
    while True:
        c = 2 * a + 1
        if c >= k:
            break
        if c + 1 < k and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= v:
            break
        heap[a] = heap[c]
        a = c
    heap[a] = v


@serial
def _capped_bound(w, t, order, starts, caps, budget, iterations):
    """min over the λ tried of D(λ), and the λ that gave it: a bisection on the subgradient's sign
    over [0, max w/t]. The λ is the LP's price of a token: w_i − λ t_i ranks the chunks as the LP
    relaxation values them (the core of the optimizer is chosen by it)."""
    size = max(order.shape[0], 1)
    scratch = np.empty(size, dtype=np.int64)
    values = np.empty(size, dtype=np.float64)
    heap = np.empty(size, dtype=np.float64)
    wo = np.empty(size, dtype=np.float64)  # w and t in order, read ~32 times
    to = np.empty(size, dtype=np.float64)
    high = 0.0
    for k in range(order.shape[0]):
        i = order[k]
        wo[k] = w[i]
        to[k] = t[i]
        if t[i] > 0 and w[i] / t[i] > high:
            high = w[i] / t[i]
    best, used = _dual(wo, to, starts, caps, budget, 0.0, scratch, values, heap)
    if used <= budget:  # λ = 0 is optimal: the caps bind before the budget
        return best, 0.0
    best_lam = 0.0
    low = 0.0
    for _ in range(iterations):
        mid = 0.5 * (low + high)
        value, used = _dual(wo, to, starts, caps, budget, mid, scratch, values, heap)
        if value < best:
            best = value
            best_lam = mid
        if used > budget:
            low = mid
        else:
            high = mid
    value, used = _dual(wo, to, starts, caps, budget, high, scratch, values, heap)
    if value < best:
        return value, high
    return best, best_lam
