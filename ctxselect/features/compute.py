"""``signals``: freshness, sparse redundancy and contradiction pairs, near-duplicate clusters.

The public function validates and prepares arrays from a :class:`PackedCandidates`, then calls
the jitted kernels of :mod:`ctxselect.kernels`; the kernels never see a Python object.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import IntFlag

import numpy as np
from rapidfuzz import fuzz, process

from ctxselect.model import validation as checks
from ctxselect.text.claims import find_claim_conflicts
from ctxselect.errors import InputError
from ctxselect.kernels.pairs import _components, _differing_code_pairs, _freshness
from ctxselect.features.similarity import cosine_pairs, minhash_pairs, text_signatures
from ctxselect.packing import PackedCandidates
from ctxselect.text.words import numbers_in

__all__ = ["ConflictKind", "PairList", "Signals", "signals", "chunk_freshness", "CONFIRM_CHARS"]

#: A near-duplicate is confirmed on this many leading characters of each text: the edit distance
#: costs O(length² / 64) — 3 s for two 400 KB texts, about 5 ms at this length.
CONFIRM_CHARS = 20_000


class ConflictKind(IntFlag):
    """Why two chunks contradict each other (a pair may have several)."""

    FIELD = 1    #: a conflict field present in both with different values
    VERSION = 2  #: the same doc_id with a different version
    DRIFT = 4    #: near-duplicate texts whose numbers differ
    CLAIM = 8    #: texts that state different values for the same claim


@dataclass(frozen=True, eq=False)
class PairList:
    """A sparse list of weighted pairs (i < j), sorted by (i, j).

    Attributes
    ----------
    i, j : int64 arrays
        Positions of the two chunks.
    weight : float64 array
        Similarity (redundancy) or severity (contradictions), in [0, 1].
    """

    i: np.ndarray
    j: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return int(self.i.shape[0])

    def as_dict(self) -> dict[tuple[int, int], float]:
        return {(int(a), int(b)): float(w) for a, b, w in zip(self.i, self.j, self.weight)}


@dataclass(frozen=True, eq=False)
class ContradictionPairs(PairList):
    """Contradiction pairs; ``weight`` is the severity.

    Attributes
    ----------
    kind : uint8 array
        :class:`ConflictKind` bits of each pair.
    superseded : int64 array
        For version conflicts, the position of the older chunk; -1 when not known or not a
        version conflict.
    """

    kind: np.ndarray
    superseded: np.ndarray


@dataclass(frozen=True, eq=False)
class Signals:
    """Everything pairwise the selector needs about one query's candidates.

    Attributes
    ----------
    freshness : float64 array (n,)
    redundancy : PairList
        Pairs at or above the redundancy threshold, weight = similarity.
    duplicate : bool array, one per redundancy pair
        Confirmed near-duplicates (similarity >= duplicate threshold, and for text a rapidfuzz
        ratio at or above ``confirm_ratio``).
    contradictions : ContradictionPairs
    clusters : int64 array (n,)
        Connected components of the near-duplicate graph (labels 0..C-1).
    similarity : str
        ``"cosine"``, ``"minhash"`` or ``"none"``.
    claim_conflicts, claim_agreements : dict (i, j) -> list of (Claim, Claim)
        Free-text claims two chunks disagree / agree on (:mod:`ctxselect.claims`).
    """

    freshness: np.ndarray
    redundancy: PairList
    duplicate: np.ndarray
    contradictions: ContradictionPairs
    clusters: np.ndarray
    similarity: str
    claim_conflicts: dict = None
    claim_agreements: dict = None

    def duplicate_groups(self) -> list[np.ndarray]:
        """The clusters with two or more members, each as sorted positions."""
        if self.clusters.size == 0:
            return []
        counts = np.bincount(self.clusters)
        order = np.argsort(self.clusters, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(counts)))
        return [order[bounds[c]:bounds[c + 1]] for c in np.flatnonzero(counts >= 2)]


def chunk_freshness(packed: PackedCandidates, *, zero_outside_window: bool = False) -> np.ndarray:
    """Per-chunk freshness e^(−λ_s·age) (kernel); ``missing_timestamp`` decides undated chunks;
    with ``zero_outside_window`` a chunk outside its validity window at ``now`` gets 0."""
    missing = 1.0 if packed.requirements.missing_timestamp == "fresh" else 0.0
    return _freshness(packed.decay, packed.age_days, packed.has_timestamp, packed.valid_now,
                      missing, zero_outside_window)


def _natural_key(version: str):
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\d+|[^\d.\-_ ]+", version.lower()))


def _version_rank(packed: PackedCandidates) -> np.ndarray:
    """Per chunk, the order of its version among its document's versions (higher = newer);
    -1 when the chunk has no doc/version. Versions compare naturally ("v10" > "v9"); the
    timestamp breaks ties between versions that do not compare."""
    rank = np.full(packed.n, -1, dtype=np.int64)
    names = packed.version_names
    by_doc: dict[int, list[tuple[tuple, int]]] = {}
    for i in np.flatnonzero((packed.doc >= 0) & (packed.version >= 0)).tolist():
        by_doc.setdefault(int(packed.doc[i]), []).append((_natural_key(names[packed.version[i]]), i))
    for members in by_doc.values():
        order = {key: r for r, key in enumerate(sorted({key for key, _ in members}))}
        for key, i in members:
            rank[i] = order[key]
    return rank


def _version_superseded(packed, vi, vj, rank) -> np.ndarray:
    ri, rj = rank[vi], rank[vj]
    older = np.where(ri < rj, vi, np.where(rj < ri, vj, -1))
    tie = older < 0
    if tie.any():
        ti, tj = packed.timestamp[vi], packed.timestamp[vj]
        dated = packed.has_timestamp[vi] & packed.has_timestamp[vj]
        older = np.where(tie & dated & (ti < tj), vi, np.where(tie & dated & (tj < ti), vj, older))
    return older


def _drift_pairs(packed: PackedCandidates, i: np.ndarray, j: np.ndarray):
    """Near-duplicate pairs whose texts each state a number the other does not."""
    keep = np.zeros(len(i), dtype=bool)
    cache: dict[int, Counter] = {}
    for e, (a, b) in enumerate(zip(i.tolist(), j.tolist())):
        na = cache.setdefault(a, numbers_in(packed.candidates[a].text))
        nb = cache.setdefault(b, numbers_in(packed.candidates[b].text))
        keep[e] = bool(na - nb) and bool(nb - na)
    return i[keep], j[keep]


def _merge_sorted(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Merge sorted key arrays: (merged keys, positions of the smaller parts' entries in the merge,
    their order) — the largest part is placed around them, so nothing of its size is sorted."""
    big = int(np.argmax([len(k) for k in keys]))
    rest = [k for p, k in enumerate(keys) if p != big]
    if not rest or not sum(len(k) for k in rest):
        return keys[big], None, None
    small = np.concatenate(rest)
    order = np.argsort(small, kind="stable")
    small = small[order]
    at = np.searchsorted(keys[big], small, side="right") + np.arange(len(small))
    merged = np.empty(len(keys[big]) + len(small), dtype=np.int64)
    taken = np.zeros(len(merged), dtype=bool)
    taken[at] = True
    merged[at] = small
    merged[~taken] = keys[big]
    return merged, at, order


def _merge_contradictions(n, parts: list) -> ContradictionPairs:
    """Merge (i, j, severity, kind, superseded) parts: one entry per pair, highest severity,
    kinds OR-ed, the known superseded side kept.

    Each part's pairs are unique and sorted by (i, j) (the kernels and the claim keys give them
    so); ``severity`` and ``kind`` are one value for the whole part, ``superseded`` an array or
    None (-1 throughout). ``parts`` is consumed: each part's pair arrays are released once its
    keys are taken, the largest part is never sorted (the others are merged into it), and the
    per-pair outputs are built one at a time, so memory stays a small multiple of the pairs."""
    width = max(n, 1)
    keys, meta = [], []
    while parts:
        i, j, severity, kind, superseded = parts.pop(0)
        if len(i):
            key = i.astype(np.int64) * width + j
            if len(key) > 1 and not bool((key[1:] > key[:-1]).all()):  # not sorted: sort it
                order = np.argsort(key, kind="stable")
                key = key[order]
                superseded = None if superseded is None else superseded[order]
            keys.append(key)
            meta.append((len(key), float(severity), int(kind), superseded))
        del i, j
    if not keys:
        empty_i = np.empty(0, np.int64)
        return ContradictionPairs(empty_i, empty_i.copy(), np.empty(0), np.empty(0, np.uint8), empty_i.copy())
    big = int(np.argmax([len(k) for k in keys]))
    key, at, order = _merge_sorted(keys)
    del keys
    unique = len(key) < 2 or bool((key[1:] != key[:-1]).all())
    starts = None if unique else np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))

    def merged(column, dtype, reduce) -> np.ndarray:
        """The per-pair values ``column(part)`` in merged order, reduced over repeated pairs."""
        if at is None:
            out = column(meta[big]).astype(dtype, copy=False)
        else:
            out = np.empty(len(key), dtype=dtype)
            out[at] = np.concatenate([column(m) for p, m in enumerate(meta) if p != big])[order]
            taken = np.zeros(len(key), dtype=bool)
            taken[at] = True
            out[~taken] = column(meta[big])
        return out if unique else reduce.reduceat(out, starts)

    weight = merged(lambda m: np.full(m[0], m[1]), np.float64, np.maximum)
    kind = merged(lambda m: np.full(m[0], m[2], dtype=np.uint8), np.uint8, np.bitwise_or)
    superseded = merged(lambda m: np.full(m[0], -1, np.int64) if m[3] is None else m[3], np.int64, np.maximum)
    if not unique:
        key = key[starts]
    return ContradictionPairs(i=key // width, j=key % width, weight=weight, kind=kind, superseded=superseded)


# Up to this many candidates every text's claims are read; above it only those of chunks in a
# redundancy pair (reading claims costs ~0.1 ms a text: 2 s at n = 20,000).
CLAIM_ALL_TEXTS_LIMIT = 5000


def _claims(texts: list[str], red_i: np.ndarray, red_j: np.ndarray):
    if len(texts) <= CLAIM_ALL_TEXTS_LIMIT:
        return find_claim_conflicts(texts)
    members = np.unique(np.concatenate([red_i, red_j])).tolist()
    conflicts, agreements = find_claim_conflicts([texts[k] for k in members])
    remap = lambda found: {(members[a], members[b]): v for (a, b), v in found.items()}  # noqa: E731
    return remap(conflicts), remap(agreements)


def _codes(column: np.ndarray) -> np.ndarray:
    """Interned codes as one contiguous int64 layout, so the kernel compiles once."""
    return np.ascontiguousarray(column, dtype=np.int64)


# similarity kind -> (redundancy threshold, duplicate threshold)
DEFAULT_THRESHOLDS = {"cosine": (0.80, 0.95), "minhash": (0.50, 0.80)}
SIMILARITY_CHOICES = ("auto", "cosine", "minhash", "none")


def signals(
    packed: PackedCandidates,
    *,
    similarity: str = "auto",
    redundancy_threshold: float | None = None,
    duplicate_threshold: float | None = None,
    confirm_ratio: float = 85.0,
    shingle_size: int = 3,
    signature_bins: int = 128,
    drift_severity: float = 0.5,
    drift_threshold: float = 0.6,
    claims: bool = True,
    claim_severity: float = 1.0,
    zero_outside_window: bool = False,
    block_size: int = 512,
) -> Signals:
    """Compute the pairwise signals of one query's candidates.

    Parameters
    ----------
    packed : PackedCandidates
        From :func:`ctxselect.pack`.
    similarity : {"auto", "cosine", "minhash", "none"}
        ``auto`` uses the cosine of embeddings when the candidates have them, else MinHash of word
        shingles when they have text, else none.
    redundancy_threshold, duplicate_threshold : float, optional
        Pairs at or above the first are redundant; at or above the second, near-duplicates.
        Defaults: cosine 0.80 / 0.95, MinHash (estimated Jaccard) 0.50 / 0.80.
    confirm_ratio : float
        A MinHash near-duplicate is confirmed when rapidfuzz's ``fuzz.ratio`` of the two texts
        (their first :data:`CONFIRM_CHARS` characters) reaches this (0–100).
    shingle_size : int
        Words per shingle (texts with fewer words are one shingle).
    signature_bins : int
        MinHash signature length.
    drift_severity : float
        Severity of a version-drift contradiction (near-duplicates whose numbers differ).
    drift_threshold : float
        Text similarity (estimated Jaccard of word 3-shingles) from which two chunks whose numbers
        differ count as drift; lower than the duplicate threshold because one edited number in a
        short chunk changes three shingles (a 25-word chunk falls to ~0.78).
    claims : bool
        Detect free-text claims that disagree (numbers and dates about the same thing), among
        pairs whose claims share a unit and context words (:mod:`ctxselect.claims`); above
        5,000 candidates, only among chunks that are in a redundancy pair.
    claim_severity : float
        Severity of a claim contradiction (1.0: never both selected).
    zero_outside_window : bool
        Freshness 0 for chunks outside their validity window at ``now``.
    block_size : int
        Rows per similarity tile (memory O(block_size x n)).

    Returns
    -------
    Signals
    """
    if similarity not in SIMILARITY_CHOICES:
        raise InputError(field="similarity", expected="one of " + ", ".join(SIMILARITY_CHOICES),
                         found=similarity)
    for name, value in (("redundancy_threshold", redundancy_threshold),
                        ("duplicate_threshold", duplicate_threshold)):
        if value is not None:
            checks.number(value, name, low=0.0, high=1.0, low_open=True)
    checks.integer(shingle_size, "shingle_size", low=1)
    checks.integer(signature_bins, "signature_bins", low=8)
    checks.integer(block_size, "block_size", low=1)
    checks.number(drift_severity, "drift_severity", low=0.0, high=1.0)
    checks.number(drift_threshold, "drift_threshold", low=0.0, high=1.0, low_open=True)

    n = packed.n
    texts = [c.text for c in packed.candidates]
    if similarity == "auto":
        similarity = ("cosine" if packed.embeddings is not None
                      else "minhash" if any(t.strip() for t in texts) else "none")
    if similarity == "cosine" and packed.embeddings is None:
        raise InputError(field="similarity", expected="embeddings on the candidates for cosine",
                         found="candidates without embeddings")

    empty = np.empty(0, np.int64)
    if similarity == "none" or n < 2:
        ri, rj, rw, dup = empty, empty.copy(), np.empty(0), np.zeros(0, bool)
        near_i, near_j = empty, empty
    else:
        red_t, dup_t = DEFAULT_THRESHOLDS[similarity]
        red_t = red_t if redundancy_threshold is None else redundancy_threshold
        dup_t = dup_t if duplicate_threshold is None else duplicate_threshold
        low = min(red_t, dup_t)
        if similarity == "cosine":
            ri, rj, rw = cosine_pairs(packed.embeddings, low, block=block_size, ids=packed.ids)
            near = rw >= dup_t
            dup = near.copy()
        else:
            sig, _words = text_signatures(texts, shingle_size=shingle_size, bins=signature_bins)
            ri, rj, rw = minhash_pairs(sig, low)
            near = rw >= dup_t
            dup = near.copy()
            if near.any():
                a = [texts[k][:CONFIRM_CHARS] for k in ri[near]]
                b = [texts[k][:CONFIRM_CHARS] for k in rj[near]]
                ratio = process.cpdist(a, b, scorer=fuzz.ratio, workers=1)
                dup[near] = np.asarray(ratio) >= confirm_ratio
        drifting = rw >= min(dup_t, drift_threshold) if similarity == "minhash" else near
        near_i, near_j = ri[drifting], rj[drifting]
        keep = rw >= red_t
        ri, rj, rw, dup = ri[keep], rj[keep], rw[keep], dup[keep]

    parts = []  # (i, j, severity, kind, superseded or None), each sorted by (i, j)
    for f in range(len(packed.field_names)):
        parts.append((*_differing_code_pairs(_codes(packed.field_values[:, f]), empty),
                      float(packed.field_severity[f]), ConflictKind.FIELD, None))
    reqs = packed.requirements
    if reqs.version_conflicts:
        vi, vj = _differing_code_pairs(_codes(packed.version), _codes(packed.doc))
        parts.append((vi, vj, reqs.version_conflict_severity, ConflictKind.VERSION,
                      _version_superseded(packed, vi, vj, _version_rank(packed))))
        del vi, vj
    if drift_severity > 0 and len(near_i):
        di, dj = _drift_pairs(packed, near_i, near_j)
        parts.append((di, dj, drift_severity, ConflictKind.DRIFT, None))
        del di, dj
    claim_conflicts, claim_agreements = {}, {}
    if claims and any(t.strip() for t in texts):
        claim_conflicts, claim_agreements = _claims(texts, ri, rj)
        if claim_conflicts:
            keys = np.array(sorted(claim_conflicts), dtype=np.int64).reshape(-1, 2)
            parts.append((keys[:, 0], keys[:, 1], claim_severity, ConflictKind.CLAIM, None))
    contradictions = _merge_contradictions(n, parts)

    clusters = _components(n, ri[dup], rj[dup])
    return Signals(
        freshness=chunk_freshness(packed, zero_outside_window=zero_outside_window),
        redundancy=PairList(ri, rj, rw),
        duplicate=dup,
        contradictions=contradictions,
        clusters=clusters,
        similarity=similarity,
        claim_conflicts=claim_conflicts,
        claim_agreements=claim_agreements,
    )
