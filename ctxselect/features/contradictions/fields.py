"""Field conflicts: chunks that state different values of a conflict field.

They are kept as per-value codes (``packed.field_values``), never as a list of pairs: k chunks
carrying a field with a few values disagree in up to k²/4 pairs (5.3 million at n = 50,000 with 8 %
of chunks carrying one of three values), while everything that needs them reads the codes — the
optimizer's "one value per field" constraints, the greedy selectors' blocking, the report's exact
counts (:mod:`ctxselect.features.contradictions.context`). Pairs are made only where a pair is
what the model needs: the penalties of *soft* fields (severity below the hard threshold), which
the contradiction-density limit reads too — O(k²) pairs for a soft field with k carriers, as
before; hard fields, the default, make none.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from ctxselect.features.pairs import ConflictKind, ContradictionPairs
from ctxselect.kernels.pairs import _differing_code_pairs
from ctxselect.packing import PackedCandidates

__all__ = ["field_pairs", "union_contradictions", "disagree_on_codes", "disagree_on_fields", "disagree_on_versions",
           "some_differ"]


def field_pairs(packed: PackedCandidates, fields: Iterable[int]) -> ContradictionPairs:
    """The pairs (i < j) that disagree on one of ``fields`` (both carry it, values differ), with
    the highest severity among those fields."""
    empty = np.empty(0, np.int64)
    out = ContradictionPairs(empty, empty.copy(), np.empty(0), np.empty(0, np.uint8), empty.copy())
    for f in fields:
        codes = np.ascontiguousarray(packed.field_values[:, f], dtype=np.int64)
        i, j = _differing_code_pairs(codes, empty)
        severity = float(packed.field_severity[f])
        part = ContradictionPairs(i, j, np.full(len(i), severity), np.full(len(i), ConflictKind.FIELD, np.uint8),
                                  np.full(len(i), -1, np.int64))
        out = union_contradictions(packed.n, out, part)
    return out


def union_contradictions(n: int, a: ContradictionPairs, b: ContradictionPairs) -> ContradictionPairs:
    """One entry per pair of ``a`` or ``b``: the highest severity, kinds OR-ed, the known
    superseded side kept (as :func:`~ctxselect.features.contradictions.detect.merge_contradictions`)."""
    if not len(b):
        return a
    if not len(a):
        return b
    width = max(n, 1)
    key = np.concatenate([a.i * width + a.j, b.i * width + b.j])
    order = key.argsort(kind="stable")
    key = key[order]
    starts = np.concatenate(([True], key[1:] != key[:-1])).nonzero()[0]
    weight = np.maximum.reduceat(np.concatenate([a.weight, b.weight])[order], starts)
    kind = np.bitwise_or.reduceat(np.concatenate([a.kind, b.kind])[order], starts).astype(np.uint8)
    superseded = np.maximum.reduceat(np.concatenate([a.superseded, b.superseded])[order], starts)
    key = key[starts]
    return ContradictionPairs(key // width, key % width, weight, kind, superseded)


def disagree_on_versions(packed: PackedCandidates, mask: np.ndarray) -> bool:
    """Whether two chunks of ``mask`` are different versions of one document (never, when the
    requirements turn version conflicts off): read from the codes, as fields are."""
    if not packed.requirements.version_conflicts:
        return False
    at = (mask & (packed.doc >= 0) & (packed.version >= 0)).nonzero()[0]
    return some_differ(packed.version[at], packed.doc[at])  # one document, two version codes


def some_differ(value: np.ndarray, group: np.ndarray | None = None) -> bool:
    """Whether two of ``value`` differ (within one ``group``, when given): the values sorted by
    group, two neighbours of one group differ exactly when the group holds two values (O(m log m)
    with a few NumPy calls, where counting distinct values took several ``np.unique``)."""
    if len(value) < 2:
        return False
    if group is None:
        return bool((value != value[0]).any())
    order = group.argsort(kind="stable")
    group, value = group[order], value[order]
    return bool(((group[1:] == group[:-1]) & (value[1:] != value[:-1])).any())


def disagree_on_codes(packed: PackedCandidates, mask: np.ndarray, fields: Iterable[int]) -> bool:
    """Whether two chunks of ``mask`` conflict on a per-value code: a value of one of ``fields``
    (:func:`disagree_on_fields`) or, where version conflicts are on, the version of one document
    (:func:`disagree_on_versions`)."""
    return disagree_on_fields(packed, mask, fields) or disagree_on_versions(packed, mask)


def disagree_on_fields(packed: PackedCandidates, mask: np.ndarray, fields: Iterable[int]) -> bool:
    """Whether two chunks of ``mask`` state different values of one of ``fields``."""
    for f in fields:
        values = packed.field_values[mask, f]
        values = values[values >= 0]
        if values.size > 1 and (values != values[0]).any():
            return True
    return False
