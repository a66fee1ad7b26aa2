"""Conflicts among a set of chunks: differing claim fields, versions of one document, free-text claims.

This is the exact check used to score a given context (``inspect``); each conflicting pair is
counted once, with the highest severity among its reasons (article 000's loop counted outside its
inner loop; that bug is not repeated here).

Memory is O(n + listed pairs) and no n × n matrix is built: the number of conflicting pairs and
their summed severity are *counted* from value codes, never enumerated (docs/conflicts.md,
"Counting without enumerating"); only the first :data:`MAX_LISTED_PAIRS` pairs are listed.

No echo of inadmissible content
-------------------------------
Every conflict reason is formatted here (:func:`pair_conflicts`, :func:`claim_reason`,
:func:`stated_figures`); :mod:`ctxselect.selection.explain` and :mod:`ctxselect.selection.corroboration` reuse these
helpers. When either chunk of a pair lies outside the query's allowed scopes
(``packed.admissible`` False), a reason names the field (or "a stated figure") and the chunk ids,
never a value, a claim, a document or a version label.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import comb

import numpy as np

from ctxselect.features.contradictions.fields import some_differ
from ctxselect.features.contradictions.reasons import claim_reason, pair_conflicts
from ctxselect.packing import NO_CODE, PackedCandidates
from ctxselect.text.claims import claim_titles, find_claim_conflicts

__all__ = ["ConflictPair", "ConflictSummary", "conflict_pairs", "conflict_summary", "MAX_LISTED_PAIRS",
           "PATTERN_LIMIT", "BLOCK_ROWS"]

#: Conflicting pairs a report lists (in position order); the metrics and
#: :attr:`ConflictSummary.count` always cover every pair.
MAX_LISTED_PAIRS = 1000
#: Presence patterns (which conflict reasons a chunk carries) up to which pairs are counted by
#: grouping value codes, O(patterns × n × reasons); above it a blocked pass counts them exactly with
#: memory O(BLOCK_ROWS × n) but time O(n²) (reachable only with six or more conflict fields carried
#: in varying combinations).
PATTERN_LIMIT = 64
#: Rows per tile of the blocked pass (the fallback above PATTERN_LIMIT).
BLOCK_ROWS = 256


@dataclass(frozen=True)
class ConflictPair:
    """Two chunks that contradict each other.

    Attributes
    ----------
    a, b : str
        The chunk ids (in candidate order).
    severity : float
        The highest severity among the reasons, in (0, 1].
    reasons : tuple of str
        ``"field <name>: <value a> vs <value b>"``, ``"version <va> vs <vb> of doc <d>"`` or
        ``"claim: <claim a> vs <claim b>"``; when a chunk is outside the allowed scopes, the field
        name or "a stated figure" and the chunk's id instead of any value.
    """

    a: str
    b: str
    severity: float
    reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "severity": self.severity, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class ConflictSummary:
    """The conflicts among a set of chunks: exact totals and the first pairs.

    Attributes
    ----------
    count : int
        Conflicting pairs (each pair once, whatever its number of reasons).
    severity_sum : float
        Sum over the conflicting pairs of their highest severity.
    pairs : list of ConflictPair
        The first ``limit`` conflicting pairs in position order (all of them when ``count`` is
        not above the limit).
    claim_count : int
        Pairs with a free-text claim conflict among their reasons (0 without ``claims``).
    """

    count: int
    severity_sum: float
    pairs: list[ConflictPair]
    claim_count: int = 0

    @property
    def complete(self) -> bool:
        """Whether :attr:`pairs` lists every conflicting pair."""
        return len(self.pairs) == self.count


# ---------------------------------------------------------------------------------------------
# Structural reasons as arrays over the scored chunks


@dataclass(frozen=True, eq=False)
class _Reason:
    """One structural conflict reason over the m scored chunks: chunks a and b conflict when both
    are ``present``, share ``group`` (when there is one) and their ``value`` codes differ."""

    present: np.ndarray
    value: np.ndarray
    group: np.ndarray | None
    severity: float

    def conflicts_with(self, a: int, rest: slice) -> np.ndarray:
        """Which chunks of ``rest`` conflict with chunk a on this reason."""
        if not self.present[a]:
            return np.zeros(rest.stop - rest.start, dtype=bool)
        hit = self.present[rest] & (self.value[rest] != self.value[a])
        if self.group is not None:
            hit &= self.group[rest] == self.group[a]
        return hit


def _structural_reasons(packed: PackedCandidates, index: np.ndarray) -> list[_Reason]:
    """The field and version reasons that can make a conflict among the chunks ``index``."""
    out = []
    for f in range(len(packed.field_names)):
        value = packed.field_values[index, f].astype(np.int64)
        present = value != NO_CODE
        if some_differ(value[present]):
            out.append(_Reason(present, value, None, float(packed.field_severity[f])))
    reqs = packed.requirements
    if reqs.version_conflicts:
        doc = packed.doc[index].astype(np.int64)
        version = packed.version[index].astype(np.int64)
        present = (doc != NO_CODE) & (version != NO_CODE)
        if some_differ(version[present], doc[present]):  # some document has two versions
            out.append(_Reason(present, version, doc, float(reqs.version_conflict_severity)))
    return out


def _factorize(columns: list[np.ndarray]) -> np.ndarray:
    """One dense int64 code per row for the tuple of ``columns`` (equal tuples, equal codes)."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col in columns:
        _, col_code = np.unique(col, return_inverse=True)
        combined = key * (int(col_code.max(initial=0)) + 1) + col_code
        _, key = np.unique(combined, return_inverse=True)
        key = key.astype(np.int64)
    return key


def _equal_pairs(rows_a: np.ndarray, rows_b: np.ndarray | None, columns: list[np.ndarray]) -> int:
    """Pairs that agree on every column: unordered pairs within ``rows_a`` when ``rows_b`` is None,
    else pairs (a in rows_a, b in rows_b)."""
    if rows_b is None:
        if not columns:
            return comb(len(rows_a), 2)
        counts = np.bincount(_factorize([c[rows_a] for c in columns]))
        return int((counts * (counts - 1) // 2).sum())
    if not columns:
        return len(rows_a) * len(rows_b)
    rows = np.concatenate([rows_a, rows_b])
    key = _factorize([c[rows] for c in columns])
    size = int(key.max(initial=-1)) + 1
    left = np.bincount(key[:len(rows_a)], minlength=size)
    right = np.bincount(key[len(rows_a):], minlength=size)
    return int((left * right).sum())


def _compatible_pairs(reasons: list[_Reason], m: int) -> int | None:
    """Pairs of the m chunks that conflict on none of ``reasons``; None when the chunks carry more
    than :data:`PATTERN_LIMIT` presence patterns.

    Chunks are grouped by which reasons they carry (their pattern). Two chunks whose common
    reasons are T agree on a field of T when their codes are equal, and on a grouped reason
    (versions of one document) when their groups differ or their codes are equal:
    [group differs] + [group and code equal] = 1 − [group equal] + [group and code equal]. The
    product over T expands into counts of pairs with equal key tuples, each a grouping by codes.
    """
    if not reasons:
        return comb(m, 2)
    pattern = np.zeros(m, dtype=np.int64)
    for bit, r in enumerate(reasons):
        pattern |= r.present.astype(np.int64) << bit
    kinds, inverse = np.unique(pattern, return_inverse=True)
    if len(kinds) > PATTERN_LIMIT:
        return None
    order = np.argsort(inverse, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(inverse, minlength=len(kinds)))))
    members = [order[bounds[k]:bounds[k + 1]] for k in range(len(kinds))]
    total = 0
    for a in range(len(kinds)):
        for b in range(a, len(kinds)):
            common = int(kinds[a]) & int(kinds[b])
            shared = [r for bit, r in enumerate(reasons) if common >> bit & 1]
            fields = [r.value for r in shared if r.group is None]
            grouped = [r for r in shared if r.group is not None]
            other = None if a == b else members[b]
            for terms in product((0, 1, 2), repeat=len(grouped)):
                columns = list(fields)
                for term, r in zip(terms, grouped):
                    columns += [] if term == 0 else [r.group] if term == 1 else [r.group, r.value]
                sign = -1 if sum(t == 1 for t in terms) % 2 else 1
                total += sign * _equal_pairs(members[a], other, columns)
    return total


def _blocked_levels(reasons: list[_Reason], m: int, levels: np.ndarray) -> np.ndarray:
    """Pairs whose highest severity among ``reasons`` is each of ``levels`` (descending), counted
    tile by tile: memory O(BLOCK_ROWS × m), time O(m²)."""
    counts = np.zeros(len(levels), dtype=np.int64)
    cols = np.arange(m)
    for start in range(0, m, BLOCK_ROWS):
        rows = np.arange(start, min(start + BLOCK_ROWS, m))
        best = np.full((len(rows), m), -1.0)
        for r in reasons:
            hit = (r.present[rows, None] & r.present[None, :]
                   & (r.value[rows, None] != r.value[None, :]))
            if r.group is not None:
                hit &= r.group[rows, None] == r.group[None, :]
            np.maximum(best, np.where(hit, r.severity, -1.0), out=best)
        best[cols[None, :] <= rows[:, None]] = -1.0
        for k, level in enumerate(levels):
            counts[k] += int(np.count_nonzero(best == level))
    return counts


def _structural_severity(reasons: list[_Reason], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Highest structural severity of each pair (a[k], b[k]); -1 where none conflicts."""
    best = np.full(len(a), -1.0)
    for r in reasons:
        hit = r.present[a] & r.present[b] & (r.value[a] != r.value[b])
        if r.group is not None:
            hit &= r.group[a] == r.group[b]
        best = np.where(hit, np.maximum(best, r.severity), best)
    return best


def _level_counts(reasons: list[_Reason], m: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct structural severities (descending) and how many pairs have each as their
    highest: n(≥ L_t) − n(≥ L_(t−1)), where n(≥ L) counts pairs conflicting on a reason of
    severity ≥ L by :func:`_compatible_pairs`."""
    levels = np.array(sorted({r.severity for r in reasons}, reverse=True), dtype=np.float64)
    counts = np.zeros(len(levels), dtype=np.int64)
    below = 0
    for k, level in enumerate(levels):
        compatible = _compatible_pairs([r for r in reasons if r.severity >= level], m)
        if compatible is None:
            return levels, _blocked_levels(reasons, m, levels)
        at_least = comb(m, 2) - compatible
        counts[k] = at_least - below
        below = at_least
    return levels, counts


def _has_partner_after(reasons: list[_Reason], m: int, claim_firsts) -> np.ndarray:
    """Whether chunk a conflicts with some chunk b > a, for every a (O(m log m) per reason)."""
    out = np.zeros(m, dtype=bool)
    out[list(claim_firsts)] = True
    for r in reasons:
        rows = r.present.nonzero()[0]
        group = np.zeros(len(rows), dtype=np.int64) if r.group is None else r.group[rows]
        value = r.value[rows]
        later_in_group = _later_with_same_key(rows, [group])
        later_same_value = _later_with_same_key(rows, [group, value])
        out[rows[later_in_group > later_same_value]] = True
    return out


def _later_with_same_key(rows: np.ndarray, columns: list[np.ndarray]) -> np.ndarray:
    """For each of ``rows`` (ascending), how many later rows share its key."""
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64)
    key = _factorize(columns)
    order = np.lexsort((rows, key))
    sorted_key = key[order]
    starts = np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])).nonzero()[0]
    ends = np.concatenate((starts[1:], [len(rows)]))
    run_end = np.repeat(ends, ends - starts)
    later = np.empty(len(rows), dtype=np.int64)
    later[order] = run_end - np.arange(len(rows)) - 1
    return later


def conflict_summary(packed: PackedCandidates, mask: np.ndarray | None = None, *, claims: bool = True,
                     claim_severity: float = 1.0, limit: int | None = MAX_LISTED_PAIRS,
                     claim_readable: np.ndarray | None = None) -> ConflictSummary:
    """The conflicts among the chunks selected by ``mask`` (all when ``None``).

    Field and version conflicts are counted from value codes (no pair is enumerated to count
    them); with ``claims``, free-text claims that disagree too
    (:func:`ctxselect.text.claims.find_claim_conflicts`), quoted with their values
    ("claim: '3,559 people' vs '10,000 people'") when both chunks are admissible.

    Parameters
    ----------
    packed : PackedCandidates
    mask : bool array, optional
    claims : bool
        Also compare the free-text claims of the chunks.
    claim_severity : float
        Severity of a claim conflict.
    limit : int or None
        How many pairs to list (``None``: every pair; memory O(pairs)).
    claim_readable : bool array (n,), optional
        ``Signals.claim_readable``: the claim prefilter over every candidate, read at the selected
        chunks instead of running it again over them (the same conflicts).

    Returns
    -------
    ConflictSummary
        Exact ``count`` and ``severity_sum``; ``pairs`` sorted by position of the first chunk,
        then the second.
    """
    index = np.arange(packed.n) if mask is None else np.flatnonzero(mask)
    m = len(index)
    if m < 2:
        return ConflictSummary(0, 0.0, [])
    reasons = _structural_reasons(packed, index)
    claim_pairs: dict[tuple[int, int], list] = {}
    if claims:
        chunks = [packed.candidates[k] for k in index.tolist()]
        disagreements, _ = find_claim_conflicts([c.text for c in chunks], titles=claim_titles(chunks),
                                                read=None if claim_readable is None else claim_readable[index])
        claim_pairs = dict(disagreements)
    if not reasons and not claim_pairs:  # (what the listing below finds: no pair)
        return ConflictSummary(0, 0.0, [])
    claim_partners: dict[int, list[int]] = {}
    for a, b in sorted(claim_pairs):
        claim_partners.setdefault(a, []).append(b)

    # list the first pairs in position order: one beyond the limit tells whether there are more
    listed: list[ConflictPair] = []
    listed_sum = 0.0
    for a in _has_partner_after(reasons, m, claim_partners).nonzero()[0].tolist():
        if limit is not None and len(listed) > limit:
            break
        rest = slice(a + 1, m)
        hit = np.zeros(m - a - 1, dtype=bool)
        for r in reasons:
            hit |= r.conflicts_with(a, rest)
        partners = hit.nonzero()[0] + a + 1
        if a in claim_partners:
            partners = np.union1d(partners, claim_partners[a])
        for b in partners.tolist():
            if limit is not None and len(listed) > limit:
                break
            i, j = int(index[a]), int(index[b])
            why = pair_conflicts(packed, i, j)
            why += [(claim_reason(packed, i, j, ca, cb), claim_severity) for ca, cb in claim_pairs.get((a, b), ())]
            severity = max(sev for _, sev in why)
            listed.append(ConflictPair(packed.ids[i], packed.ids[j], severity, tuple(w for w, _ in why)))
            listed_sum += severity
    if limit is None or len(listed) <= limit:  # every pair is listed: sum in pair order, as before
        return ConflictSummary(len(listed), listed_sum, listed, len(claim_pairs))

    levels, counts = _level_counts(reasons, m)
    count = int(counts.sum())
    severity_sum = float(np.dot(levels, counts)) if len(levels) else 0.0
    if claim_pairs:  # claim pairs add what their structural reasons do not already give
        keys = np.array(sorted(claim_pairs), dtype=np.int64).reshape(-1, 2)
        structural = _structural_severity(reasons, keys[:, 0], keys[:, 1])
        count += int((structural < 0).sum())
        severity_sum += float(np.where(structural < 0, claim_severity,
                                       np.maximum(claim_severity - structural, 0.0)).sum())
    return ConflictSummary(count, severity_sum, listed[:limit], len(claim_pairs))


def conflict_pairs(packed: PackedCandidates, mask: np.ndarray | None = None, *, claims: bool = True,
                   claim_severity: float = 1.0, limit: int | None = None) -> list[ConflictPair]:
    """The conflicting pairs among the chunks selected by ``mask`` (all when ``None``), sorted by
    position of the first chunk, then the second; at most ``limit`` of them (``None``: every pair,
    memory O(pairs)). See :func:`conflict_summary` for exact totals without listing."""
    return conflict_summary(packed, mask, claims=claims, claim_severity=claim_severity, limit=limit).pairs
