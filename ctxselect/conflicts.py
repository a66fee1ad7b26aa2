"""Conflicts among a set of chunks: differing claim fields, and versions of one document.

This is the exact, all-pairs check used to score a given context (``inspect``); each conflicting
pair is counted once, with the highest severity among its reasons (article 000's loop counted
outside its inner loop; that bug is not repeated here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .claims import find_claim_conflicts
from .packing import NO_CODE, PackedCandidates

__all__ = ["ConflictPair", "conflict_pairs", "pair_conflicts"]


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
        ``"field <name>: <value a> vs <value b>"`` or ``"version <va> vs <vb> of doc <d>"``.
    """

    a: str
    b: str
    severity: float
    reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "severity": self.severity, "reasons": list(self.reasons)}


def _pair_matrix(codes: np.ndarray) -> np.ndarray:
    """True where both chunks carry a code and the codes differ (upper triangle only)."""
    present = codes != NO_CODE
    differ = (codes[:, None] != codes[None, :]) & present[:, None] & present[None, :]
    return np.triu(differ, k=1)


def pair_conflicts(packed: PackedCandidates, i: int, j: int) -> list[tuple[str, float]]:
    """Why chunks i and j conflict by their fields and versions, each reason with its severity
    (empty when they do not conflict)."""
    out = []
    for f, name in enumerate(packed.field_names):
        a, b = packed.field_values[i, f], packed.field_values[j, f]
        if a != NO_CODE and b != NO_CODE and a != b:
            values = packed.field_value_names[f]
            out.append((f"field {name}: {values[a]!r} vs {values[b]!r}", float(packed.field_severity[f])))
    reqs = packed.requirements
    if (reqs.version_conflicts and packed.doc[i] != NO_CODE and packed.doc[i] == packed.doc[j]
            and packed.version[i] != NO_CODE and packed.version[j] != NO_CODE
            and packed.version[i] != packed.version[j]):
        out.append((f"version {packed.version_names[packed.version[i]]!r} vs "
                    f"{packed.version_names[packed.version[j]]!r} of doc {packed.doc_names[packed.doc[i]]!r}",
                    reqs.version_conflict_severity))
    return out


def conflict_pairs(packed: PackedCandidates, mask: np.ndarray | None = None, *, claims: bool = True,
                   claim_severity: float = 1.0) -> list[ConflictPair]:
    """Every conflicting pair among the chunks selected by ``mask`` (all when ``None``).

    Field and version conflicts are found with vectorised comparisons; with ``claims``, free-text
    claims that disagree too (:func:`ctxselect.claims.find_claim_conflicts`), quoted with their
    values ("claim: '3,559 people' vs '10,000 people'").

    Parameters
    ----------
    packed : PackedCandidates
    mask : bool array, optional

    Returns
    -------
    list of ConflictPair
        Sorted by position of the first chunk, then the second.
    """
    index = np.arange(packed.n) if mask is None else np.flatnonzero(mask)
    if len(index) < 2:
        return []
    hits = np.zeros((len(index), len(index)), dtype=bool)
    for f in range(len(packed.field_names)):
        hits |= _pair_matrix(packed.field_values[index, f])
    if packed.requirements.version_conflicts:
        doc = packed.doc[index]
        same_doc = (doc[:, None] == doc[None, :]) & (doc[:, None] != NO_CODE)
        hits |= same_doc & _pair_matrix(packed.version[index])
    found: dict[tuple[int, int], list[tuple[str, float]]] = {}
    for a, b in zip(*np.nonzero(hits)):
        i, j = int(index[a]), int(index[b])
        found[(i, j)] = pair_conflicts(packed, i, j)
    if claims:
        texts = [packed.candidates[k].text for k in index.tolist()]
        disagreements, _ = find_claim_conflicts(texts)
        for (a, b), pairs in disagreements.items():
            key = (int(index[a]), int(index[b]))
            found.setdefault(key, []).extend(
                (f"claim: {ca.raw!r} vs {cb.raw!r}", claim_severity) for ca, cb in pairs)
    return [ConflictPair(packed.ids[i], packed.ids[j], max(sev for _, sev in reasons),
                         tuple(why for why, _ in reasons))
            for (i, j), reasons in sorted(found.items())]
