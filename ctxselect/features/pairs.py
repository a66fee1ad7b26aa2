"""What the signals stage returns: sparse pair lists, contradiction kinds, and :class:`Signals`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ctxselect.features.query_terms import QueryProbes

__all__ = ["ConflictKind", "PairList", "ContradictionPairs", "Signals"]


class ConflictKind(IntFlag):
    """Why two chunks contradict each other (a pair may have several)."""

    FIELD = 1    #: a conflict field present in both with different values (kept as codes, not listed)
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
        Drift and claim conflicts as pairs; field and version conflicts stay per-value codes
        (``packed.field_values``, ``packed.doc`` and ``packed.version``; their pairs on request:
        :func:`~ctxselect.features.contradictions.field_pairs`,
        :func:`~ctxselect.features.contradictions.version_pairs`).
    clusters : int64 array (n,)
        Connected components of the near-duplicate graph (labels 0..C-1).
    similarity : str
        ``"cosine"``, ``"minhash"`` or ``"none"``.
    claim_conflicts, claim_agreements : dict (i, j) -> list of (Claim, Claim)
        Free-text claims two chunks disagree / agree on (:mod:`ctxselect.text.claims`).
    query_probes : QueryProbes or None
        The question's probe terms and the texts that hold them, when ``signals`` was given the
        question (:mod:`ctxselect.features.query_terms`).
    claim_readable : bool array (n,) or None
        The texts that may hold a claim joining another's (the claim prefilter over every text, up
        to 5,000 candidates): a selection's report joins the claims of these only; None when not known.
    compared : bool array (n,) or None
        The chunks whose similarity to every other chunk was computed, when the cosine tiles were
        cut at a deadline, a reach (``signals(deadline=..., reach=...)``) or the pair budget; None
        when every pair was compared.
    reach : int or None
        When not every pair was compared: how many chunks the reach asked to compare (None: no
        reach, the deadline or the pair budget cut the tiles).
    cut_by_time : bool
        Whether the deadline stopped the cosine's tiles before every chunk, or every chunk the
        reach asked for, was compared.
    cut_by_pairs : bool
        Whether the cosine's pair budget (``max(PAIR_FLOOR, PAIRS_PER_ROW * n)`` pairs,
        :mod:`ctxselect.features.similarity`) stopped its tiles or its chaining: rows so alike that
        nearly every pair is one.
    capped : tuple of str
        A sentence for each bound on the contradictions' work that left pairs unexamined (drift's
        cap on the pairs it examines one by one, the claim join's budgets); empty when none bound.
    duplicate_threshold : float or None
        The similarity from which a pair is a near-duplicate (``duplicate``), when pairs were computed.
    """

    freshness: np.ndarray
    redundancy: PairList
    duplicate: np.ndarray
    contradictions: ContradictionPairs
    clusters: np.ndarray
    similarity: str
    claim_conflicts: dict = None
    claim_agreements: dict = None
    query_probes: QueryProbes | None = None
    claim_readable: np.ndarray | None = None
    compared: np.ndarray | None = None
    reach: int | None = None
    cut_by_time: bool = False
    cut_by_pairs: bool = False
    capped: tuple[str, ...] = ()
    duplicate_threshold: float | None = None

    def duplicate_groups(self) -> list[np.ndarray]:
        """The clusters with two or more members, each as sorted positions."""
        if self.clusters.size == 0:
            return []
        counts = np.bincount(self.clusters)
        order = self.clusters.argsort(kind="stable")
        bounds = [0, *counts.cumsum().tolist()]  # Python ints: each group sliced without NumPy scalars
        return [order[bounds[c]:bounds[c + 1]] for c in (counts >= 2).nonzero()[0].tolist()]
