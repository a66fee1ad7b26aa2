"""Contradictions among one query's candidates, detected once per call: the one definition.

Four kinds (:class:`~ctxselect.features.pairs.ConflictKind`): differing values of a conflict field
and different versions of one document (the older is *superseded*), both kept as per-value codes
(``packed.field_values``; ``packed.doc`` and ``packed.version``: one document in two versions holds
a quarter of its chunks' count squared in version pairs), their pairs only on request
(:func:`~ctxselect.features.contradictions.fields.field_pairs`, :func:`version_pairs`);
near-duplicate texts whose numbers differ (drift), and free-text claims that disagree
(:mod:`ctxselect.text.claims`). These last two give sorted, unique pairs; :func:`merge_contradictions`
merges them into one :class:`~ctxselect.features.pairs.ContradictionPairs` (highest severity, kinds
OR-ed).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ctxselect.errors import InputError
from ctxselect.features.pairs import ConflictKind, ContradictionPairs
from ctxselect.kernels.pairs import _differing_code_pairs
from ctxselect.packing import PackedCandidates
from ctxselect.text.claim_keys import EXOTIC, hinted_texts
from ctxselect.text.claims import CLAIM_READ_CHARS, MAX_CLAIM_CHARS, claim_readable, claim_titles, find_claim_conflicts
from ctxselect.text.words import number_tokens, numbers_of, years_in

__all__ = ["detect_contradictions", "merge_contradictions", "version_pairs", "version_rank", "version_superseded",
           "drift_pairs", "claim_pairs", "drift_numbers", "drift_years", "drift_tokens", "number_multiset",
           "CLAIM_ALL_TEXTS_LIMIT",
           "DRIFT_PAIRS_PER_CANDIDATE", "DRIFT_PAIR_FLOOR"]


def _natural_key(version: str):
    return tuple((0, int(p), "") if p.isdecimal() else (1, 0, p) for p in re.findall(r"\d+|[^\d.\-_ ]+", version.lower()))


def version_rank(packed: PackedCandidates, at: np.ndarray | None = None) -> np.ndarray:
    """Per chunk, the order of its version among its document's versions (higher = newer);
    -1 when the chunk has no doc/version. Versions compare naturally ("v10" > "v9"); the
    timestamp breaks ties between versions that do not compare. ``at``: the positions to rank,
    every chunk of the documents they hold (default: every chunk with a doc and a version); the
    others get -1."""
    rank = np.full(packed.n, -1, dtype=np.int64)
    names = packed.version_names
    by_doc: dict[int, list[tuple[tuple, int]]] = {}
    keys: dict[int, tuple] = {}  # per version name: a few names serve many chunks
    if at is None:
        at = ((packed.doc >= 0) & (packed.version >= 0)).nonzero()[0]
    for i, doc, code in zip(at.tolist(), packed.doc[at].tolist(), packed.version[at].tolist()):
        key = keys.get(code)
        if key is None:
            key = keys[code] = _natural_key(names[code])
        by_doc.setdefault(doc, []).append((key, i))
    for members in by_doc.values():
        order = {key: r for r, key in enumerate(sorted({key for key, _ in members}))}
        for key, i in members:
            rank[i] = order[key]
    return rank


def version_superseded(packed, vi, vj, rank) -> np.ndarray:
    ri, rj = rank[vi], rank[vj]
    older = np.where(ri < rj, vi, np.where(rj < ri, vj, -1))
    tie = older < 0
    if tie.any():
        ti, tj = packed.timestamp[vi], packed.timestamp[vj]
        dated = packed.has_timestamp[vi] & packed.has_timestamp[vj]
        older = np.where(tie & dated & (ti < tj), vi, np.where(tie & dated & (tj < ti), vj, older))
    return older


# Drift reads a text where claims do (ctxselect.text.claims.find_claim_conflicts): the text cut to
# CLAIM_READ_CHARS characters, and of it the numbers that start before MAX_CLAIM_CHARS.
_DIGIT_RUN = re.compile(r"\d+")  # a number starts where a run of digits does (its look-behind: no \w before)
#: After the bulk steps, at most max(DRIFT_PAIR_FLOOR, DRIFT_PAIRS_PER_CANDIDATE * n) near pairs are
#: examined for drift one by one in a call (:func:`drift_pairs`, where the measurements are): 8,000 at
#: 2,000 candidates, 40-80 ms for drift and ~30-60 ms for their corroboration with every pair near.
DRIFT_PAIRS_PER_CANDIDATE = 4
DRIFT_PAIR_FLOOR = 5_000


def drift_numbers(text: str, starts=None) -> list[str]:
    """The numbers drift reads in ``text``, as written and sorted: those that start within its first
    :data:`~ctxselect.text.claims.MAX_CLAIM_CHARS` characters (the prefix claims are read from), each read
    in the text cut at :data:`~ctxselect.text.claims.CLAIM_READ_CHARS`, as claims read it. ``starts``: every position
    below that where a number may start (:func:`~ctxselect.text.claim_keys.hinted_texts`), if known."""
    cut = text[:CLAIM_READ_CHARS]
    if starts is None:
        starts = [m.start() for m in _DIGIT_RUN.finditer(cut, 0, MAX_CLAIM_CHARS)]
    return sorted(number_tokens(cut, starts))


def drift_years(text: str) -> frozenset[int]:
    """The years drift reads in ``text``: those of its prefix cut as :func:`drift_numbers` cuts it."""
    return frozenset(years_in(text[:CLAIM_READ_CHARS]))


def drift_tokens(packed: PackedCandidates, read: np.ndarray | None) -> dict[int, list[str]]:
    """:func:`drift_numbers` of the texts ``read`` marks (a bool per text; None: all), positions found
    in the buffer (exotic texts: the plain pattern)."""
    candidates = packed.candidates
    tokens: dict[int, list[str]] = {}
    found, bounds, positions, flags = hinted_texts(packed.text_buffer, read, MAX_CLAIM_CHARS, CLAIM_READ_CHARS)
    for k, (t, flag) in enumerate(zip(found, flags)):
        if not flag & EXOTIC:  # no position, no number (half the texts at 20,000): the call skipped
            a, b = bounds[k], bounds[k + 1]
            tokens[t] = drift_numbers(candidates[t].text, positions[a:b]) if a < b else []
    for t in range(packed.n) if read is None else read.nonzero()[0].tolist():
        if t not in tokens:
            tokens[t] = drift_numbers(candidates[t].text)
    return tokens


def number_multiset(counts: Counter) -> frozenset:
    """A multiset of numbers as a set, ``(value, k)`` for each k below its count: multiset difference
    and inclusion become set ones (done in C)."""
    return frozenset((v, k) for v, c in counts.items() for k in range(c))


def _examined(packed: PackedCandidates, i: np.ndarray, j: np.ndarray, rest: np.ndarray, cap: int) -> np.ndarray:
    """The ``cap`` pairs of ``rest`` (positions in i, j) drift examines: by the higher relevance rank
    of their weaker chunk first, then (i, j); returned in their given order."""
    n = packed.n
    rank = np.empty(n, dtype=np.int64)
    rank[(-packed.relevance).argsort(kind="stable")] = np.arange(n)
    weaker = np.maximum(rank[i[rest]], rank[j[rest]])
    kth = np.partition(weaker, cap - 1)[cap - 1]
    take = weaker < kth
    tie = np.flatnonzero(weaker == kth)
    need = cap - int(take.sum())
    if need < len(tie):
        key = i[rest[tie]].astype(np.int64) * n + j[rest[tie]]
        tie = tie[np.argpartition(key, need - 1)[:need]]
    take[tie] = True
    return rest[take]


def drift_pairs(packed: PackedCandidates, i: np.ndarray, j: np.ndarray, info: dict | None = None):
    """Near-duplicate pairs whose texts each state a number the other does not — unless they are
    about different things: each names a year the other does not ("27 goals in 2018", "31 goals
    in 2019"), or both carry a title (or section) and they differ (one template, two pages).

    Numbers and years are read in the prefix claims read (:func:`drift_numbers`): a number beyond
    :data:`~ctxselect.text.claims.MAX_CLAIM_CHARS` makes no drift.

    The pairs are settled in bulk first: each text's multiset of number values gets an integer code
    (texts writing the same numbers are read once), and a pair whose texts hold the same values, or
    one of which holds none, is dropped in NumPy. At most ``max(DRIFT_PAIR_FLOOR,
    DRIFT_PAIRS_PER_CANDIDATE * n)`` of the rest are examined one by one (set inclusions in C, then the
    years and titles), those of the most relevant chunks first (by the relevance rank of a pair's weaker
    chunk, then (i, j)); the others are not examined and make no drift. Measured: on the bench dumps
    (MuSiQue, TimeQA, MultiHop-RAG: at most 32 candidates, 496 pairs, a query) the cap cannot bind, and
    on ``ctxselect gen`` at 2,000 candidates (20 queries, up to 203 near pairs) every pair is settled in
    bulk; with every embedding equal at 2,000 candidates (~2 million near pairs, each text its own
    numbers) drift takes 40-80 ms at the cap (8,000 pairs examined), 11-15 s for the whole call before.

    ``info``, if given, receives ``examined`` (the pairs looked at one by one), ``cap`` and ``pairs``
    (those the bulk steps left, all examined when the cap does not bind)."""
    keep = np.zeros(len(i), dtype=bool)
    if not len(i):
        return i[keep], j[keep]
    candidates = packed.candidates
    member = np.zeros(packed.n, dtype=bool)
    member[i], member[j] = True, True
    rows = member.nonzero()[0]  # (np.unique of the pairs: 64 ms at 2 million pairs)
    tokens = drift_tokens(packed, member)
    value_code = np.full(packed.n, -1, dtype=np.int64)  # -1: no number (nothing the other lacks)
    written: dict[tuple, int] = {}  # token list -> its values' code: texts writing the same numbers read once
    values: dict[frozenset, int] = {}  # multiset of values (as number_multiset) -> code, in order
    for t in rows.tolist():
        key = tuple(tokens[t])
        if not key:
            continue
        code = written.get(key)
        if code is None:
            code = written[key] = values.setdefault(number_multiset(numbers_of(key)), len(values))
        value_code[t] = code
    expanded = list(values)  # per value code
    ci, cj = value_code[i], value_code[j]
    rest = ((ci != cj) & (ci >= 0) & (cj >= 0)).nonzero()[0]  # differing values, each side some
    del ci, cj
    cap, pairs = max(DRIFT_PAIR_FLOOR, DRIFT_PAIRS_PER_CANDIDATE * packed.n), len(rest)
    if pairs > cap:
        rest = _examined(packed, i, j, rest, cap)
    if info is not None:
        info.update(examined=len(rest), cap=cap, pairs=pairs)
    years: dict[int, frozenset] = {}
    titles = None
    vi, vj = value_code[i[rest]].tolist(), value_code[j[rest]].tolist()
    for e, a, b, ca, cb in zip(rest.tolist(), i[rest].tolist(), j[rest].tolist(), vi, vj):
        na, nb = expanded[ca], expanded[cb]
        if na <= nb or nb <= na:
            continue  # one states no number the other does not
        ya = years.get(a)
        if ya is None:
            ya = years[a] = drift_years(candidates[a].text)
        yb = years.get(b)
        if yb is None:
            yb = years[b] = drift_years(candidates[b].text)
        if not (ya <= yb or yb <= ya):
            continue  # each names a year the other does not
        if titles is None:
            titles = claim_titles(candidates)
        keep[e] = not any(x is not None and y is not None and x != y for x, y in zip(titles[a], titles[b]))
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


def merge_contradictions(n, parts: list) -> ContradictionPairs:
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
    starts = None if unique else np.concatenate(([True], key[1:] != key[:-1])).nonzero()[0]

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


def claim_pairs(texts: list[str], red_i: np.ndarray, red_j: np.ndarray, buffer=None, titles=None, read=None,
                info: dict | None = None):
    """Claim conflicts and agreements among ``texts`` (above :data:`CLAIM_ALL_TEXTS_LIMIT`, among
    the chunks of the redundancy pairs); ``buffer``: the texts' ``PackedCandidates.text_buffer``;
    ``titles``: their chunks' titles (:func:`~ctxselect.text.claims.claim_titles`), if any;
    ``read``: :func:`~ctxselect.text.claims.claim_readable` of the texts, if known (used up to the limit);
    ``info``: as :func:`~ctxselect.text.claims.find_claim_conflicts` fills it."""
    if len(texts) <= CLAIM_ALL_TEXTS_LIMIT:
        return find_claim_conflicts(texts, buffer=buffer, titles=titles, read=read, info=info)
    if titles is not None and len(titles) != len(texts):  # as find_claim_conflicts says it (the members'
        raise InputError(field="titles", expected=f"one per text ({len(texts)})",  # view hides the length)
                         found=f"{len(titles)} titles")
    rows = np.unique(np.concatenate([red_i, red_j]))
    members = rows.tolist()
    if buffer is not None:  # the members' rows of the buffer, sliced with Python ints (2.6 -> 2.0 ms at 20,000)
        buf, offsets = buffer
        sub = np.zeros(len(members) + 1, dtype=np.int64)
        lo, hi = offsets[rows], offsets[rows + 1]
        np.cumsum(hi - lo, out=sub[1:])
        parts = [buf[a:b] for a, b in zip(lo.tolist(), hi.tolist())]
        buffer = (np.concatenate(parts) if parts else buf[:0], sub)
    conflicts, agreements = find_claim_conflicts([texts[k] for k in members], buffer=buffer, info=info,
                                                 titles=None if titles is None else _Picked(titles, members))
    remap = lambda found: {(members[a], members[b]): v for (a, b), v in found.items()}  # noqa: E731
    return remap(conflicts), remap(agreements)


class _Picked(Sequence):
    """``items[members[k]]`` at ``k``, read only when asked for: the join reads the titles of the few
    texts whose claims join another's (listing the members' titles cost 2-3 ms at 20,000 candidates)."""

    def __init__(self, items, members: list[int]):
        self._items, self._members = items, members

    def __len__(self) -> int:
        return len(self._members)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        return self._items[self._members[k]]


def _codes(column: np.ndarray) -> np.ndarray:
    """Interned codes as one contiguous int64 layout, so the kernel compiles once."""
    return np.ascontiguousarray(column, dtype=np.int64)


def version_pairs(packed: PackedCandidates) -> ContradictionPairs:
    """The version conflicts as pairs (i < j, row-major): chunks of one document with different
    versions, the older one in ``superseded`` (-1 where the order is unknown), the requirements'
    ``version_conflict_severity``; none when they turn version conflicts off. On request only: the
    selector reads the codes (:mod:`ctxselect.selection.versions`), never these O(k²) pairs."""
    empty = np.empty(0, np.int64)
    reqs = packed.requirements
    if not reqs.version_conflicts:
        return ContradictionPairs(empty, empty.copy(), np.empty(0), np.empty(0, np.uint8), empty.copy())
    vi, vj = _differing_code_pairs(_codes(packed.version), _codes(packed.doc))
    return ContradictionPairs(vi, vj, np.full(len(vi), float(reqs.version_conflict_severity)),
                              np.full(len(vi), ConflictKind.VERSION, np.uint8),
                              version_superseded(packed, vi, vj, version_rank(packed)))


def detect_contradictions(packed: PackedCandidates, texts: list[str], near_i: np.ndarray, near_j: np.ndarray,
                          red_i: np.ndarray, red_j: np.ndarray, *, drift_severity: float, claims: bool,
                          claim_severity: float, capped: list | None = None
                          ) -> tuple[ContradictionPairs, dict, dict, np.ndarray | None]:
    """Every contradiction among the candidates listed as pairs: drift among the near pairs
    ``(near_i, near_j)``, and claims (above :data:`CLAIM_ALL_TEXTS_LIMIT` candidates only among the
    redundancy pairs ``(red_i, red_j)``).

    Field and version conflicts are not listed: they stay per-value codes (``packed.field_values``,
    ``packed.doc`` and ``packed.version``; pairs on request from
    :func:`ctxselect.features.contradictions.fields.field_pairs` and :func:`version_pairs`).
    ``capped``, if given, receives a sentence for each bound on the work that left pairs unexamined
    (drift's cap, the claim join's budgets; :attr:`~ctxselect.features.pairs.Signals.capped`).

    Returns
    -------
    contradictions : ContradictionPairs
    claim_conflicts, claim_agreements : dict (i, j) -> list of (Claim, Claim)
    claim_readable : bool array or None
        Up to :data:`CLAIM_ALL_TEXTS_LIMIT` candidates, the claim prefilter over every text
        (:func:`~ctxselect.text.claims.claim_readable`): a selection's report reads it instead of
        running the prefilter again; None when not known.
    """
    parts = []  # (i, j, severity, kind, superseded or None), each sorted by (i, j)
    if drift_severity > 0 and len(near_i):
        drift: dict = {}
        di, dj = drift_pairs(packed, near_i, near_j, drift)
        parts.append((di, dj, drift_severity, ConflictKind.DRIFT, None))
        del di, dj
        if capped is not None and drift["pairs"] > drift["examined"]:
            capped.append(f"drift examined {drift['examined']:,} of {drift['pairs']:,} near-duplicate pairs whose "
                          "numbers differ (the most relevant first; the others make no drift)")
    claim_conflicts, claim_agreements, readable = {}, {}, None
    if claims and any(t.strip() for t in texts):
        if len(texts) <= CLAIM_ALL_TEXTS_LIMIT:
            readable = claim_readable(texts, packed.text_buffer)
        join: dict = {}
        claim_conflicts, claim_agreements = claim_pairs(texts, red_i, red_j, buffer=packed.text_buffer,
                                                        titles=claim_titles(packed.candidates), read=readable,
                                                        info=join)
        if capped is not None and join.get("beyond_budget"):
            capped.append(f"the claim join's budgets left {join['beyond_budget']:,} of its largest buckets "
                          "uncompared (claims there make no conflict)")
        if claim_conflicts:
            keys = np.array(sorted(claim_conflicts), dtype=np.int64).reshape(-1, 2)
            parts.append((keys[:, 0], keys[:, 1], claim_severity, ConflictKind.CLAIM, None))
    contradictions = merge_contradictions(packed.n, parts)
    return contradictions, claim_conflicts, claim_agreements, readable
