"""Plain-Python twins of near-duplicate drift: the pairs (``features.contradictions.detect.drift_pairs``)
and their corroboration (``selection.corroboration._resolve_drift``), each pair read as the definition
says, every text's numbers read in full; and the long filler their tests put a number beyond the prefix
claims and drift read with."""

from __future__ import annotations

from ctxselect.features.pairs import ConflictKind
from ctxselect.selection.corroboration import _decide, _numbers
from ctxselect.text.claims import claim_titles
from ctxselect.text.words import numbers_in, years_in

FILLER = "the quarterly report of the northern district lists the figures below in full detail " * 700


def naive_drift(packed, i, j) -> set[tuple[int, int]]:
    """The definition, pair by pair, reading every text in full (the texts here are short or read
    within the prefix by the caller)."""
    texts = [c.text for c in packed.candidates]
    titles = claim_titles(packed.candidates)
    out = set()
    for a, b in zip(i.tolist(), j.tolist()):
        na, nb = numbers_in(texts[a]), numbers_in(texts[b])
        if not (na - nb and nb - na):
            continue
        ya, yb = set(years_in(texts[a])), set(years_in(texts[b]))
        if ya - yb and yb - ya:
            continue
        if any(x is not None and y is not None and x != y for x, y in zip(titles[a], titles[b])):
            continue
        out.add((a, b))
    return out


def naive_resolve_drift(packed, signals_, eligible, weight, out, on_unresolved) -> None:
    """Every pair weighed as the definition says, every text's numbers read in full."""
    con = signals_.contradictions
    drift = ((con.kind & ConflictKind.DRIFT) > 0) & ((con.kind & ConflictKind.CLAIM) == 0)
    numbers = [numbers_in(c.text) for c in packed.candidates]
    holders: dict[str, set[int]] = {}
    for k, found in enumerate(numbers):
        for value in found:
            holders.setdefault(value, set()).add(k)
    for i, j in zip(con.i[drift].tolist(), con.j[drift].tolist()):
        only_i, only_j = sorted(numbers[i] - numbers[j]), sorted(numbers[j] - numbers[i])
        sides = (set.intersection(*(holders[v] for v in only_i)) | {i},
                 set.intersection(*(holders[v] for v in only_j)) | {j})
        _decide(packed, weight, out, (i, j), sides, (_numbers(only_i), _numbers(only_j)), on_unresolved,
                what="near-duplicate ", eligible=eligible)
