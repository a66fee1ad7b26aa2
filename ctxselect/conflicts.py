"""Conflicts among a set of chunks: differing claim fields, and versions of one document.

This is the exact, all-pairs check used to score a given context (``inspect``); each conflicting
pair is counted once, with the highest severity among its reasons (article 000's loop counted
outside its inner loop; that bug is not repeated here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .packing import NO_CODE, PackedCandidates

__all__ = ["ConflictPair", "conflict_pairs"]


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


def conflict_pairs(packed: PackedCandidates, mask: np.ndarray | None = None) -> list[ConflictPair]:
    """Every conflicting pair among the chunks selected by ``mask`` (all when ``None``).

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
    m = len(index)
    if m < 2:
        return []
    severity = np.zeros((m, m), dtype=np.float64)
    reasons: dict[tuple[int, int], list[str]] = {}

    def add(hits: np.ndarray, weight: float, describe) -> None:
        np.maximum(severity, np.where(hits, weight, 0.0), out=severity)
        for i, j in zip(*np.nonzero(hits)):
            reasons.setdefault((int(i), int(j)), []).append(describe(index[i], index[j]))

    for f, name in enumerate(packed.field_names):
        codes = packed.field_values[index, f]
        values = packed.field_value_names[f]
        add(_pair_matrix(codes), float(packed.field_severity[f]),
            lambda i, j, f=f, name=name, values=values:
            f"field {name}: {values[packed.field_values[i, f]]!r} vs {values[packed.field_values[j, f]]!r}")

    reqs = packed.requirements
    if reqs.version_conflicts:
        doc = packed.doc[index]
        same_doc = (doc[:, None] == doc[None, :]) & (doc[:, None] != NO_CODE)
        add(same_doc & _pair_matrix(packed.version[index]), reqs.version_conflict_severity,
            lambda i, j: (f"version {packed.version_names[packed.version[i]]!r} vs "
                          f"{packed.version_names[packed.version[j]]!r} of doc {packed.doc_names[packed.doc[i]]!r}"))

    return [
        ConflictPair(packed.ids[index[i]], packed.ids[index[j]], float(severity[i, j]), tuple(why))
        for (i, j), why in sorted(reasons.items())
    ]
