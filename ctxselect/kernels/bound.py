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
def _dual(w, t, order, starts, caps, budget, lam, scratch):
    """D(λ) and the tokens of the items it counts (the subgradient is ``budget`` − those tokens)."""
    total = lam * budget
    used = 0.0
    for g in range(starts.shape[0] - 1):
        m = 0
        for k in range(starts[g], starts[g + 1]):
            i = order[k]
            r = w[i] - lam * t[i]
            if r > 0.0:
                scratch[m] = k
                m += 1
        cap = caps[g]
        if m <= cap:  # every positive item counts
            for q in range(m):
                i = order[scratch[q]]
                total += w[i] - lam * t[i]
                used += t[i]
        elif cap > 0:  # the cap largest: threshold by partition, ties counted once each up to cap
            values = np.empty(m, dtype=np.float64)
            for q in range(m):
                i = order[scratch[q]]
                values[q] = w[i] - lam * t[i]
            cut = np.partition(values, m - cap)[m - cap]
            taken = 0
            for q in range(m):  # strictly above the cut first, then ties
                if values[q] > cut:
                    i = order[scratch[q]]
                    total += values[q]
                    used += t[i]
                    taken += 1
            for q in range(m):
                if taken >= cap:
                    break
                if values[q] == cut:
                    i = order[scratch[q]]
                    total += values[q]
                    used += t[i]
                    taken += 1
    return total, used


@serial
def _capped_bound(w, t, order, starts, caps, budget, iterations):
    """min over the λ tried of D(λ), and the λ that gave it: a bisection on the subgradient's sign
    over [0, max w/t]. The λ is the LP's price of a token: w_i − λ t_i ranks the chunks as the LP
    relaxation values them (the core of the optimizer is chosen by it)."""
    scratch = np.empty(max(order.shape[0], 1), dtype=np.int64)
    high = 0.0
    for k in range(order.shape[0]):
        i = order[k]
        if t[i] > 0 and w[i] / t[i] > high:
            high = w[i] / t[i]
    best, used = _dual(w, t, order, starts, caps, budget, 0.0, scratch)
    if used <= budget:  # λ = 0 is optimal: the caps bind before the budget
        return best, 0.0
    best_lam = 0.0
    low = 0.0
    for _ in range(iterations):
        mid = 0.5 * (low + high)
        value, used = _dual(w, t, order, starts, caps, budget, mid, scratch)
        if value < best:
            best = value
            best_lam = mid
        if used > budget:
            low = mid
        else:
            high = mid
    value, used = _dual(w, t, order, starts, caps, budget, high, scratch)
    if value < best:
        return value, high
    return best, best_lam
