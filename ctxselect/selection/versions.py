"""Which chunks a newer version of their document supersedes, read from the per-chunk codes
(``doc_id``, ``version``) in O(n log n), never from a list of version pairs.

Chunk *b* is newer than chunk *a* when both carry a ``doc_id`` and a ``version``, the same document
and different versions, and *b*'s version is later (:func:`~ctxselect.features.contradictions.version_rank`:
natural order, "v10" after "v9") or, where the two versions rank alike ("V1" and "v1"), both are dated
and *b*'s timestamp is later — the order
:func:`~ctxselect.features.contradictions.version_superseded` gives each version conflict. One long
document indexed in two versions has a quarter of n² such pairs: listed, with every older chunk's
newer ones, they took a call of 5,000 such chunks to 5 s and 1.4 GB (2026-12-06); read from the codes,
0.11 s and no memory to speak of.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctxselect.features.contradictions import version_rank
from ctxselect.packing import PackedCandidates

__all__ = ["Supersession", "supersession"]


@dataclass(frozen=True)
class Supersession:
    """The version order of the chunks of each document with two version codes or more
    (:func:`supersession`), as flat arrays over those chunks, ordered by (document, version rank
    from the latest down, position).

    ``pos``: the chunks' positions; ``offset``: per chunk, a multiple of n + 1 that falls from one
    document to the next (a running minimum then never reads an earlier document's chunks);
    ``prev``: the index of the last chunk of the same document with a later version, -1 where there
    is none; ``tied``: the index arrays of the (document, rank) blocks whose dated chunks hold two
    version codes or more, where timestamps order them.
    """

    n: int
    pos: np.ndarray
    offset: np.ndarray
    prev: np.ndarray
    code: np.ndarray
    stamp: np.ndarray
    tied: tuple

    def first_newer(self, allowed: np.ndarray) -> dict[int, int]:
        """Per chunk that a chunk of ``allowed`` (bool, one per candidate) is newer than: the first
        such newer chunk (lowest position). Chunks nothing allowed supersedes are not keys.

        Returns
        -------
        dict position -> position
            In ascending order of the older chunk's position.
        """
        if not len(self.pos):
            return {}
        none = self.n
        candidate = np.where(np.asarray(allowed, dtype=bool)[self.pos], self.pos, none)
        running = np.minimum.accumulate(candidate + self.offset) - self.offset  # within each document
        best = np.where(self.prev >= 0, running[np.maximum(self.prev, 0)], none)
        for block in self.tied:
            best[block] = np.minimum(best[block], _later_stamp(candidate[block], self.code[block],
                                                               self.stamp[block], none))
        older = (best < none).nonzero()[0]
        order = self.pos[older].argsort(kind="stable")
        return dict(zip(self.pos[older][order].tolist(), best[older][order].tolist()))

    def __bool__(self) -> bool:
        return bool(len(self.pos))


def supersession(packed: PackedCandidates) -> Supersession:
    """The :class:`Supersession` of ``packed``'s chunks (none when its requirements turn version
    conflicts off)."""
    n = packed.n
    at = ((packed.doc >= 0) & (packed.version >= 0)).nonzero()[0]
    if not packed.requirements.version_conflicts or len(at) < 2:
        empty = np.zeros(0, dtype=np.int64)
        return Supersession(n, empty, empty, empty, empty, np.zeros(0), ())
    doc, code = packed.doc[at], packed.version[at]
    by_doc = np.lexsort((code, doc))  # the documents with two version codes or more
    doc_sorted, code_sorted = doc[by_doc], code[by_doc]
    starts = np.concatenate(([True], doc_sorted[1:] != doc_sorted[:-1])).nonzero()[0]
    ends = np.concatenate((starts[1:], [len(at)]))
    several = code_sorted[starts] != code_sorted[ends - 1]
    at = np.sort(at[by_doc][np.repeat(several, ends - starts)])
    rank = version_rank(packed, at)[at]
    order = np.lexsort((at, -rank, packed.doc[at]))
    pos, rank, doc = at[order], rank[order], packed.doc[at][order]
    first = np.concatenate(([True], doc[1:] != doc[:-1]))
    offset = (np.count_nonzero(first) - (first.cumsum() - 1)) * (n + 1)
    block = first | np.concatenate(([True], rank[1:] != rank[:-1]))
    index = np.arange(len(pos))
    block_start = np.maximum.accumulate(np.where(block, index, 0))
    doc_start = np.maximum.accumulate(np.where(first, index, 0))
    prev = np.where(block_start > doc_start, block_start - 1, -1)
    code, stamp, dated = packed.version[pos], packed.timestamp[pos], packed.has_timestamp[pos]
    tied = []
    bounds = np.concatenate((block.nonzero()[0], [len(pos)]))
    for a in (bounds[1:] - bounds[:-1] > 1).nonzero()[0].tolist():  # blocks of two chunks or more
        members = index[bounds[a]:bounds[a + 1]][dated[bounds[a]:bounds[a + 1]]]
        if len(members) > 1 and bool((code[members] != code[members[0]]).any()):
            tied.append(members)
    return Supersession(n, pos, offset.astype(np.int64), prev.astype(np.int64), code, stamp, tuple(tied))


def _later_stamp(candidate, code, stamp, none: int) -> np.ndarray:
    """Per chunk (of one document and rank, all dated), the lowest ``candidate`` among the chunks of
    another version code with a later timestamp: the two lowest of different codes are kept over the
    later timestamps, so each chunk is read once."""
    out = np.full(len(code), none, dtype=np.int64)
    order = np.argsort(-stamp, kind="stable").tolist()
    stamp, code, candidate = stamp.tolist(), code.tolist(), candidate.tolist()
    best = [(none, -1), (none, -1)]  # (lowest candidate, its code), then the lowest of another code
    k = 0
    while k < len(order):
        end = k
        while end < len(order) and stamp[order[end]] == stamp[order[k]]:
            end += 1
        for t in order[k:end]:  # the chunks of this timestamp see only later ones
            out[t] = best[0][0] if best[0][1] != code[t] else best[1][0]
        for t in order[k:end]:
            value, c = candidate[t], code[t]
            if value == none:
                continue
            if value < best[0][0]:
                best = [(value, c), best[0] if best[0][1] != c else best[1]]
            elif c != best[0][1] and value < best[1][0]:
                best[1] = (value, c)
        k = end
    return out
