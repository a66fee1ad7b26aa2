"""The selection objective and the problem every selector solves.

For a selection x (x_i = 1 when chunk i is selected)::

    F(x) = Σ_i x_i·(w_rel·s_i^p·φ_i − w_tok·T_i/B − c)           value of each chunk
         + w_cov·Σ_a ω_a·y_a / Σ_a ω_a                             required aspects covered
         + w_q·Σ_t idf_t·y_t / Σ_t idf_t                           the question's terms covered
         − Σ_(i,j) x_i·x_j·(w_red·s_ij + w_con·σ_ij + w_doc·[same doc])   penalised pairs

where s_i is the chunk's strength (relevance plus the query signals of
:mod:`ctxselect.features.query_terms`, scaled to [0, 1]; plain relevance without a question), p the
sharpening exponent and φ_i freshness relative to the freshest candidate (docs/objective.md).

:func:`score` computes F for any subset; every selector and the bench use it, so selections are
always compared on the same number. :class:`Problem` holds what the selectors need, built once per
query by :func:`build_problem`: the values, the pair penalties, and the hard constraints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ctxselect._config import SIMILARITY_EPSILON, TOLERANCE
from ctxselect.features.contradictions.fields import field_pairs, union_contradictions
from ctxselect.features.pairs import ConflictKind, ContradictionPairs, Signals
from ctxselect.kernels.greedy import _gains
from ctxselect.model.weights import ObjectiveWeights
from ctxselect.packing import PackedCandidates
from ctxselect.selection.corroboration import OnUnresolved
from ctxselect.selection.eligibility import eligibility
from ctxselect.selection.value import ChunkValues, chunk_values
from ctxselect.selection.versions import Supersession

__all__ = ["ObjectiveWeights", "Problem", "adjacency", "agreement_covered", "build_problem", "capacity",
           "marginal_gains", "score"]


@dataclass(frozen=True, eq=False)
class Problem:
    """One query's selection problem.

    Attributes
    ----------
    packed, signals, weights
    value : float64 (n,)
        Per-chunk value (see the module docstring).
    aspect_gain : float64 (A,)
        What covering each aspect adds: the required aspects first (w_cov·ω_a/Σω), then the
        question's terms (w_qcov·idf share).
    covers : bool (n, A)
    n_required : int
        How many of the aspects are required ones (the gate's coverage counts only those).
    conflicts : ContradictionPairs
        Every contradiction as a pair except those of the hard fields (which stay per-value
        codes, see ``hard_fields``): the signals' contradictions and the soft fields' pairs.
    pair_i, pair_j, pair_penalty : the penalised pairs (i < j), penalty w_red·s + w_con·σ > 0
    hard_i, hard_j : pairs that may never be selected together (hard conflicts listed as pairs;
        the hard fields' and the versions' disagreements are not listed, see ``hard_fields``)
    hard_fields : tuple of int
        Conflict fields whose every disagreement is hard: all selected chunks carrying such a
        field must agree on its value (the models express this per value, not per pair).
    superseded_by : Supersession
        For version conflicts with a known order, which chunks are newer than which
        (:class:`~ctxselect.selection.versions.Supersession`: codes, never pairs).
    groups : list of int64 arrays
        Near-duplicate clusters: at most one member may be selected.
    eligible : bool (n,)
        Chunks that may be selected at all (admissible, inside their validity window when
        required, not over the budget alone).
    ineligible_reason : dict position -> str
    unresolved : list of UnresolvedConflict
        Conflicts neither evidence nor source precedence decided, with what ``on_unresolved`` did.
    uncompared, uncut_eligible : bool (n,) or None
        When the time limit or the reach cut the similarities (``Signals.compared``): the chunks left
        out for it, and every chunk the uncut problem could hold (:mod:`~ctxselect.selection.eligibility`).
    """

    packed: PackedCandidates
    signals: Signals
    weights: ObjectiveWeights
    value: np.ndarray
    aspect_gain: np.ndarray
    covers: np.ndarray
    n_required: int
    conflicts: ContradictionPairs
    pair_i: np.ndarray
    pair_j: np.ndarray
    pair_penalty: np.ndarray
    hard_i: np.ndarray
    hard_j: np.ndarray
    hard_fields: tuple
    superseded_by: Supersession
    groups: list
    eligible: np.ndarray
    ineligible_reason: dict
    unresolved: list
    uncompared: np.ndarray | None = None
    uncut_eligible: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.packed.n

    def capacity(self, enforce_gate: bool) -> int:
        """:func:`capacity` of the problem's candidates."""
        return capacity(self.packed, enforce_gate)

    @cached_property
    def gate_conflicts(self) -> ContradictionPairs:
        """The listed conflicts the gate's contradiction density counts, as ``inspect()`` counts
        them: soft field conflicts with the requirements' ``contradictions="fields"`` (article 000's
        κ; hard fields and versions are per-value codes, never both selected, so they add nothing to
        a selection's κ), free-text claim conflicts too with ``"all"``. Near-duplicates whose numbers
        differ (drift) are never part of κ: corroboration decides them."""
        con = self.conflicts
        kinds = ConflictKind.FIELD
        if self.packed.requirements.contradictions == "all":
            kinds |= ConflictKind.CLAIM
        keep = (con.kind & kinds) > 0
        return ContradictionPairs(i=con.i[keep], j=con.j[keep], weight=con.weight[keep], kind=con.kind[keep],
                                  superseded=con.superseded[keep])

    def min_tokens(self, enforce_gate: bool) -> int:
        """Tokens a selection must use: ⌈τ_min·B⌉ with the gate enforced, else 0."""
        if not enforce_gate:
            return 0
        return math.ceil(self.packed.requirements.gate.min_token_utilization * self.packed.budget - TOLERANCE)


def _merge_pair_penalties(n: int, parts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    i, j, w = (np.concatenate(column) for column in zip(*parts))
    keep = w > 0
    i, j, w = i[keep], j[keep], w[keep]
    if len(i) == 0:
        return i, j, w
    key = i * max(n, 1) + j
    unique, inverse = np.unique(key, return_inverse=True)
    return unique // n, unique % n, np.bincount(inverse, weights=w)


def _same_document_pairs(packed: PackedCandidates) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (i < j) of chunks with the same doc_id."""
    out_i, out_j = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    with_doc = np.flatnonzero(packed.doc >= 0)
    order = with_doc[np.argsort(packed.doc[with_doc], kind="stable")]
    docs = packed.doc[order]
    bounds = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1], [True])))
    for start, stop in zip(bounds[:-1], bounds[1:]):
        members = np.sort(order[start:stop])
        if len(members) > 1:
            a, b = np.triu_indices(len(members), 1)
            out_i.append(members[a])
            out_j.append(members[b])
    return np.concatenate(out_i).astype(np.int64), np.concatenate(out_j).astype(np.int64)


def capacity(packed: PackedCandidates, enforce_gate: bool) -> int:
    """Tokens a selection may use: the budget; with the gate enforced, at most ⌊τ_max·B⌋ of it
    (the gate's utilization ceiling; the one place this is computed)."""
    if enforce_gate:
        ceiling = packed.requirements.gate.utilization_ceiling
        return min(packed.budget, math.floor(ceiling * packed.budget + TOLERANCE))
    return packed.budget


def build_problem(
    packed: PackedCandidates,
    signals: Signals,
    weights: ObjectiveWeights,
    *,
    query: str | None = None,
    hard_conflict_severity: float = 1.0,
    exclude_outside_window: bool = True,
    resolve_by_corroboration: bool = True,
    on_unresolved: OnUnresolved = OnUnresolved.DROP_BOTH,
    values: ChunkValues | None = None,
) -> Problem:
    """Assemble the selection problem of one query.

    Parameters
    ----------
    query : str, optional
        The question's text, for the query-aware terms.
    hard_conflict_severity : float
        Contradictions at or above this severity, and every version conflict, are hard: the two
        chunks are never selected together. Lower ones are penalised.
    exclude_outside_window : bool
        Chunks outside their validity window at ``now`` are not eligible.
    resolve_by_corroboration : bool
        Drop the less corroborated side of each free-text claim conflict and older versions of a
        document whose newer version is eligible (:mod:`ctxselect.selection.corroboration`).
    on_unresolved : OnUnresolved
        What an even split that source precedence does not decide becomes.
    values : ChunkValues, optional
        :func:`~ctxselect.selection.value.chunk_values` of these signals, when computed already.
    """
    n = packed.n
    w = weights
    values = chunk_values(packed, signals.freshness, signals.query_probes, weights, query) if values is None else values
    value, covers, aspect_gain, n_required = values.value, values.covers, values.aspect_gain, values.n_required

    el = eligibility(packed, signals, exclude_outside_window=exclude_outside_window,
                     resolve_by_corroboration=resolve_by_corroboration, on_unresolved=on_unresolved)
    eligible, resolution = el.eligible, el.resolution

    hard_fields = tuple(f for f in range(len(packed.field_names))
                        if packed.field_severity[f] >= hard_conflict_severity - SIMILARITY_EPSILON)
    soft_fields = [f for f in range(len(packed.field_names)) if f not in hard_fields]
    red, con = signals.redundancy, signals.contradictions
    # hard field conflicts stay per-value codes (never both: no pair, no penalty); soft ones are
    # penalties, so their pairs join the listed contradictions
    soft = field_pairs(packed, soft_fields) if soft_fields else None
    conflicts = union_contradictions(n, con, soft) if soft is not None else con
    # on_unresolved="keep_both": these free-text conflicts neither forbid nor cost (a soft field
    # conflict of the same pair still costs its own severity)
    free = resolution.left_free(n, con)
    costed = conflicts
    if free.any():
        costed = replace(con, weight=np.where(free, 0.0, con.weight))
        costed = union_contradictions(n, costed, soft) if soft is not None else costed
    parts = [(red.i, red.j, w.redundancy * red.weight), (costed.i, costed.j, w.contradiction * costed.weight)]
    if w.same_document > 0:
        di, dj = _same_document_pairs(packed)
        parts.append((di, dj, np.full(len(di), w.same_document)))
    pair_i, pair_j, pair_penalty = _merge_pair_penalties(n, parts)

    hard = (con.weight >= hard_conflict_severity - SIMILARITY_EPSILON) & ~free  # (versions: codes, as hard fields)

    return Problem(  # without the question's hits, read already (n x probe terms: they can be large)
        packed=packed, signals=replace(signals, query_probes=None), weights=weights, value=value, aspect_gain=aspect_gain,
        covers=covers, n_required=n_required, conflicts=conflicts, pair_i=pair_i, pair_j=pair_j, pair_penalty=pair_penalty,
        hard_i=con.i[hard], hard_j=con.j[hard], hard_fields=hard_fields, superseded_by=el.superseded_by,
        groups=signals.duplicate_groups(), eligible=eligible, ineligible_reason=el.reasons,
        unresolved=resolution.conflicts, uncompared=el.uncompared, uncut_eligible=el.uncut_eligible,
    )


def score(problem: Problem, mask: np.ndarray) -> float:
    """The objective F of the selection ``mask`` (any subset, feasible or not)."""
    mask = np.asarray(mask, dtype=bool)
    total = float(problem.value[mask].sum())
    if problem.aspect_gain.size:
        covered = problem.covers[mask].any(axis=0)
        total += float(problem.aspect_gain[covered].sum())
    if problem.pair_i.size:
        both = mask[problem.pair_i] & mask[problem.pair_j]
        total -= float(problem.pair_penalty[both].sum())
    for f in problem.hard_fields:  # kept as codes, not pairs: counted (only a mask breaking them has any)
        values = problem.packed.field_values[mask, f]
        values = values[values >= 0]
        if values.size > 1:
            counts = np.bincount(values)
            pairs = (values.size * (values.size - 1) - int((counts * (counts - 1)).sum())) // 2
            total -= problem.weights.contradiction * float(problem.packed.field_severity[f]) * pairs
    return total


def marginal_gains(problem: Problem, rows: np.ndarray, covered: np.ndarray,
                   penalty_to_selected: np.ndarray) -> np.ndarray:
    """What adding each chunk of ``rows`` to a selection adds to the objective: its value, less
    ``penalty_to_selected`` (its pair penalties with the selected chunks, per chunk), plus the
    aspects it covers that ``covered`` (bool, per aspect) does not. The one marginal gain
    (:func:`ctxselect.kernels.greedy._gain`), of the density baseline and the exclusion reasons.

    Returns
    -------
    float64 array, one gain per row
    """
    return _gains(np.asarray(rows, dtype=np.int64), problem.value.astype(np.float64, copy=False),
                  np.asarray(penalty_to_selected, dtype=np.float64), problem.aspect_gain.astype(np.float64, copy=False),
                  np.ascontiguousarray(problem.covers, dtype=bool), np.asarray(covered, dtype=bool))


def adjacency(n: int, i: np.ndarray, j: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric CSR (indptr, neighbours, weights) of the pairs (i, j, w)."""
    rows, cols, weights = np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([w, w])
    order = rows.argsort(kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.bincount(rows, minlength=n).cumsum(out=indptr[1:])
    return indptr, cols[order], weights[order]


def agreement_covered(packed: PackedCandidates, i: np.ndarray, j: np.ndarray, fields) -> np.ndarray:
    """For each pair, whether it disagrees on one of ``fields`` (both present, values differ) or
    is a version conflict: pairs that "agree on one value per field / document" already forbids."""
    covered = np.zeros(len(i), dtype=bool)
    for f in fields:
        a, b = packed.field_values[i, f], packed.field_values[j, f]
        covered |= (a >= 0) & (b >= 0) & (a != b)
    if packed.requirements.version_conflicts:
        vi, vj = packed.version[i], packed.version[j]
        covered |= (packed.doc[i] >= 0) & (packed.doc[i] == packed.doc[j]) & (vi >= 0) & (vj >= 0) & (vi != vj)
    return covered
