"""Jitted kernels of the greedy selectors: arrays in, arrays out.

The hard constraints of a selection that grows one chunk at a time (eligibility, the budget,
per-source maximums, the chunk cap, agreement on the hard conflict fields, one version per
document, hard partners, one chunk per near-duplicate group), the one marginal gain, and the four
baselines over them: by relevance (greedy), by relevance stopping at the first chunk that does not
fit (top-k), by marginal gain per token with lazy re-evaluation (density), and maximal marginal
relevance (mmr). Their plain-Python twins are in ``tests/naive/baselines.py``.

Sums over aspects are taken in NumPy's order (:func:`_pairwise_sum`), so every gain, and with it
every choice, is the same to the last bit as NumPy's ``sum`` would make it.

The state of a growing selection is a tuple of arrays (:func:`_new_state`):
``tally`` [tokens used, chunks selected], ``selected``, ``blocked``, ``source_count``, ``field_set``
(a hard field already holds a value: the chunks that disagree are blocked), ``doc_set`` (a document
already holds a version), and the chunks of each document as CSR (``doc_ptr``, ``doc_members``).
"""

from __future__ import annotations

import numpy as np

from ctxselect._config import serial


@serial
def _block_sum(a, lo, n):
    """Σ a[lo:lo + n] for n ≤ 128 in NumPy's order: one by one below 8 values, else 8 partial
    sums added pairwise, then the rest one by one."""
    if n < 8:
        res = 0.0
        for k in range(n):
            res += a[lo + k]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    k = 8
    end = n - n % 8
    while k < end:
        r0 += a[lo + k]
        r1 += a[lo + k + 1]
        r2 += a[lo + k + 2]
        r3 += a[lo + k + 3]
        r4 += a[lo + k + 4]
        r5 += a[lo + k + 5]
        r6 += a[lo + k + 6]
        r7 += a[lo + k + 7]
        k += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while k < n:
        res += a[lo + k]
        k += 1
    return res


@serial
def _pairwise_sum(a, lo, n):
    """Σ a[lo:lo + n], added in the order of NumPy's pairwise summation (:func:`_block_sum` up to
    128 values, else the two halves, split at a multiple of 8, summed apart and added), so the
    result equals ``a[lo:lo + n].sum()`` bit for bit. The halving runs on an explicit stack: Numba
    cannot load a recursive function from its disk cache."""
    if n <= 128:
        return _block_sum(a, lo, n)
    los = np.empty(128, dtype=np.int64)  # pending nodes (start, length, children done)
    lens = np.empty(128, dtype=np.int64)
    stage = np.empty(128, dtype=np.int64)
    values = np.empty(128, dtype=np.float64)  # sums of finished nodes, left before right
    top, done = 0, 0
    los[0], lens[0], stage[0] = lo, n, 0
    top = 1
    while top > 0:
        node = top - 1
        start, length = los[node], lens[node]
        half = length // 2
        half -= half % 8
        if length <= 128:
            values[done] = _block_sum(a, start, length)
            done += 1
            top -= 1
        elif stage[node] == 0:
            stage[node] = 1
            los[top], lens[top], stage[top] = start, half, 0
            top += 1
        elif stage[node] == 1:
            stage[node] = 2
            los[top], lens[top], stage[top] = start + half, length - half, 0
            top += 1
        else:
            values[done - 2] = values[done - 2] + values[done - 1]
            done -= 1
            top -= 1
    return values[0]


@serial
def _gain(i, value, penalty, aspect_gain, covers, covered, scratch):
    """THE marginal gain of adding chunk i: its value, less its pair penalties with the selected
    chunks (``penalty``), plus what the aspects it covers that ``covered`` does not add."""
    gain = value[i] - penalty[i]
    if aspect_gain.shape[0]:
        m = 0
        for a in range(aspect_gain.shape[0]):
            if covers[i, a] and not covered[a]:
                scratch[m] = aspect_gain[a]
                m += 1
        gain += _pairwise_sum(scratch, 0, m)
    return gain


@serial
def _gains(rows, value, penalty, aspect_gain, covers, covered):
    """:func:`_gain` of each chunk of ``rows``."""
    out = np.empty(rows.shape[0], dtype=np.float64)
    scratch = np.empty(aspect_gain.shape[0], dtype=np.float64)
    for k in range(rows.shape[0]):
        out[k] = _gain(rows[k], value, penalty, aspect_gain, covers, covered, scratch)
    return out


@serial
def _new_state(eligible, n_sources, n_fields, doc):
    """An empty selection: nothing selected, the ineligible chunks blocked."""
    n = eligible.shape[0]
    n_docs = 0
    for i in range(n):
        if doc[i] + 1 > n_docs:
            n_docs = doc[i] + 1
    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    for i in range(n):
        if doc[i] >= 0:
            doc_ptr[doc[i] + 1] += 1
    for d in range(n_docs):
        doc_ptr[d + 1] += doc_ptr[d]
    fill = doc_ptr[:-1].copy()
    doc_members = np.empty(doc_ptr[n_docs], dtype=np.int64)
    for i in range(n):
        if doc[i] >= 0:
            doc_members[fill[doc[i]]] = i
            fill[doc[i]] += 1
    tally = np.zeros(2, dtype=np.int64)
    return (tally, np.zeros(n, dtype=np.bool_), ~eligible, np.zeros(n_sources, dtype=np.int64),
            np.zeros(n_fields, dtype=np.bool_), np.zeros(n_docs, dtype=np.bool_), doc_ptr, doc_members)


@serial
def _fits(i, state, tokens, source, source_max, capacity, max_chunks):
    """Whether chunk i can join the selection without breaking a hard constraint."""
    tally, selected, blocked, source_count = state[0], state[1], state[2], state[3]
    s = source[i]
    return (not blocked[i] and not selected[i] and tally[0] + tokens[i] <= capacity
            and source_count[s] < source_max[s] and tally[1] < max_chunks)


@serial
def _add(i, state, tokens, source, field_values, hard_fields, version_conflicts, doc, version,
         partner_ptr, partner_nb, group_of, group_ptr, group_members):
    """Select chunk i (it fits) and block what may no longer join it: chunks that disagree with it
    on a hard field or are another version of its document (swept once per field and document:
    later chunks agree with the first, or they were blocked), its hard partners, its near-duplicate
    group."""
    tally, selected, blocked, source_count, field_set, doc_set, doc_ptr, doc_members = state
    selected[i] = True
    tally[0] += tokens[i]
    tally[1] += 1
    source_count[source[i]] += 1
    for k in range(hard_fields.shape[0]):
        f = hard_fields[k]
        v = field_values[i, f]
        if v >= 0 and not field_set[k]:
            field_set[k] = True
            for j in range(field_values.shape[0]):
                c = field_values[j, f]
                if c >= 0 and c != v:
                    blocked[j] = True
    d = doc[i]
    if version_conflicts and d >= 0 and version[i] >= 0 and not doc_set[d]:
        doc_set[d] = True
        for q in range(doc_ptr[d], doc_ptr[d + 1]):
            j = doc_members[q]
            if version[j] >= 0 and version[j] != version[i]:
                blocked[j] = True
    for q in range(partner_ptr[i], partner_ptr[i + 1]):
        blocked[partner_nb[q]] = True
    g = group_of[i]
    if g >= 0:
        for q in range(group_ptr[g], group_ptr[g + 1]):
            blocked[group_members[q]] = True


@serial
def _smallest(tokens, eligible, capacity):
    """Tokens of the smallest eligible chunk (capacity + 1 when none)."""
    best = -1
    for i in range(tokens.shape[0]):
        if eligible[i] and (best < 0 or tokens[i] < best):
            best = tokens[i]
    return best if best >= 0 else capacity + 1


@serial
def _greedy(order, tokens, source, source_max, capacity, max_chunks, eligible, field_values, hard_fields,
            version_conflicts, doc, version, partner_ptr, partner_nb, group_of, group_ptr, group_members, stop_at_misfit):
    """Chunks in ``order``, each taken when it fits. ``stop_at_misfit`` (top-k): stop at the first
    unblocked chunk over the remaining budget, and return its rank in ``order`` (else -1)."""
    state = _new_state(eligible, source_max.shape[0], hard_fields.shape[0], doc)
    tally, blocked = state[0], state[2]
    smallest = _smallest(tokens, eligible, capacity)
    for rank in range(order.shape[0]):
        i = order[rank]
        if stop_at_misfit:
            if blocked[i]:
                continue
            if tally[0] + tokens[i] > capacity:
                return state[1], rank
        elif capacity - tally[0] < smallest:
            break  # nothing fits any more
        if _fits(i, state, tokens, source, source_max, capacity, max_chunks):
            _add(i, state, tokens, source, field_values, hard_fields, version_conflicts, doc, version,
                 partner_ptr, partner_nb, group_of, group_ptr, group_members)
    return state[1], -1


@serial
def _heap_less(keys, idx, a, b):
    return keys[a] < keys[b] or (keys[a] == keys[b] and idx[a] < idx[b])


@serial
def _sift_down(keys, idx, size, pos):
    while True:
        child = 2 * pos + 1
        if child >= size:
            return
        if child + 1 < size and _heap_less(keys, idx, child + 1, child):
            child += 1
        if not _heap_less(keys, idx, child, pos):
            return
        keys[pos], keys[child] = keys[child], keys[pos]
        idx[pos], idx[child] = idx[child], idx[pos]
        pos = child


@serial
def _sift_up(keys, idx, pos):
    while pos > 0:
        parent = (pos - 1) // 2
        if not _heap_less(keys, idx, pos, parent):
            return
        keys[pos], keys[parent] = keys[parent], keys[pos]
        idx[pos], idx[parent] = idx[parent], idx[pos]
        pos = parent


@serial
def _density(value, aspect_gain, covers, pen_ptr, pen_nb, pen_w, tokens, source, source_max, capacity,
             max_chunks, eligible, field_values, hard_fields, version_conflicts, doc, version, partner_ptr,
             partner_nb, group_of, group_ptr, group_members):
    """Marginal gain per token, highest first (ties: lower position), each chunk's gain
    re-evaluated when it comes up and re-queued when it fell below the next best; stops when the
    best gain is not positive. Returns the selection, the chunk that stopped it (-1) with its gain,
    and the chunks still queued then."""
    n = value.shape[0]
    n_aspects = aspect_gain.shape[0]
    state = _new_state(eligible, source_max.shape[0], hard_fields.shape[0], doc)
    tally = state[0]
    covered = np.zeros(n_aspects, dtype=np.bool_)
    penalty = np.zeros(n, dtype=np.float64)
    scratch = np.empty(n_aspects, dtype=np.float64)
    keys = np.empty(n, dtype=np.float64)
    idx = np.empty(n, dtype=np.int64)
    size = 0
    for i in range(n):  # every first gain (nothing selected: every aspect counts)
        if eligible[i]:
            first = value[i]
            if n_aspects:
                for a in range(n_aspects):
                    scratch[a] = aspect_gain[a] if covers[i, a] else 0.0
                first = first + _pairwise_sum(scratch, 0, n_aspects)
            keys[size] = -first / tokens[i]
            idx[size] = i
            size += 1
    for pos in range(size // 2 - 1, -1, -1):
        _sift_down(keys, idx, size, pos)
    smallest = _smallest(tokens, eligible, capacity)
    stop, stop_gain = -1, 0.0
    while size > 0 and capacity - tally[0] >= smallest:
        i = idx[0]
        size -= 1
        keys[0], idx[0] = keys[size], idx[size]
        _sift_down(keys, idx, size, 0)
        if not _fits(i, state, tokens, source, source_max, capacity, max_chunks):
            continue
        gain = _gain(i, value, penalty, aspect_gain, covers, covered, scratch)
        key = -gain / tokens[i]
        if size > 0 and key > keys[0] + 1e-15:  # gains only shrink: re-queue with the fresh value
            keys[size], idx[size] = key, i
            _sift_up(keys, idx, size)
            size += 1
            continue
        if gain <= 0:
            stop, stop_gain = i, gain
            break
        _add(i, state, tokens, source, field_values, hard_fields, version_conflicts, doc, version,
             partner_ptr, partner_nb, group_of, group_ptr, group_members)
        for a in range(n_aspects):
            if covers[i, a]:
                covered[a] = True
        for q in range(pen_ptr[i], pen_ptr[i + 1]):
            penalty[pen_nb[q]] += pen_w[q]
    return state[1], stop, stop_gain, idx[:size].copy()


@serial
def _mmr(lam, relevance, sim_ptr, sim_nb, sim_w, tokens, source, source_max, capacity, max_chunks, eligible,
         field_values, hard_fields, version_conflicts, doc, version, partner_ptr, partner_nb, group_of,
         group_ptr, group_members):
    """Maximal marginal relevance: the available chunk of highest λ·relevance − (1 − λ)·(highest
    similarity to a selected chunk), the first of equals, while anything fits."""
    n = relevance.shape[0]
    state = _new_state(eligible, source_max.shape[0], hard_fields.shape[0], doc)
    tally, selected, blocked, source_count = state[0], state[1], state[2], state[3]
    max_sim = np.zeros(n, dtype=np.float64)
    rest = 1 - lam
    while tally[1] < max_chunks:
        best, best_score = -1, 0.0
        room = capacity - tally[0]
        for j in range(n):
            s = source[j]
            if (not blocked[j] and not selected[j] and tokens[j] <= room
                    and source_count[s] < source_max[s]):
                score = lam * relevance[j] - rest * max_sim[j]
                if best < 0 or score > best_score:
                    best, best_score = j, score
        if best < 0:
            break
        _add(best, state, tokens, source, field_values, hard_fields, version_conflicts, doc, version,
             partner_ptr, partner_nb, group_of, group_ptr, group_members)
        for q in range(sim_ptr[best], sim_ptr[best + 1]):
            w = np.float64(sim_w[q])
            if w > max_sim[sim_nb[q]]:
                max_sim[sim_nb[q]] = w
    return selected
