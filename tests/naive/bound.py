"""Plain-Python twin of kernels/bound.py: the LP value of a knapsack with per-group caps, as the
minimum of its Lagrangian dual D(λ) over every breakpoint (D is convex and piecewise linear: its
minimum lies at λ = 0, where an item turns positive, w_i / t_i, or where two items of a group
trade places, (w_i − w_j) / (t_i − t_j))."""

from __future__ import annotations

from itertools import combinations


def naive_dual(w, t, groups, caps, budget, lam):
    total = lam * budget
    for g, members in enumerate(groups):
        values = sorted((w[i] - lam * t[i] for i in members if w[i] - lam * t[i] > 0), reverse=True)
        total += sum(values[: caps[g]])
    return total


def naive_capped_bound(w, t, groups, caps, budget):
    points = {0.0}
    points |= {w[i] / t[i] for members in groups for i in members if w[i] > 0}
    for members in groups:
        for i, j in combinations(members, 2):
            if t[i] != t[j]:
                lam = (w[i] - w[j]) / (t[i] - t[j])
                if lam > 0:
                    points.add(lam)
    return min(naive_dual(w, t, groups, caps, budget, lam) for lam in points)


def naive_capped_optimum(w, t, groups, caps, budget):
    """The integer optimum by enumeration (n <= 14)."""
    n = len(w)
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    best = 0.0
    for mask in range(1 << n):
        chosen = [i for i in range(n) if mask >> i & 1]
        if sum(t[i] for i in chosen) > budget:
            continue
        counts = [0] * len(groups)
        for i in chosen:
            counts[group_of[i]] += 1
        if any(c > caps[g] for g, c in enumerate(counts)):
            continue
        best = max(best, sum(w[i] for i in chosen))
    return best
