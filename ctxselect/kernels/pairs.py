"""Jitted kernels that see only arrays: freshness, threshold extraction, exact pairs, clusters,
the check of pairs an integer product screened (kernels/products.py).

Parallel kernels count per row first, turn the counts into offsets with a serial prefix sum, then
fill: each row writes only its own slice of the output, so no two threads touch the same memory.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ctxselect._config import parallel_sums, serial, serial_sums, serial_twin


@serial
def _freshness(decay, age_days, has_timestamp, valid_now, missing_value, zero_outside_window):
    """f_i = e^(-decay_i * age_i); ``missing_value`` for undated chunks; 0 outside the validity
    window when ``zero_outside_window``."""
    n = decay.shape[0]
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        if zero_outside_window and not valid_now[i]:
            out[i] = 0.0
        elif has_timestamp[i]:
            out[i] = math.exp(-decay[i] * age_days[i])
        else:
            out[i] = missing_value
    return out


@serial
def _upper_pairs_above(sim, row_offset, col_offset, threshold):
    """Pairs (i, j), j > i, of a similarity tile with value >= threshold, row-major order.

    ``sim[r, c]`` is the similarity of chunk ``row_offset + r`` and chunk ``col_offset + c``.
    Two passes: a branch-free count per row (it vectorises), then the fill. Serial on purpose:
    it runs right after a multi-threaded BLAS product, and a parallel kernel there waits for
    BLAS's spinning threads (measured 6 ms instead of 0.2 ms per call at n = 100, and 20 % slower
    at n = 20,000); a one-pass version with a growing output was 3x slower (no vectorisation).
    """
    rows, cols = sim.shape
    offsets = np.zeros(rows + 1, dtype=np.int64)
    for r in range(rows):
        count = 0
        for c in range(max(0, row_offset + r + 1 - col_offset), cols):
            count += sim[r, c] >= threshold
        offsets[r + 1] = offsets[r] + count
    total = offsets[rows]
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    out_w = np.empty(total, dtype=np.float64)
    for r in range(rows):
        if offsets[r + 1] == offsets[r]:
            continue
        i = row_offset + r
        k = offsets[r]
        for c in range(max(0, i + 1 - col_offset), cols):
            value = sim[r, c]
            if value >= threshold:
                out_i[k] = i
                out_j[k] = col_offset + c
                out_w[k] = min(max(value, 0.0), 1.0)
                k += 1
    return out_i, out_j, out_w


@serial
def _row_pairs_above(sim, rows, key, limit, threshold):
    """Pairs (min, max) of a tile of ``rows`` against every row with value >= threshold, row-major
    order, where the column's ``key`` exceeds the row's ``limit`` (never a row with itself).

    ``sim[r, c]`` is the similarity of chunk ``rows[r]`` and chunk ``c``. Two passes as in
    :func:`_upper_pairs_above` (NumPy's mask, nonzero and gathers took 32 of 100 ms at 20,000 x 384).
    """
    count_rows, cols = sim.shape
    offsets = np.zeros(count_rows + 1, dtype=np.int64)
    for r in range(count_rows):
        count = 0
        for c in range(cols):
            count += (sim[r, c] >= threshold) & (key[c] > limit[r])
        offsets[r + 1] = offsets[r] + count
    total = offsets[count_rows]
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    out_w = np.empty(total, dtype=np.float64)
    k = 0
    for r in range(count_rows):
        if offsets[r + 1] == offsets[r]:
            continue
        a = rows[r]
        for c in range(cols):
            value = sim[r, c]
            if value >= threshold and key[c] > limit[r] and c != a:
                out_i[k] = min(a, c)
                out_j[k] = max(a, c)
                out_w[k] = min(max(value, 0.0), 1.0)
                k += 1
    return out_i[:k], out_j[:k], out_w[:k]


@serial
def _set_bits(masks, count):
    """How many bits are set in the first ``count`` rows of ``masks`` (uint64 words)."""
    total = 0
    for r in range(count):
        for w in range(masks.shape[1]):
            x = masks[r, w]
            while x:
                x &= x - np.uint64(1)
                total += 1
    return total


@serial
def _upper_bits(masks, count, row_offset, col_base, lo, hi):
    """Pairs (i, j), j > i, of a bit tile (:func:`~ctxselect.kernels.products._int8_masks`) whose bit is set,
    row-major order: bit b of ``masks[r, w]`` is chunk ``row_offset + r`` against chunk ``col_base + 64·w + b``,
    and only the columns ``lo .. hi`` count; the rows past ``count`` are not read. As
    :func:`_upper_pairs_above` takes them from a tile of values, in the same order."""
    total = _set_bits(masks, count)
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    k = 0
    for r in range(count):
        i = row_offset + r
        for w in range(masks.shape[1]):
            x = masks[r, w]
            for b in range(64 if x else 0):
                c = col_base + 64 * w + b
                if (x >> np.uint64(b)) & np.uint64(1) and c > i and lo <= c < hi:
                    out_i[k] = i
                    out_j[k] = c
                    k += 1
    return out_i[:k], out_j[:k]


@serial
def _row_bits(masks, rows, key, limit, col_base, lo, hi):
    """Pairs (min, max) of a bit tile of ``rows`` against every row whose bit is set (bit b of ``masks[r, w]``:
    chunk ``rows[r]`` against chunk ``col_base + 64·w + b``, only the columns ``lo .. hi``), where the column's
    ``key`` exceeds the row's ``limit`` (never a row with itself), row-major order: as :func:`_row_pairs_above`
    takes them from a tile of values, in the same order."""
    total = _set_bits(masks, rows.shape[0])
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    k = 0
    for r in range(rows.shape[0]):
        a = rows[r]
        for w in range(masks.shape[1]):
            x = masks[r, w]
            for b in range(64 if x else 0):
                c = col_base + 64 * w + b
                if (x >> np.uint64(b)) & np.uint64(1) and lo <= c < hi and key[c] > limit[r] and c != a:
                    out_i[k] = min(a, c)
                    out_j[k] = max(a, c)
                    k += 1
    return out_i[:k], out_j[:k]


@serial
def _differing_code_pairs(codes, group):
    """Pairs (i < j) where both codes are present (>= 0), the codes differ, and — when ``group``
    holds codes — both chunks share the same group code (>= 0). Row-major order.

    Time O(n log n + pairs), never O(n²) when few pairs differ: the present chunks are ordered by
    (group, position); for each element, ``skip`` points to the next element of its group whose
    code differs from its own. Scanning row i's later group members, a member with i's code jumps
    straight to the next member with another code — which is a pair — so each row costs at most
    twice its pairs plus one step.
    """
    n = codes.shape[0]
    use_group = group.shape[0] == n
    m = 0
    for i in range(n):
        if codes[i] >= 0 and (not use_group or group[i] >= 0):
            m += 1
    key = np.empty(m, dtype=np.int64)
    k = 0
    for i in range(n):
        if codes[i] >= 0 and (not use_group or group[i] >= 0):
            key[k] = (group[i] * n + i) if use_group else i
            k += 1
    order = np.argsort(key)  # (group, position) order: members of a group are contiguous
    members = np.empty(m, dtype=np.int64)
    for k in range(m):
        members[k] = key[order[k]] % n if use_group else key[order[k]]
    group_end = np.empty(m, dtype=np.int64)
    skip = np.empty(m, dtype=np.int64)
    rank = np.full(n, -1, dtype=np.int64)
    for k in range(m - 1, -1, -1):
        i = members[k]
        rank[i] = k
        last = k == m - 1 or (use_group and group[members[k + 1]] != group[i])
        group_end[k] = k + 1 if last else group_end[k + 1]
        if last:
            skip[k] = k + 1
        elif codes[members[k + 1]] != codes[i]:
            skip[k] = k + 1
        else:
            skip[k] = skip[k + 1]
    counts = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        r = rank[i]
        if r < 0:
            continue
        c = 0
        p = r + 1
        while p < group_end[r]:
            if codes[members[p]] != codes[i]:
                c += 1
                p += 1
            else:
                p = skip[p]
        counts[i + 1] = c
    for i in range(n):
        counts[i + 1] += counts[i]
    total = counts[n]
    out_i = np.empty(total, dtype=np.int64)
    out_j = np.empty(total, dtype=np.int64)
    for i in range(n):
        r = rank[i]
        if r < 0:
            continue
        w = counts[i]
        p = r + 1
        while p < group_end[r]:
            j = members[p]
            if codes[j] != codes[i]:
                out_i[w] = i
                out_j[w] = j
                w += 1
                p += 1
            else:
                p = skip[p]
    return out_i, out_j


@serial
def _components(n, pair_i, pair_j):
    """Connected components of the graph on n nodes with the given edges (union-find).

    Labels are 0..C-1, numbered in order of each component's smallest node.
    """
    parent = np.arange(n, dtype=np.int64)
    for e in range(pair_i.shape[0]):
        a = pair_i[e]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        b = pair_j[e]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    labels = np.empty(n, dtype=np.int64)
    root_label = np.full(n, -1, dtype=np.int64)
    next_label = 0
    for i in range(n):
        r = i
        while parent[r] != r:
            r = parent[r]
        if root_label[r] < 0:
            root_label[r] = next_label
            next_label += 1
        labels[i] = root_label[r]
    return labels


@parallel_sums
def _check_pairs(unit, i, j, cut):
    """The pairs (i[k], j[k]) whose cosine of float32 unit rows, summed in float64 (in SIMD lanes: the
    last bits may differ from a sum in component order), reaches ``cut``: (i, j, weight clipped to
    [0, 1]), in their given order. The pairs in parallel, each writing its own slots."""
    count = i.shape[0]
    keep = np.empty(count, dtype=np.bool_)
    w = np.empty(count, dtype=np.float64)
    d = unit.shape[1]
    for k in prange(count):
        a, b = unit[i[k]], unit[j[k]]
        s = 0.0
        for c in range(d):
            s += np.float64(a[c]) * np.float64(b[c])
        keep[k] = s >= cut
        w[k] = min(max(s, 0.0), 1.0)
    return i[keep], j[keep], w[keep]


_check_pairs_serial = serial_twin(_check_pairs, "_check_pairs_serial", serial_sums)
