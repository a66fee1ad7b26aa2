"""Jitted kernels that see only arrays: the root multipliers of the branch and bound's Lagrangian
bound (:mod:`ctxselect.kernels.bnb`).

With the budget (λ), every at-most-one group and soft pair (μ_G, at most the pair's penalty) and
every aspect (ν_a, 0 ≤ ν_a ≤ g_a) dualised, what is left is "the largest positive reduced values
r_i = w_i − λ t_i − Σ_(G ∋ i) μ_G + Σ_(a: i covers a) ν_a under per-source caps and a total",
solved exactly in order; the bound is

    L(λ, μ, ν) = λ·hi + Σ_G μ_G + Σ_a max(0, g_a − ν_a) + (that sum)

and L ≥ the optimum for every λ, μ, ν in range (weak duality). λ starts by bisection on the
budget's subgradient, then (above ROOT_STEPS_FROM items) projected subgradient steps (Polyak's) move
all three.
"""

from __future__ import annotations

import numpy as np

from ctxselect._config import serial

#: Subgradient steps at the root above ROOT_STEPS_FROM items (each O(m), a sort when a cap binds; the
#: n = 200 figures below were measured before small models took none). A tighter bound proves more
#: searches within the node limit, so CP-SAT (10-30 ms) runs less often. Measured against 40 steps
#: (benchmarks/latency.py instances, the same calls in turn, 2026-12-02): at n = 2,000 the search
#: stopped at its limit on 16 instead of 22 of 40 cores (13 instead of 18 of 30 in another run), and
#: select()'s CPU took a median 0.974x (0.984x) per call, p90 59.8 against 63.1 ms. At n = 200 (200
#: calls) 26 instead of 37 searches stopped: p90 16.6 against 21.5 ms, mean 11.2 against 11.7, but the
#: median call 1.012x (the steps cost ~0.17 ms there). Every objective the same; 150 steps gained no more.
ROOT_STEPS = 100
#: Up to this many items the root takes no subgradient step (λ by bisection alone, μ = ν = 0): the
#: search then branches in the order of w − λ·t and proves more within its node limit, in less time.
#: Measured on the exact solver's models of benchmarks/latency.py queries (2026-12-06; the same models
#: searched with 0 and 100 steps in turn; proven within the node limit, median search time):
#: n = 200 x 384 (~166 items, 151 models) 150 against 134 proven, 235 against 456 µs; n = 200 text only
#: (101) 100 against 91, 244 against 474 µs; n = 300 x 384 (~248 items) 61 against 52 of 61; the
#: ~183-item cores at n = 1,000 36 against 33 (x 384) and 33 against 31 (text) of 41; n = 2,000 text
#: (~202-item cores) 27 against 27 of 41, 929 against 1,303 µs. Above it the data are mixed: n = 500
#: text (~413 items) 37 against 35 of 41 with no steps, n = 2,000 x 384 (~469 items, ~550 groups)
#: 25 against 30 of 41 (38 against 43 of 61 in another run): the steps stay. Every proven objective equal.
ROOT_STEPS_FROM = 300
#: Bisection steps for the budget's multiplier λ before the subgradient steps.
BISECTIONS = 25


@serial
def _reduced(w, t, lam, mu, nu, ig_ptr, ig_grp, ia_ptr, ia_asp):
    m = w.shape[0]
    r = np.empty(m, dtype=np.float64)
    for i in range(m):
        v = w[i] - lam * t[i]
        for k in range(ig_ptr[i], ig_ptr[i + 1]):
            v -= mu[ig_grp[k]]
        for k in range(ia_ptr[i], ia_ptr[i + 1]):
            v += nu[ia_asp[k]]
        r[i] = v
    return r


@serial
def _take(r, src, caps, khi, picked):
    """The relaxation's items: the largest positive r, at most caps[s] per source and ``khi`` in
    all (marked in ``picked``); returns their sum. Sorts only when a cap binds, and only the
    positive r."""
    m = r.shape[0]
    per_source = np.zeros(caps.shape[0], dtype=np.int64)
    positive = 0
    for i in range(m):
        picked[i] = False
        if r[i] > 0.0:
            per_source[src[i]] += 1
            positive += 1
    binds = positive > khi
    for s in range(caps.shape[0]):
        if per_source[s] > caps[s]:
            binds = True
    total = 0.0
    if not binds:
        for i in range(m):
            if r[i] > 0.0:
                picked[i] = True
                total += r[i]
        return total
    positive_items = np.empty(positive, dtype=np.int64)  # only these are ever taken: only they are sorted
    k = 0
    for i in range(m):
        if r[i] > 0.0:
            positive_items[k] = i
            k += 1
    order = positive_items[np.argsort(-r[positive_items], kind="mergesort")]  # stable: ties in item order
    per_source[:] = 0
    left = khi
    for k in range(positive):
        i = order[k]
        if left <= 0:
            break
        if per_source[src[i]] < caps[src[i]]:
            per_source[src[i]] += 1
            picked[i] = True
            total += r[i]
            left -= 1
    return total


@serial
def _root_multipliers(w, t, hi, khi, src, caps, ig_ptr, ig_grp, mu_cap, ia_ptr, ia_asp, gain, target, steps):
    """Multipliers (λ, μ, ν) of a small Lagrangian bound: λ by bisection with μ = ν = 0, then
    ``steps`` projected subgradient steps (Polyak's, toward ``target``, the norm over the moving
    multipliers only, halved after 5 steps without progress). Returns the best multipliers found
    and their bound."""
    m = w.shape[0]
    n_asp = gain.shape[0]
    n_groups = mu_cap.shape[0]
    mu = np.zeros(n_groups, dtype=np.float64)
    nu = np.zeros(n_asp, dtype=np.float64)
    picked = np.zeros(m, dtype=np.bool_)
    scale = max(float(t.sum()) / m, 1.0) if m > 0 else 1.0  # tokens per mean chunk: λ moves like the rest
    high = 0.0
    for i in range(m):
        if t[i] > 0 and w[i] > 0 and w[i] / t[i] > high:
            high = w[i] / t[i]
    low = 0.0
    for _ in range(BISECTIONS):  # λ: the subgradient hi − Σ t over the items taken changes sign
        lam = 0.5 * (low + high)
        _take(_reduced(w, t, lam, mu, nu, ig_ptr, ig_grp, ia_ptr, ia_asp), src, caps, khi, picked)
        used = 0.0
        for i in range(m):
            if picked[i]:
                used += t[i]
        if used > hi:
            low = lam
        else:
            high = lam
    lam = high
    best = np.inf
    best_lam, best_mu, best_nu = lam, mu.copy(), nu.copy()
    theta = 1.0
    stale = 0
    g_mu = np.empty(n_groups, dtype=np.float64)
    g_nu = np.empty(n_asp, dtype=np.float64)
    for _ in range(steps):
        value = lam * hi + _take(_reduced(w, t, lam, mu, nu, ig_ptr, ig_grp, ia_ptr, ia_asp), src, caps, khi, picked)
        for g in range(n_groups):
            value += mu[g]
        for a in range(n_asp):
            value += max(0.0, gain[a] - nu[a])
        if target == -np.inf:  # no incumbent: aim a twentieth below the first bound
            target = value - 0.05 * abs(value) - 1.0
        if value < best:
            best = value
            best_lam, best_mu, best_nu = lam, mu.copy(), nu.copy()
            stale = 0
        else:
            stale += 1
            if stale >= 5:
                theta *= 0.5
                stale = 0
        # the subgradient at the items taken, zero where a multiplier sits at a bound it would cross
        g_lam = hi / scale
        g_mu[:] = 1.0
        for a in range(n_asp):
            g_nu[a] = -1.0 if gain[a] > nu[a] else 0.0
        for i in range(m):
            if picked[i]:
                g_lam -= t[i] / scale
                for q in range(ig_ptr[i], ig_ptr[i + 1]):
                    g_mu[ig_grp[q]] -= 1.0
                for q in range(ia_ptr[i], ia_ptr[i + 1]):
                    g_nu[ia_asp[q]] += 1.0
        if lam <= 0.0 and g_lam > 0.0:
            g_lam = 0.0
        norm = g_lam * g_lam
        for g in range(n_groups):
            if (mu[g] <= 0.0 and g_mu[g] > 0.0) or (mu[g] >= mu_cap[g] and g_mu[g] < 0.0):
                g_mu[g] = 0.0
            norm += g_mu[g] * g_mu[g]
        for a in range(n_asp):
            if (nu[a] <= 0.0 and g_nu[a] > 0.0) or (nu[a] >= gain[a] and g_nu[a] < 0.0):
                g_nu[a] = 0.0
            norm += g_nu[a] * g_nu[a]
        if norm <= 0.0:
            break
        if value - target <= 1e-4 * abs(value):  # the level was too high (no incumbent says so): lower it
            target = value - 0.01 * abs(value) - 1.0
        step = theta * (value - target) / norm
        lam = max(0.0, lam - step * g_lam / scale)
        for g in range(n_groups):
            mu[g] = min(mu_cap[g], max(0.0, mu[g] - step * g_mu[g]))
        for a in range(n_asp):
            nu[a] = min(gain[a], max(0.0, nu[a] - step * g_nu[a]))
    return best_lam, best_mu, best_nu, best
