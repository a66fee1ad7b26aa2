"""Plain-Python twin of kernels/bnb.py: the same branch and bound, written as a recursion over
Python lists. The multipliers, the branching order, the two bounds and the cuts are those of the
kernel (same operations in the same order, so the same floats); the state of a node is
recomputed from the selected items instead of being kept incrementally.

The model (see the kernel's docstring) is given as a dict: w, t, lo, hi, klo, khi, src, caps,
need, groups (lists of items), mu_cap (inf: hard at-most-one; else a soft pair's penalty),
families (per item: list of (family, code)), aspects (per item: list of aspects), gain, cov_w,
cov_need, rows (list of coefficient lists), row_lo, penalties (list of (i, j, p)).
"""

from __future__ import annotations

import math

import numpy as np

ROOT_STEPS, BISECTIONS = 100, 25


def _reduced(md, lam, mu, nu):
    r = []
    for i in range(len(md["w"])):
        v = md["w"][i] - lam * md["t"][i]
        for g in md["item_groups"][i]:
            v -= mu[g]
        for a in md["aspects"][i]:
            v += nu[a]
        r.append(v)
    return r


def _take(md, r):
    """The largest positive r under the per-source caps and the chunk count: (taken, their sum)."""
    caps, khi, src = md["caps"], md["khi"], md["src"]
    per_source = [0] * len(caps)
    for i in range(len(r)):
        if r[i] > 0:
            per_source[src[i]] += 1
    binds = sum(per_source) > khi or any(per_source[s] > caps[s] for s in range(len(caps)))
    if not binds:
        taken = [i for i in range(len(r)) if r[i] > 0]
        total = 0.0
        for i in taken:
            total += r[i]
        return taken, total
    taken, total, count = [], 0.0, [0] * len(caps)
    for i in sorted(range(len(r)), key=lambda i: -r[i]):
        if r[i] <= 0 or len(taken) >= khi:
            break
        if count[src[i]] < caps[src[i]]:
            count[src[i]] += 1
            taken.append(i)
            total += r[i]
    return taken, total


def naive_multipliers(md, target, steps=ROOT_STEPS):
    """λ by bisection, then projected Polyak subgradient steps on (λ, μ, ν): the best found."""
    m, t, gain, cap = len(md["w"]), md["t"], md["gain"], md["mu_cap"]
    mu, nu = [0.0] * len(cap), [0.0] * len(gain)
    scale = max(float(sum(t)) / m, 1.0) if m else 1.0
    high = max([md["w"][i] / t[i] for i in range(m) if t[i] > 0 and md["w"][i] > 0], default=0.0)
    low = 0.0
    for _ in range(BISECTIONS):
        lam = 0.5 * (low + high)
        taken, _ = _take(md, _reduced(md, lam, mu, nu))
        used = 0.0
        for i in range(m):
            if i in taken:
                used += t[i]
        low, high = (lam, high) if used > md["hi"] else (low, lam)
    lam = high
    best, best_at, theta, stale = math.inf, (lam, list(mu), list(nu)), 1.0, 0
    for _ in range(steps):
        taken, total = _take(md, _reduced(md, lam, mu, nu))
        value = lam * md["hi"] + total
        for g in range(len(cap)):
            value += mu[g]
        for a in range(len(gain)):
            value += max(0.0, gain[a] - nu[a])
        if target == -math.inf:
            target = value - 0.05 * abs(value) - 1.0
        if value < best:
            best, best_at, stale = value, (lam, list(mu), list(nu)), 0
        else:
            stale += 1
            if stale >= 5:
                theta, stale = theta * 0.5, 0
        chosen = set(taken)
        g_lam = md["hi"] / scale
        g_mu = [1.0] * len(cap)
        g_nu = [-1.0 if gain[a] > nu[a] else 0.0 for a in range(len(gain))]
        for i in range(m):
            if i in chosen:
                g_lam -= t[i] / scale
                for g in md["item_groups"][i]:
                    g_mu[g] -= 1.0
                for a in md["aspects"][i]:
                    g_nu[a] += 1.0
        if lam <= 0 and g_lam > 0:
            g_lam = 0.0
        norm = g_lam * g_lam
        for g in range(len(cap)):
            if (mu[g] <= 0 and g_mu[g] > 0) or (mu[g] >= cap[g] and g_mu[g] < 0):
                g_mu[g] = 0.0
            norm += g_mu[g] * g_mu[g]
        for a in range(len(gain)):
            if (nu[a] <= 0 and g_nu[a] > 0) or (nu[a] >= gain[a] and g_nu[a] < 0):
                g_nu[a] = 0.0
            norm += g_nu[a] * g_nu[a]
        if norm <= 0:
            break
        if value - target <= 1e-4 * abs(value):
            target = value - 0.01 * abs(value) - 1.0
        step = theta * (value - target) / norm
        lam = max(0.0, lam - step * g_lam / scale)
        mu = [min(cap[g], max(0.0, mu[g] - step * g_mu[g])) for g in range(len(cap))]
        nu = [min(gain[a], max(0.0, nu[a] - step * g_nu[a])) for a in range(len(gain))]
    return (*best_at, best)


def _blocked(md, i, chosen):
    """A selected item shares a hard group with i, or carries another code of one of its families."""
    for j in chosen:
        if any(g in md["item_groups"][j] and md["mu_cap"][g] == math.inf for g in md["item_groups"][i]):
            return True
        codes = dict(md["families"][j])
        if any(f in codes and codes[f] != c for f, c in md["families"][i]):
            return True
    return False


def naive_evaluate(md, chosen):
    """(meets every constraint, the integer objective) of the set ``chosen``."""
    chosen = sorted(chosen)
    ok = all(not _blocked(md, i, chosen[:k]) for k, i in enumerate(chosen))
    used = sum(md["t"][i] for i in chosen)
    ok &= md["lo"] <= used <= md["hi"] and md["klo"] <= len(chosen) <= md["khi"]
    for s in range(len(md["caps"])):
        count = sum(1 for i in chosen if md["src"][i] == s)
        ok &= md["need"][s] <= count <= md["caps"][s]
    covered = {a for i in chosen for a in md["aspects"][i]}
    ok &= sum(md["cov_w"][a] for a in covered) >= md["cov_need"]
    ok &= all(sum(row[i] for i in chosen) >= lo for row, lo in zip(md["rows"], md["row_lo"]))
    value = sum(md["w"][i] for i in chosen) + sum(md["gain"][a] for a in covered)
    value -= sum(p for i, j, p in md["penalties"] if i in chosen and j in chosen)
    return bool(ok), int(value)


class _Limit(Exception):
    pass


def naive_search(md, hint, node_limit=10**9, steps=ROOT_STEPS):
    """(mask, objective, status, found, nodes) as the kernel at ``steps`` root subgradient steps: status
    0 proven, 1 limit, 2 infeasible."""
    m = len(md["w"])
    md = dict(md, item_groups=[[g for g, part in enumerate(md["groups"]) if i in part] for i in range(m)])
    found, best = naive_evaluate(md, [i for i in range(m) if hint[i]])
    state = {"best": best, "found": found, "mask": list(hint) if found else [False] * m, "nodes": 0}
    lam, mu, nu, _ = naive_multipliers(md, float(best) if found else -math.inf, steps)
    r = _reduced(md, lam, mu, nu)
    order = sorted(range(m), key=lambda i: -r[i])
    pos = {i: k for k, i in enumerate(order)}
    profit = [r[i] + lam * md["t"][i] for i in range(m)]
    by_ratio = sorted(range(m), key=lambda i: -(profit[i] / md["t"][i] if md["t"][i] > 0 else math.inf))

    def cut(d, chosen):
        rest = order[d:]
        covered = {a for i in chosen for a in md["aspects"][i]}
        reach = {a for i in rest for a in md["aspects"][i]} | covered
        if sum(md["t"][i] for i in chosen + rest) < md["lo"] or len(chosen) + len(rest) < md["klo"]:
            return True
        if any(sum(1 for i in chosen + rest if md["src"][i] == s) < md["need"][s] for s in range(len(md["caps"]))):
            return True
        if any(sum(row[i] for i in chosen) + sum(max(row[i], 0) for i in rest) < lo
               for row, lo in zip(md["rows"], md["row_lo"])):
            return True
        if md["cov_need"] > 0 and sum(md["cov_w"][a] for a in reach) < md["cov_need"]:
            return True
        if not state["found"]:
            return False
        ok, value = naive_evaluate(dict(md, lo=0, klo=0, need=[0] * len(md["caps"]), cov_need=0, rows=[]), chosen)
        room = md["hi"] - sum(md["t"][i] for i in chosen)
        touched = {g for i in chosen for g in md["item_groups"][i]}
        base = float(value) + sum(mu[g] for g in range(len(mu)) if g not in touched)
        base += sum(max(0.0, md["gain"][a] - nu[a]) for a in range(len(nu)) if a not in covered)
        free = [i for i in rest if md["t"][i] <= room and not _blocked(md, i, chosen)]
        count = [sum(1 for i in chosen if md["src"][i] == s) for s in range(len(md["caps"]))]
        lagrangian, left = base + lam * room, md["khi"] - len(chosen)
        for i in free:  # in the branching order: largest r first
            if left <= 0 or r[i] <= 0:
                break
            if count[md["src"][i]] < md["caps"][md["src"][i]]:
                count[md["src"][i]] += 1
                lagrangian += r[i]
                left -= 1
        bound = lagrangian
        if bound >= state["best"] + 0.5:
            fractional, space = base, room
            for i in by_ratio:
                if profit[i] <= 0:
                    break
                if i not in free:
                    continue
                if md["t"][i] <= space:
                    fractional += profit[i]
                    space -= md["t"][i]
                else:
                    fractional += profit[i] * space / md["t"][i]
                    break
            bound = min(bound, fractional)
        return bound < state["best"] + 0.5

    def visit(d, chosen):
        state["nodes"] += 1
        if state["nodes"] > node_limit:
            raise _Limit
        if cut(d, chosen):
            return
        if d == m:
            _, value = naive_evaluate(md, chosen)
            if not state["found"] or value > state["best"]:
                state.update(best=value, found=True, mask=[i in chosen for i in range(m)])
            return
        i = order[d]
        if (sum(md["t"][j] for j in chosen) + md["t"][i] <= md["hi"] and len(chosen) < md["khi"]
                and sum(1 for j in chosen if md["src"][j] == md["src"][i]) < md["caps"][md["src"][i]]
                and not _blocked(md, i, chosen)):
            visit(d + 1, chosen + [i])
        visit(d + 1, chosen)

    status = 0
    try:
        visit(0, [])
    except _Limit:
        status = 1
    if status == 0 and not state["found"]:
        status = 2
    return np.array(state["mask"], dtype=bool), state["best"], status, state["found"], state["nodes"]
