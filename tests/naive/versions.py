"""Plain-Python twin of selection/versions.Supersession: every newer chunk of each older one, read
pair by pair from the version conflicts listed on request
(:func:`ctxselect.features.contradictions.version_pairs`: what the library read before it used the
codes)."""

from __future__ import annotations

from ctxselect.features.contradictions import version_pairs
from ctxselect.packing import PackedCandidates


def naive_superseded_versions(packed: PackedCandidates) -> dict[int, list[int]]:
    """Older chunk -> every newer chunk of its document (ascending), from the version pairs whose
    order is known."""
    con = version_pairs(packed)
    out: dict[int, list[int]] = {}
    for a, b, older in zip(con.i.tolist(), con.j.tolist(), con.superseded.tolist()):
        if older >= 0:
            out.setdefault(older, []).append(b if older == a else a)
    return {older: sorted(newer) for older, newer in out.items()}


def naive_first_newer(packed: PackedCandidates, allowed) -> dict[int, int]:
    """Older chunk -> its first newer chunk among ``allowed`` (the chunks with none left out)."""
    found = {older: next((k for k in newer if allowed[k]), None)
             for older, newer in naive_superseded_versions(packed).items()}
    return {older: k for older, k in sorted(found.items()) if k is not None}
