"""Jitted kernels that see only arrays: an exact branch and bound for the selection model.

maximise  Σ w_i x_i + Σ_a g_a y_a − Σ_(i,j) p_ij x_i x_j        (integers, p ≥ 0, g ≥ 0)
s.t.      lo ≤ Σ t_i x_i ≤ hi                                    tokens
          klo ≤ Σ x_i ≤ khi                                      chunks
          need_s ≤ Σ_(i in s) x_i ≤ cap_s                        per source
          Σ_(i in G) x_i ≤ 1                                     every at-most-one group G
          selected chunks of a family agree on their code        (conflict fields, versions)
          y_a ≤ Σ_(i covers a) x_i,  Σ_a c_a y_a ≥ cneed          aspects, the coverage row
          Σ_i R_ri x_i ≥ rlo_r                                   integer rows (the gate's)

Depth first, an item's inclusion before its exclusion, from the hint as first incumbent (when it
meets every constraint). The bound of a node is the smaller of two relaxations at multipliers
fixed at the root (:mod:`ctxselect.kernels.bnb_bound`: the budget, the at-most-one groups, the
soft pairs of the penalties and the aspects dualised): the Lagrangian at the root's λ (the source
caps and the chunk count kept, solved exactly), and the fractional knapsack of the free items'
reduced values before λ (the caps dropped; it re-optimises the budget's multiplier at each node).
Any multipliers give a valid bound (weak duality); penalties only lower the objective. Items are
branched on in the order of their root reduced value, so the free items of a node are a suffix of
that order. A node is also cut when its lower-bounded rows (tokens, chunks, source minimums,
coverage, the integer rows) cannot be met by all its undecided items. The objective is an
integer: a node is cut when its bound is below the incumbent + 0.5.

Status: :data:`PROVEN` (the mask is optimal), :data:`LIMIT` (node limit or deadline; the mask is
the best found, ``found`` says whether there is one), :data:`INFEASIBLE` (proven: no mask meets
the constraints).
"""

from __future__ import annotations

import sys
import time
import warnings
from contextlib import contextmanager

import numpy as np
from llvmlite import ir
from numba import objmode, types
from numba.core import cgutils
from numba.core.errors import NumbaWarning
from numba.extending import intrinsic, overload

from ctxselect._config import serial

#: Numba's warning when a kernel that reads the clock in object mode (:func:`_monotonic_ns_objmode`,
#: where ``clock_gettime`` is missing) is compiled with nogil: the kernel runs nothing in parallel,
#: so it says nothing; silenced only around the compile (``quiet_compile``), never in the user's
#: warning filters.
OBJMODE_WARNING = ".*Code running in object mode won't allow parallel"


@contextmanager
def quiet_compile():
    """A context in which compiling the search kernel does not warn about an object-mode clock."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=OBJMODE_WARNING, category=NumbaWarning)
        yield

PROVEN, LIMIT, INFEASIBLE = 0, 1, 2
#: How often (in nodes) the kernel reads the clock.
CLOCK_EVERY = 256

#: ``CLOCK_MONOTONIC`` of the C library's ``clock_gettime`` (64-bit ``struct timespec``) where the
#: kernel reads it in nopython mode; None elsewhere (object mode).
CLOCK_MONOTONIC = {"linux": 1, "darwin": 6}.get(sys.platform) if sys.maxsize > 2**32 else None


def monotonic_ns() -> int:
    """Nanoseconds of a monotonic clock (only differences mean anything): ``time.monotonic_ns`` in
    Python (``NUMBA_DISABLE_JIT=1``); in a kernel ``clock_gettime(CLOCK_MONOTONIC)`` read in nopython
    mode. An object-mode block is compiled afresh in every process (Numba caches no object-mode
    code): it was 43 ms of a fresh process's first ``select()``."""
    return time.monotonic_ns()


@intrinsic
def _clock_gettime_ns(typingctx):
    """``clock_gettime(CLOCK_MONOTONIC)`` in nanoseconds, called from machine code (the symbol is the
    C library's, resolved when the kernel is loaded, from the disk cache too)."""
    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        spec = ir.LiteralStructType([i64, i64])  # struct timespec {time_t tv_sec; long tv_nsec}
        call = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i32, spec.as_pointer()]),
                                              "clock_gettime")
        now = cgutils.alloca_once(builder, spec, zfill=True)  # (CLOCK_MONOTONIC does not fail: its result unread)
        builder.call(call, [ir.Constant(i32, CLOCK_MONOTONIC), now])
        seconds = builder.load(cgutils.gep_inbounds(builder, now, 0, 0))
        nanoseconds = builder.load(cgutils.gep_inbounds(builder, now, 0, 1))
        return builder.add(builder.mul(seconds, ir.Constant(i64, 1_000_000_000)), nanoseconds)

    return types.int64(), codegen


@serial
def _monotonic_ns_objmode():
    """``time.monotonic_ns`` read in object mode: the kernels' clock where ``clock_gettime`` is missing."""
    with objmode(now="int64"):
        now = time.monotonic_ns()
    return now


@overload(monotonic_ns)
def _monotonic_ns_kernel():
    return (lambda: _clock_gettime_ns()) if CLOCK_MONOTONIC is not None else (lambda: _monotonic_ns_objmode())


@serial
def _blocked(i, gsel, hard, ig_ptr, ig_grp, fam_code, ov_ptr, ov_fam, ov_code):
    """Whether a selected chunk keeps item i out: a shared at-most-one group, or another code of
    one of its families."""
    for k in range(ig_ptr[i], ig_ptr[i + 1]):
        if gsel[ig_grp[k]] > 0 and hard[ig_grp[k]]:
            return True
    for k in range(ov_ptr[i], ov_ptr[i + 1]):
        code = fam_code[ov_fam[k]]
        if code >= 0 and code != ov_code[k]:
            return True
    return False


@serial
def _evaluate(mask, w, t, lo, hi, klo, khi, src, caps, need, ig_ptr, ig_grp, mu_cap, ov_ptr, ov_fam, ov_code,
              n_fam, ia_ptr, ia_asp, gain, cov_w, cov_need, rows, row_lo, pen_ptr, pen_nbr, pen_val):
    """Whether ``mask`` meets every constraint, and its objective."""
    m = w.shape[0]
    gsel = np.zeros(mu_cap.shape[0], dtype=np.int64)
    hard = mu_cap == np.inf
    fam_code = np.full(n_fam, -1, dtype=np.int64)
    counts = np.zeros(caps.shape[0], dtype=np.int64)
    covered = np.zeros(gain.shape[0], dtype=np.bool_)
    used = 0
    chosen = 0
    value = 0
    ok = True
    for i in range(m):
        if not mask[i]:
            continue
        if _blocked(i, gsel, hard, ig_ptr, ig_grp, fam_code, ov_ptr, ov_fam, ov_code):
            ok = False
        for k in range(ig_ptr[i], ig_ptr[i + 1]):
            gsel[ig_grp[k]] += 1
        for k in range(ov_ptr[i], ov_ptr[i + 1]):
            fam_code[ov_fam[k]] = ov_code[k]
        for k in range(ia_ptr[i], ia_ptr[i + 1]):
            covered[ia_asp[k]] = True
        for k in range(pen_ptr[i], pen_ptr[i + 1]):
            if pen_nbr[k] < i and mask[pen_nbr[k]]:
                value -= pen_val[k]
        counts[src[i]] += 1
        used += t[i]
        chosen += 1
        value += w[i]
    if used < lo or used > hi or chosen < klo or chosen > khi:
        ok = False
    for s in range(caps.shape[0]):
        if counts[s] > caps[s] or counts[s] < need[s]:
            ok = False
    weight = 0
    for a in range(gain.shape[0]):
        if covered[a]:
            value += gain[a]
            weight += cov_w[a]
    if weight < cov_need:
        ok = False
    for r in range(rows.shape[0]):
        total = 0
        for i in range(m):
            if mask[i]:
                total += rows[r, i]
        if total < row_lo[r]:
            ok = False
    return ok, value


@serial
def _flip(i, step, sel, counts, gsel, fam_cnt, fam_code, cov_cnt, row_val, src, ig_ptr, ig_grp, mu, ov_ptr, ov_fam,
          ov_code, ia_ptr, ia_asp, gain, nu, cov_w, rows, pen_ptr, pen_nbr, pen_val):
    """Select (``step`` 1) or unselect (−1) item i in the node's arrays; returns what changes in the
    penalties (as value), the covered gains and weight, and the open groups' and aspects' terms."""
    if step < 0:
        sel[i] = False
    dv = 0
    for k in range(pen_ptr[i], pen_ptr[i + 1]):
        if sel[pen_nbr[k]]:
            dv -= step * pen_val[k]
    sel[i] = step > 0
    counts[src[i]] += step
    dmu = 0.0
    for k in range(ig_ptr[i], ig_ptr[i + 1]):
        g = ig_grp[k]
        gsel[g] += step
        if gsel[g] == (1 if step > 0 else 0):
            dmu -= step * mu[g]
    for k in range(ov_ptr[i], ov_ptr[i + 1]):
        f = ov_fam[k]
        fam_cnt[f] += step
        fam_code[f] = ov_code[k] if fam_cnt[f] > 0 else -1
    dg, dw, dasp = 0, 0, 0.0
    for k in range(ia_ptr[i], ia_ptr[i + 1]):
        a = ia_asp[k]
        cov_cnt[a] += step
        if cov_cnt[a] == (1 if step > 0 else 0):
            dg += step * gain[a]
            dw += step * cov_w[a]
            dasp -= step * max(0.0, gain[a] - nu[a])
    for q in range(rows.shape[0]):
        row_val[q] += step * rows[q, i]
    return dv, dg, dw, dmu, dasp


@serial
def _search(w, t, lo, hi, klo, khi, src, caps, need, ig_ptr, ig_grp, mu_cap, ov_ptr, ov_fam, ov_code, n_fam,
            ia_ptr, ia_asp, gain, cov_w, cov_need, rows, row_lo, pen_ptr, pen_nbr, pen_val, hint, lam, mu, nu, r,
            node_limit, seconds):
    """The branch and bound (module docstring) at the root's multipliers ``lam``, ``mu``, ``nu`` and
    reduced values ``r`` (:func:`ctxselect.kernels.bnb_bound._root_multipliers`, ``_reduced``), for at
    most ``node_limit`` nodes and ``seconds`` (read on :func:`monotonic_ns` at the first node and every
    :data:`CLOCK_EVERY`): (mask, objective, status, found, nodes)."""
    started = monotonic_ns()
    m = w.shape[0]
    n_src = caps.shape[0]
    n_asp = gain.shape[0]
    n_rows = rows.shape[0]
    best_mask = np.zeros(m, dtype=np.bool_)
    n_groups = mu_cap.shape[0]
    hard = mu_cap == np.inf
    found, best = _evaluate(hint, w, t, lo, hi, klo, khi, src, caps, need, ig_ptr, ig_grp, mu_cap, ov_ptr,
                            ov_fam, ov_code, n_fam, ia_ptr, ia_asp, gain, cov_w, cov_need, rows, row_lo, pen_ptr,
                            pen_nbr, pen_val)
    if found:
        best_mask[:] = hint
    gain_f = gain.astype(np.float64)
    tf = t.astype(np.float64)
    order = np.argsort(-r, kind="mergesort")
    pos = np.empty(m, dtype=np.int64)
    for k in range(m):
        pos[order[k]] = k
    profit = r + lam * tf  # the reduced value before the budget's multiplier
    ratio = np.empty(m, dtype=np.float64)
    for i in range(m):
        ratio[i] = profit[i] / tf[i] if tf[i] > 0 else np.inf
    by_ratio = np.argsort(-ratio, kind="mergesort")
    # suffix sums over the branching order: what the undecided items can still add
    suf_t = np.zeros(m + 1, dtype=np.int64)
    suf_src = np.zeros((m + 1, n_src), dtype=np.int64)
    suf_row = np.zeros((n_rows, m + 1), dtype=np.int64)
    last_pos = np.full(n_asp, -1, dtype=np.int64)
    for d in range(m - 1, -1, -1):
        i = order[d]
        suf_t[d] = suf_t[d + 1] + t[i]
        suf_src[d, :] = suf_src[d + 1, :]
        suf_src[d, src[i]] += 1
        for q in range(n_rows):
            suf_row[q, d] = suf_row[q, d + 1] + max(rows[q, i], 0)
        for k in range(ia_ptr[i], ia_ptr[i + 1]):
            if last_pos[ia_asp[k]] < 0:
                last_pos[ia_asp[k]] = d
    # the state of a node
    sel = np.zeros(m, dtype=np.bool_)
    choice = np.zeros(m, dtype=np.int64)
    gsel = np.zeros(n_groups, dtype=np.int64)
    fam_code = np.full(n_fam, -1, dtype=np.int64)
    fam_cnt = np.zeros(n_fam, dtype=np.int64)
    cov_cnt = np.zeros(n_asp, dtype=np.int64)
    counts = np.zeros(n_src, dtype=np.int64)
    row_val = np.zeros(n_rows, dtype=np.int64)
    taken = np.zeros(n_src, dtype=np.int64)
    used = 0
    chosen = 0
    value = 0       # values less penalties of the selected
    gained = 0      # gains of the covered aspects
    weight = 0      # coverage weight of the covered aspects
    mu_open = mu.sum()
    asp_open = 0.0
    for a in range(n_asp):
        asp_open += max(0.0, gain_f[a] - nu[a])
    nodes = 0
    d = 0
    status = PROVEN
    while True:
        nodes += 1
        if nodes > node_limit:
            status = LIMIT
            break
        if nodes % CLOCK_EVERY == 1 and (monotonic_ns() - started) * 1e-9 > seconds:  # the first node too
            status = LIMIT
            break
        cut = used + suf_t[d] < lo or chosen + (m - d) < klo
        for s in range(n_src):
            if counts[s] + suf_src[d, s] < need[s]:
                cut = True
        for q in range(n_rows):
            if row_val[q] + suf_row[q, d] < row_lo[q]:
                cut = True
        if not cut and cov_need > 0:
            reach = weight
            for a in range(n_asp):
                if cov_cnt[a] == 0 and last_pos[a] >= d:
                    reach += cov_w[a]
            cut = reach < cov_need
        if not cut and found:  # the bound
            room = hi - used
            bound = float(value + gained) + lam * room + mu_open + asp_open
            taken[:] = 0
            left = khi - chosen
            for k in range(d, m):
                if left <= 0:
                    break
                i = order[k]
                if r[i] <= 0.0:
                    break
                s = src[i]
                if counts[s] + taken[s] >= caps[s] or t[i] > room:
                    continue
                if _blocked(i, gsel, hard, ig_ptr, ig_grp, fam_code, ov_ptr, ov_fam, ov_code):
                    continue
                taken[s] += 1
                bound += r[i]
                left -= 1
            if bound >= best + 0.5:  # the fractional knapsack at the node's own λ (caps dropped)
                frac = float(value + gained) + mu_open + asp_open
                left_t = room
                for k in range(m):
                    i = by_ratio[k]
                    if profit[i] <= 0.0:
                        break
                    if pos[i] < d or t[i] > room:
                        continue
                    if _blocked(i, gsel, hard, ig_ptr, ig_grp, fam_code, ov_ptr, ov_fam, ov_code):
                        continue
                    if t[i] <= left_t:
                        frac += profit[i]
                        left_t -= t[i]
                    else:
                        frac += profit[i] * left_t / tf[i]
                        break
                bound = min(bound, frac)
            cut = bound < best + 0.5
        if not cut and d == m:  # a leaf that meets every row
            if not found or value + gained > best:
                best = value + gained
                found = True
                best_mask[:] = sel
            cut = True
        if not cut:
            i = order[d]
            s = src[i]
            if (used + t[i] <= hi and chosen < khi and counts[s] < caps[s]
                    and not _blocked(i, gsel, hard, ig_ptr, ig_grp, fam_code, ov_ptr, ov_fam, ov_code)):
                dv, dg, dw, dmu, dasp = _flip(i, 1, sel, counts, gsel, fam_cnt, fam_code, cov_cnt, row_val, src,
                                              ig_ptr, ig_grp, mu, ov_ptr, ov_fam, ov_code, ia_ptr, ia_asp, gain, nu,
                                              cov_w, rows, pen_ptr, pen_nbr, pen_val)
                value += w[i] + dv
                used += t[i]
                chosen += 1
                gained += dg
                weight += dw
                mu_open += dmu
                asp_open += dasp
                choice[d] = 1
            else:
                choice[d] = 0
            d += 1
            continue
        # back up to the last inclusion and take its exclusion
        done = True
        while d > 0:
            d -= 1
            if choice[d] == 1:
                i = order[d]
                dv, dg, dw, dmu, dasp = _flip(i, -1, sel, counts, gsel, fam_cnt, fam_code, cov_cnt, row_val, src,
                                              ig_ptr, ig_grp, mu, ov_ptr, ov_fam, ov_code, ia_ptr, ia_asp, gain, nu,
                                              cov_w, rows, pen_ptr, pen_nbr, pen_val)
                value += dv - w[i]
                used -= t[i]
                chosen -= 1
                gained += dg
                weight += dw
                mu_open += dmu
                asp_open += dasp
                choice[d] = 0
                d += 1
                done = False
                break
        if done:
            break
    if status == PROVEN and not found:
        status = INFEASIBLE
    return best_mask, best, status, found, nodes
