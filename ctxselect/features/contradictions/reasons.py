"""Conflict reasons: the one place they are formatted, under the no-echo rule.

When either chunk of a pair lies outside the query's allowed scopes (``packed.admissible`` False),
a reason names the field (or "a stated figure") and the chunk ids, never a value, a claim, a
document or a version label. :mod:`ctxselect.selection.explain` and
:mod:`ctxselect.selection.corroboration` format through these helpers too.
"""

from __future__ import annotations

from ctxselect.packing import NO_CODE, PackedCandidates

__all__ = ["echoable", "withheld_note", "stated_figures", "claim_reason", "pair_conflicts"]



def echoable(packed: PackedCandidates, *positions: int) -> bool:
    """Whether the content of every chunk at ``positions`` may be quoted (all are admissible)."""
    return all(bool(packed.admissible[p]) for p in positions)


def withheld_note(packed: PackedCandidates, *positions: int) -> str:
    """Why a reason quotes no value: ``"(not quoted: `c9` is outside the allowed scopes)"``."""
    hidden = sorted({int(p) for p in positions if not packed.admissible[p]})
    names = " and ".join(f"`{packed.ids[p]}`" for p in hidden)
    verb = "is" if len(hidden) == 1 else "are"
    return f"(not quoted: {names} {verb} outside the allowed scopes)"


def stated_figures(packed: PackedCandidates, i: int, j: int, value_i: str, value_j: str) -> tuple[str, str, str]:
    """The two statements of chunks i and j as a message may show them: ``(value_i, value_j, "")``
    when both are admissible, else ``("one stated figure", "another stated figure", note)`` with
    the :func:`withheld_note` to append."""
    if echoable(packed, i, j):
        return value_i, value_j, ""
    return "one stated figure", "another stated figure", " " + withheld_note(packed, i, j)


def claim_reason(packed: PackedCandidates, i: int, j: int, claim_i, claim_j) -> str:
    """``"claim: '3,559 people' vs '10,000 people'"`` for a claim conflict of chunks i and j."""
    if echoable(packed, i, j):
        return f"claim: {claim_i.raw!r} vs {claim_j.raw!r}"
    return f"claim: a stated figure differs {withheld_note(packed, i, j)}"


def _field_reason(packed: PackedCandidates, f: int, i: int, j: int) -> str:
    name = packed.field_names[f]
    if echoable(packed, i, j):
        values = packed.field_value_names[f]
        return f"field {name}: {values[packed.field_values[i, f]]!r} vs {values[packed.field_values[j, f]]!r}"
    return f"field {name}: values differ {withheld_note(packed, i, j)}"


def _version_reason(packed: PackedCandidates, i: int, j: int) -> str:
    if echoable(packed, i, j):
        names = packed.version_names
        return (f"version {names[packed.version[i]]!r} vs {names[packed.version[j]]!r} "
                f"of doc {packed.doc_names[packed.doc[i]]!r}")
    return f"versions of one document differ {withheld_note(packed, i, j)}"


def pair_conflicts(packed: PackedCandidates, i: int, j: int) -> list[tuple[str, float]]:
    """Why chunks i and j conflict by their fields and versions, each reason with its severity
    (empty when they do not conflict). Values are quoted only when both chunks are admissible."""
    out = []
    for f in range(len(packed.field_names)):
        a, b = packed.field_values[i, f], packed.field_values[j, f]
        if a != NO_CODE and b != NO_CODE and a != b:
            out.append((_field_reason(packed, f, i, j), float(packed.field_severity[f])))
    reqs = packed.requirements
    if (reqs.version_conflicts and packed.doc[i] != NO_CODE and packed.doc[i] == packed.doc[j]
            and packed.version[i] != NO_CODE and packed.version[j] != NO_CODE
            and packed.version[i] != packed.version[j]):
        out.append((_version_reason(packed, i, j), reqs.version_conflict_severity))
    return out
