"""A reason for every chunk a selection left out."""

from __future__ import annotations

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.features.contradictions import pair_conflicts, stated_figures
from ctxselect.selection.constraints import pairwise_partners
from ctxselect.selection.corroboration import _numbers
from ctxselect.selection.problem import Problem, adjacency, marginal_gains
from ctxselect.text.words import numbers_in

__all__ = ["exclusion_reasons", "describe_conflict", "unresolved_entries"]


def _listed(values) -> str:
    return _numbers(sorted(values)) or "-"


def describe_conflict(problem: Problem, i: int, j: int) -> str:
    """What chunks i and j disagree on: fields, versions, or numbers in near-duplicate texts.

    Formatted by :mod:`ctxselect.features.contradictions.reasons`' helpers, so nothing of a chunk outside the allowed
    scopes is quoted (its id and the field only)."""
    packed = problem.packed
    parts = [why for why, _ in pair_conflicts(packed, i, j)]
    claims = (problem.signals.claim_conflicts or {}).get((min(i, j), max(i, j)), [])
    for ca, cb in claims:
        mine, theirs = (ca, cb) if i < j else (cb, ca)
        said, other, withheld = stated_figures(packed, i, j, repr(mine.raw), repr(theirs.raw))
        parts.append(f"states {said} where it states {other}{withheld}")
    if not parts:
        numbers_i, numbers_j = numbers_in(packed.candidates[i].text), numbers_in(packed.candidates[j].text)
        only_i, only_j = numbers_i - numbers_j, numbers_j - numbers_i
        said, other, withheld = stated_figures(packed, i, j, _listed(only_i), _listed(only_j))
        parts.append(f"near-duplicate text states {said} where it states {other}{withheld}")
    return "; ".join(parts)


def _disagreeing_selected(packed, mask: np.ndarray, fields) -> np.ndarray:
    """For every chunk, a selected chunk it disagrees with on one of ``fields`` or whose document
    version differs (-1 when none), vectorised per field."""
    partner = np.full(packed.n, -1, dtype=np.int64)
    chosen = np.flatnonzero(mask)
    for f in fields:
        column = packed.field_values[:, f]
        values, first = np.unique(column[chosen], return_index=True)
        keep = values >= 0
        values, reps = values[keep], chosen[first[keep]]
        if len(values) == 0:
            continue
        present = (column >= 0) & (partner < 0)
        other = np.where(column == values[0], reps[1] if len(values) > 1 else -1, reps[0])
        partner = np.where(present, other, partner)
    if packed.requirements.version_conflicts:
        # the first selected chunk of another version of the same document: per document, the
        # first selected chunk (c1, version v1) and the first of a version other than v1 (c2)
        versioned = (packed.doc >= 0) & (packed.version >= 0)
        first: dict[int, tuple[int, int]] = {}
        second: dict[int, int] = {}
        for c in chosen[versioned[chosen]].tolist():
            d, v = int(packed.doc[c]), int(packed.version[c])
            if d not in first:
                first[d] = (c, v)
            elif d not in second and v != first[d][1]:
                second[d] = c
        if first:
            for k in np.flatnonzero(versioned & (partner < 0)).tolist():
                d = int(packed.doc[k])
                if d in first:
                    c1, v1 = first[d]
                    other = c1 if packed.version[k] != v1 else second.get(d, -1)
                    if other >= 0:
                        partner[k] = other
    return partner


def exclusion_reasons(problem: Problem, mask: np.ndarray, *, enforce_gate: bool,
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
    superseded_by = problem.superseded_by
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
    left_out = np.flatnonzero(~mask)
    gain_of = np.zeros(problem.n)
    gain_of[left_out] = marginal_gains(problem, left_out, covered, penalty)
    gain_of = gain_of.tolist()
    tokens, source_of = packed.tokens.tolist(), packed.source.tolist()

    for i in left_out.tolist():
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
        gain = gain_of[i]
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


def unresolved_entries(problem: Problem, mask: np.ndarray) -> list[dict]:
    """Each conflict neither evidence nor source precedence decided, for the caller to pass on
    ("sources disagree"): both chunk ids, what each states (withheld for a chunk outside the
    scopes), the outcome and which of the two the selection holds. One entry per pair."""
    ids, out, seen = problem.packed.ids, [], set()
    for c in problem.unresolved:
        if (c.i, c.j) in seen:
            continue
        seen.add((c.i, c.j))
        out.append({"ids": [ids[c.i], ids[c.j]], "values": list(c.values), "outcome": c.outcome,
                    "selected": [ids[k] for k in (c.i, c.j) if mask[k]]})
    return out

