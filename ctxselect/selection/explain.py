"""A reason for every chunk a selection left out."""

from __future__ import annotations

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.features.contradictions import pair_conflicts, stated_figures
from ctxselect.selection.constraints import group_members, pairwise_partners
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


def _describe_pairs(problem: Problem, rows: list[int], partners: list[int]) -> list[str]:
    """:func:`describe_conflict` of each pair (rows[k], partners[k]), formatted once per distinct
    field values, documents and versions of the two chunks where that is all it reads: both chunks
    admissible (no id in the reason), no claim conflict between them, and a field or version reason
    (else the numbers of the texts)."""
    packed = problem.packed
    claims = problem.signals.claim_conflicts or {}
    a, b = np.asarray(rows, dtype=np.int64), np.asarray(partners, dtype=np.int64)
    shared = packed.admissible[a] & packed.admissible[b]
    if claims:
        shared &= np.array([(min(i, j), max(i, j)) not in claims for i, j in zip(rows, partners)], dtype=bool)
    out = [""] * len(rows)
    alone = (~shared).nonzero()[0].tolist()
    if shared.any():
        at = shared.nonzero()[0]
        a, b = a[at], b[at]
        keys = np.column_stack([packed.field_values[a], packed.field_values[b], packed.doc[a], packed.doc[b],
                                packed.version[a], packed.version[b]]).tolist()
        said: dict[tuple, str | None] = {}  # None: no field or version reason, the texts' numbers
        for k, key in zip(at.tolist(), map(tuple, keys)):
            if key not in said:
                parts = [why for why, _ in pair_conflicts(packed, rows[k], partners[k])]
                said[key] = "; ".join(parts) if parts else None
            if said[key] is None:
                alone.append(k)
            else:
                out[k] = said[key]
    for k in alone:
        out[k] = describe_conflict(problem, rows[k], partners[k])
    return out


def _first_selected_mates(problem: Problem, mask: np.ndarray) -> dict[int, int]:
    """Chunk -> the first selected member of its near-duplicate group (a later group wins): a loop
    over a few groups, one pass over their members as arrays for many."""
    members, number = group_members(problem)
    if len(problem.groups) <= _FEW_GROUPS:  # a loop over the members, group by group
        group_of, member_of, chosen = number.tolist(), members.tolist(), mask[members].tolist()
        first: dict[int, int] = {}
        for g, c, taken in zip(group_of, member_of, chosen):
            if taken and g not in first:
                first[g] = c
        return {c: first[g] for g, c in zip(group_of, member_of) if g in first}
    chosen = mask[members].nonzero()[0]
    with_chosen, first = np.unique(number[chosen], return_index=True)  # number is ascending
    mate = np.full(len(problem.groups), -1, dtype=np.int64)
    mate[with_chosen] = members[chosen[first]]
    mates = mate[number]
    has_mate = mates >= 0
    return dict(zip(members[has_mate].tolist(), mates[has_mate].tolist()))


_FEW_GROUPS = 16  # up to this many near-duplicate groups, a Python loop over them is the quicker


def _disagreeing_selected(packed, mask: np.ndarray, fields) -> np.ndarray:
    """For every chunk, a selected chunk it disagrees with on one of ``fields`` or whose document
    version differs (-1 when none), vectorised per field."""
    partner = np.full(packed.n, -1, dtype=np.int64)
    chosen = mask.nonzero()[0]
    for f in fields:
        column = packed.field_values[:, f]
        firsts = _first_selected_values(column[chosen], chosen)
        if firsts is None:
            continue
        value, rep, other_rep = firsts
        present = (column >= 0) & (partner < 0)
        other = np.where(column == value, other_rep, rep)
        partner = np.where(present, other, partner)
    if packed.requirements.version_conflicts:
        # the first selected chunk of another version of the same document: per document, the
        # first selected chunk (c1, version v1) and the first of a version other than v1 (c2)
        versioned = (packed.doc >= 0) & (packed.version >= 0)
        first: dict[int, tuple[int, int]] = {}
        second: dict[int, int] = {}
        picked = chosen[versioned[chosen]]
        for c, d, v in zip(picked.tolist(), packed.doc[picked].tolist(), packed.version[picked].tolist()):
            if d not in first:
                first[d] = (c, v)
            elif d not in second and v != first[d][1]:
                second[d] = c
        if first:
            rows = (versioned & (partner < 0)).nonzero()[0]
            if len(rows) <= _FEW:  # a loop over them
                for r, d, v in zip(rows.tolist(), packed.doc[rows].tolist(), packed.version[rows].tolist()):
                    if d in first:
                        other_chunk = first[d][0] if v != first[d][1] else second.get(d, -1)
                        if other_chunk >= 0:
                            partner[r] = other_chunk
                return partner
            # per document: c1, v1 and c2 as arrays, then every other versioned chunk at once
            n_docs = int(packed.doc.max()) + 1
            c1, v1, c2 = (np.full(n_docs, -1, dtype=np.int64) for _ in range(3))
            for d, (c, v) in first.items():
                c1[d], v1[d] = c, v
            for d, c in second.items():
                c2[d] = c
            docs = packed.doc[rows]
            other = np.where(packed.version[rows] != v1[docs], c1[docs], c2[docs])
            hit = (c1[docs] >= 0) & (other >= 0)
            partner[rows[hit]] = other[hit]
    return partner


#: Up to this many chunks, a pass of :func:`_disagreeing_selected` loops over them in Python (a
#: NumPy call costs as much as ~30 steps of the loop); above it, the arrays.
_FEW = 64


def _first_selected_values(codes: np.ndarray, chosen: np.ndarray) -> tuple[int, int, int] | None:
    """The smallest present code of the selected chunks ``chosen`` (``codes``: theirs), the first of
    them that carries it and the first that carries the next code (-1 when none); None when none
    carries a code."""
    if len(chosen) <= _FEW:
        firsts: dict[int, int] = {}
        for c, v in zip(chosen.tolist(), codes.tolist()):
            if v >= 0 and v not in firsts:
                firsts[v] = c
        if not firsts:
            return None
        values = sorted(firsts)[:2]
        return values[0], firsts[values[0]], firsts[values[1]] if len(values) > 1 else -1
    values, first = np.unique(codes, return_index=True)
    keep = values >= 0
    values, reps = values[keep], chosen[first[keep]]
    if len(values) == 0:
        return None
    return int(values[0]), int(reps[0]), int(reps[1]) if len(values) > 1 else -1


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

    con = problem.gate_conflicts
    forbid_all = enforce_gate and reqs.gate.max_contradiction_density <= 0  # the gate forbids what κ counts
    fields = range(len(packed.field_names)) if forbid_all else problem.hard_fields
    partner_of = _disagreeing_selected(packed, mask, fields)
    extra = (con.i, con.j) if forbid_all else None
    pairwise = pairwise_partners(problem, fields, extra)
    superseded_by = problem.superseded_by
    mate_of = _first_selected_mates(problem, mask)

    used = int(packed.tokens[mask].sum())
    capacity = problem.capacity(enforce_gate if ceiling is None else ceiling)
    room = "in the budget" if capacity >= packed.budget else (
        f"under the gate's utilization ceiling ({capacity} of the {packed.budget}-token budget)")
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    n_selected = int(mask.sum())
    red = problem.signals.redundancy

    # which reason applies, for every chunk at once: the later assignments win, so they go from
    # the last reason of the docstring's order to the first (a Python loop of tests cost ~1.4 µs a
    # chunk); then one message per chunk, formatted once per distinct message where it can be
    n = problem.n
    left_out = (~mask).nonzero()[0]
    reason = np.full(n, _GAIN, dtype=np.int8)
    has_selected_nb = np.zeros(n, dtype=bool)
    has_selected_nb[red.i[mask[red.j]]] = True
    has_selected_nb[red.j[mask[red.i]]] = True
    reason[has_selected_nb] = _REDUNDANT
    reason[used + packed.tokens > capacity] = _NO_FIT
    if reqs.max_chunks is not None and n_selected >= reqs.max_chunks:
        reason[:] = _CHUNK_CAP
    reason[counts[packed.source] >= packed.source_max[packed.source]] = _SOURCE_CAP
    reason[np.fromiter(notes, dtype=np.int64, count=len(notes))] = _NOTE
    reason[np.fromiter(mate_of, dtype=np.int64, count=len(mate_of))] = _MATE
    for i in pairwise:  # the first selected hard partner, where no field or version names one
        if partner_of[i] < 0:
            partner_of[i] = next((j for j in pairwise[i] if mask[j]), -1)
    reason[partner_of >= 0] = _PARTNER
    newer = superseded_by.first_newer(mask)
    reason[np.fromiter(newer, dtype=np.int64, count=len(newer))] = _SUPERSEDED
    reason[np.fromiter(problem.ineligible_reason, dtype=np.int64, count=len(problem.ineligible_reason))] = _INELIGIBLE

    # each reason's messages go to its chunks' slots among the left-out ones (in position order)
    texts = np.empty(len(left_out), dtype=object)
    by_reason = reason[left_out]
    for code in np.bincount(by_reason, minlength=_GAIN + 1).nonzero()[0].tolist():
        slots = (by_reason == code).nonzero()[0]
        at = left_out[slots]  # (indexes arrays; rows: the same as a list)
        rows = at.tolist()
        if code == _INELIGIBLE:
            said = list(map(problem.ineligible_reason.__getitem__, rows))
        elif code == _SUPERSEDED:
            later = list(map(newer.__getitem__, rows))
            said = [f"superseded by `{ids[k]}` ({why})" for k, why in zip(later, _describe_pairs(problem, rows, later))]
        elif code == _PARTNER:
            partner = partner_of[at].tolist()
            said = [f"conflicts with `{ids[k]}` ({why})"
                    for k, why in zip(partner, _describe_pairs(problem, rows, partner))]
        elif code == _MATE:
            said = [f"near-duplicate of `{ids[mate_of[i]]}`" for i in rows]
        elif code == _NOTE:
            said = list(map(notes.__getitem__, rows))
        elif code == _SOURCE_CAP:
            sources = packed.source[at].tolist()
            per_source = {src: f"source cap: `{packed.source_names[src]}` already has {counts[src]} chunk(s)"
                          for src in set(sources)}
            said = list(map(per_source.__getitem__, sources))
        elif code == _CHUNK_CAP:
            said = [f"chunk cap: {reqs.max_chunks} chunk(s) already selected"] * len(rows)
        elif code == _NO_FIT:
            sizes = packed.tokens[at].tolist()
            tail = f" tokens, {capacity - used} left {room}"
            per_size = {t: f"does not fit: {t}{tail}" for t in set(sizes)}
            said = list(map(per_size.__getitem__, sizes))
        elif code == _REDUNDANT:
            r_ptr, r_nb, r_w = adjacency(problem.n, red.i, red.j, red.weight)  # (only when a chunk needs it)
            said = []
            for i in rows:
                nb = slice(r_ptr[i], r_ptr[i + 1])
                sel = mask[r_nb[nb]]
                k = int(np.argmax(np.where(sel, r_w[nb], -1.0)))
                said.append(f"redundant with `{ids[r_nb[nb][k]]}` (similarity {r_w[nb][k]:.2f})")
        else:
            said = _gain_reasons(problem, mask, at.astype(np.int64, copy=False), enforce_gate)
        texts[slots] = np.array(said, dtype=object)  # (a note is a str: no nested sequence to unpack)
    return dict(zip(map(ids.__getitem__, left_out.tolist()), texts.tolist()))


# the reasons of exclusion_reasons, first to last
_INELIGIBLE, _SUPERSEDED, _PARTNER, _MATE, _NOTE, _SOURCE_CAP, _CHUNK_CAP, _NO_FIT, _REDUNDANT, _GAIN = range(10)


def _penalty_to_selected(problem: Problem, mask: np.ndarray) -> np.ndarray:
    """Each chunk's summed pair penalty with the selected chunks ``mask`` (without a second copy
    of the pair list)."""
    pi, pj, pw = problem.pair_i, problem.pair_j, problem.pair_penalty
    j_taken, i_taken = mask[pj], mask[pi]
    penalty = np.bincount(pi[j_taken], weights=pw[j_taken], minlength=problem.n).astype(np.float64)
    penalty += np.bincount(pj[i_taken], weights=pw[i_taken], minlength=problem.n)
    return penalty


def _gain_reasons(problem: Problem, mask: np.ndarray, rows: np.ndarray, enforce_gate: bool) -> list[str]:
    """The reasons of the chunks ``rows`` that no constraint keeps out: no value, the gate's
    freshness, or a lower value than the selected chunks ``mask`` (with their marginal gain); what
    they read of the selection is computed here, when some chunk has such a reason."""
    packed = problem.packed
    gate = packed.requirements.gate
    covered = problem.covers[mask].any(axis=0) if problem.aspect_gain.size else np.zeros(0, bool)
    gains = marginal_gains(problem, rows, covered, _penalty_to_selected(problem, mask)).tolist()
    fresh_sum = float((packed.relevance[mask] * problem.signals.freshness[mask]).sum())
    fresh_weight = float(packed.relevance[mask].sum())
    relevance, freshness = packed.relevance[rows], problem.signals.freshness[rows]
    weight = fresh_weight + relevance
    stale = [False] * len(gains)
    if enforce_gate:
        weighed = weight > 0
        mean = np.divide(fresh_sum + relevance * freshness, weight, out=np.zeros(len(gains)), where=weighed)
        stale = (weighed & (mean < gate.min_freshness - TOLERANCE)).tolist()
    out = []
    for gain, fresh, too_stale in zip(gains, freshness.tolist(), stale):
        if gain <= 0:
            out.append(f"adds no value: marginal gain {gain:.3f}")
        elif too_stale:
            out.append(f"would break the gate: freshness would fall below {gate.min_freshness:.2f} "
                       f"(this chunk's freshness is {fresh:.2f})")
        elif enforce_gate:
            out.append(f"left out by the optimum under the gate: marginal gain {gain:.3f} alone")
        else:
            out.append(f"lower value than the selected chunks: marginal gain {gain:.3f}")
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

