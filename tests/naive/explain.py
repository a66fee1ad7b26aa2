"""Plain-Python twin of selection/explain.exclusion_reasons: the reason of every chunk left out,
tested one chunk at a time in the docstring's order (the library decides every chunk's reason at
once with NumPy, then formats the messages)."""

from __future__ import annotations

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.selection.constraints import pairwise_partners
from ctxselect.selection.explain import _disagreeing_selected, describe_conflict
from ctxselect.selection.problem import Problem, adjacency
from tests.naive.baselines import naive_marginal_gain
from tests.naive.versions import naive_superseded_versions


def naive_exclusion_reasons(problem: Problem, mask: np.ndarray, *, enforce_gate: bool,
                      notes: dict[int, str] | None = None, ceiling: bool | None = None) -> dict[str, str]:
    """id -> why the chunk is not in the selection ``mask``.

    The first reason that applies wins: ineligible; superseded by or conflicting with a selected
    chunk; near-duplicate of a selected chunk; the selector's own note; source cap; chunk cap;
    does not fit; redundant with a selected chunk; adds no value; would break the gate; lower value.
    ``ceiling``: the selection kept to the gate's utilization ceiling (default: ``enforce_gate``).
    """
    packed = problem.packed
    reqs = packed.requirements
    ids = packed.ids
    notes = notes or {}
    out: dict[str, str] = {}

    con = problem.gate_conflicts
    forbid_all = enforce_gate and reqs.gate.max_contradiction_density <= 0  # the gate forbids what κ counts
    fields = range(len(packed.field_names)) if forbid_all else problem.hard_fields
    partner_of = _disagreeing_selected(packed, mask, fields)
    extra = (con.i, con.j) if forbid_all else None
    pairwise = pairwise_partners(problem, fields, extra)
    superseded_by = naive_superseded_versions(problem.packed)
    mate_of: dict[int, int] = {}  # chunk -> the first selected member of its near-duplicate group
    for members in problem.groups:
        chosen_members = members[mask[members]]
        if len(chosen_members):
            for m in members.tolist():
                mate_of[m] = int(chosen_members[0])

    used = int(packed.tokens[mask].sum())
    capacity = problem.capacity(enforce_gate if ceiling is None else ceiling)
    room = "in the budget" if capacity >= packed.budget else (
        f"under the gate's utilization ceiling ({capacity} of the {packed.budget}-token budget)")
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    n_selected = int(mask.sum())
    red = problem.signals.redundancy
    r_ptr, r_nb, r_w = adjacency(problem.n, red.i, red.j, red.weight)
    # each chunk's penalties with the selected chunks, without a second copy of the pair list
    pi, pj, pw = problem.pair_i, problem.pair_j, problem.pair_penalty
    to_selected = mask[pi]
    penalty = np.bincount(pi[mask[pj]], weights=pw[mask[pj]], minlength=problem.n).astype(np.float64)
    penalty += np.bincount(pj[to_selected], weights=pw[to_selected], minlength=problem.n)
    del to_selected
    covered = problem.covers[mask].any(axis=0) if problem.aspect_gain.size else np.zeros(0, bool)
    freshness = problem.signals.freshness
    fresh_sum = float((packed.relevance[mask] * freshness[mask]).sum())
    fresh_weight = float(packed.relevance[mask].sum())

    # the vectorisable tests, once for all chunks (a loop of numpy scalar reads cost ~4 µs a chunk)
    partner_list = partner_of.tolist()
    src_full = (counts[packed.source] >= packed.source_max[packed.source]).tolist()
    too_big = (used + packed.tokens > capacity).tolist()
    has_selected_nb = np.zeros(problem.n, dtype=bool)
    has_selected_nb[red.i[mask[red.j]]] = True
    has_selected_nb[red.j[mask[red.i]]] = True
    has_selected_nb = has_selected_nb.tolist()
    chunk_cap = reqs.max_chunks is not None and n_selected >= reqs.max_chunks
    tokens, source_of = packed.tokens.tolist(), packed.source.tolist()

    for i in np.flatnonzero(~mask).tolist():
        cid = ids[i]
        if i in problem.ineligible_reason:
            out[cid] = problem.ineligible_reason[i]
            continue
        newer = next((k for k in superseded_by.get(i, ()) if mask[k]), None) if i in superseded_by else None
        if newer is not None:
            out[cid] = f"superseded by `{ids[newer]}` ({describe_conflict(problem, i, newer)})"
            continue
        partner = (partner_list[i] if partner_list[i] >= 0
                   else next((j for j in pairwise[i] if mask[j]), None) if i in pairwise else None)
        if partner is not None:
            out[cid] = f"conflicts with `{ids[partner]}` ({describe_conflict(problem, i, partner)})"
            continue
        mate = mate_of.get(i)
        if mate is not None:
            out[cid] = f"near-duplicate of `{ids[mate]}`"
            continue
        if i in notes:
            out[cid] = notes[i]
            continue
        if src_full[i]:
            src = source_of[i]
            out[cid] = f"source cap: `{packed.source_names[src]}` already has {counts[src]} chunk(s)"
            continue
        if chunk_cap:
            out[cid] = f"chunk cap: {reqs.max_chunks} chunk(s) already selected"
            continue
        if too_big[i]:
            out[cid] = f"does not fit: {tokens[i]} tokens, {capacity - used} left {room}"
            continue
        if has_selected_nb[i]:
            nb = slice(r_ptr[i], r_ptr[i + 1])
            sel = mask[r_nb[nb]]
            k = int(np.argmax(np.where(sel, r_w[nb], -1.0)))
            out[cid] = f"redundant with `{ids[r_nb[nb][k]]}` (similarity {r_w[nb][k]:.2f})"
            continue
        gain = naive_marginal_gain(problem, i, covered, penalty)
        if gain <= 0:
            out[cid] = f"adds no value: marginal gain {gain:.3f}"
        elif enforce_gate and fresh_weight + packed.relevance[i] > 0 and (
                (fresh_sum + packed.relevance[i] * freshness[i]) / (fresh_weight + packed.relevance[i])
                < reqs.gate.min_freshness - TOLERANCE):
            out[cid] = (f"would break the gate: freshness would fall below {reqs.gate.min_freshness:.2f} "
                        f"(this chunk's freshness is {freshness[i]:.2f})")
        elif enforce_gate:
            out[cid] = f"left out by the optimum under the gate: marginal gain {gain:.3f} alone"
        else:
            out[cid] = f"lower value than the selected chunks: marginal gain {gain:.3f}"
    return out
