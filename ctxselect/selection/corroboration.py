"""Resolving contradictions by corroboration: keep the side more independent evidence supports.

For each free-text claim two chunks disagree on, each side's *supporters* are the chunk itself,
the candidates that state the same value for the same claim, and the candidates that state the
same value with the same unit anywhere (other wording of the same fact). A side's support is the sum,
over its distinct documents (``doc_id``, else the chunk itself), of the best relevance × freshness
in that document, so copies inside one document count once. The side with at least
:data:`MARGIN` times the other's support and at least as many independent documents wins: every
chunk of the losing side is dropped, with a reason naming the chunk it conflicts with, both
values, and the count of supporting chunks on each side. Anything closer is *unresolved*: the
requirements' ``source_precedence`` decides it when the two chunks' sources differ in trust;
otherwise ``on_unresolved`` does (:class:`OnUnresolved`): both sides left out, the stronger side
kept, or both kept. Every unresolved conflict is recorded (:class:`UnresolvedConflict`) with both
values and what was done, so the assembler can tell the model that sources disagree.

For versions of one document the newer version wins outright: an older version is dropped when
a newer one is eligible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from ctxselect.features.contradictions import stated_figures
from ctxselect.features.contradictions.detect import drift_tokens, number_multiset
from ctxselect.features.pairs import ConflictKind, Signals
from ctxselect.packing import PackedCandidates
from ctxselect.selection.versions import Supersession, supersession
from ctxselect.text.claims import extract_claims
from ctxselect.text.words import numbers_of

__all__ = ["OnUnresolved", "Resolution", "UnresolvedConflict", "resolve_conflicts", "MARGIN", "MAX_QUOTED_NUMBERS",
           "DRIFT_SIDES_PER_CANDIDATE", "DRIFT_SIDE_FLOOR"]

MARGIN = 1.25
#: A reason about near-duplicates lists at most this many of each side's differing numbers.
MAX_QUOTED_NUMBERS = 10
#: Near-duplicate drift weighs pairs until their sides (supporting chunks) add up to
#: ``max(DRIFT_SIDE_FLOOR, DRIFT_SIDES_PER_CANDIDATE * n)`` (:func:`_resolve_drift`): ~0.1 us a chunk, so
#: at most ~40 ms at 2,000 candidates, where every side is a few chunks on the bench dumps.
DRIFT_SIDES_PER_CANDIDATE = 100
DRIFT_SIDE_FLOOR = 100_000


class OnUnresolved(str, Enum):
    """What happens to a conflict that neither evidence nor source precedence decides."""

    DROP_BOTH = "drop_both"          #: both sides are left out (neither is corroborated)
    KEEP_STRONGER = "keep_stronger"  #: the side with more support (relevance × freshness) stays
    KEEP_BOTH = "keep_both"          #: both may be selected, neither forbidden nor penalised for it


@dataclass(frozen=True)
class UnresolvedConflict:
    """A conflict evidence could not decide, and what was done with it.

    Attributes
    ----------
    i, j : int
        The two chunks' positions.
    values : tuple of str
        What each states, quoted (withheld as "a stated figure" for a chunk outside the scopes).
    outcome : str
        "both left out", "kept the stronger side", "both eligible" (both may be selected; the
        selection says whether they were) or "source precedence".
    """

    i: int
    j: int
    values: tuple[str, str]
    outcome: str


@dataclass
class Resolution:
    """Chunks dropped by corroboration (position -> reason) and every unresolved conflict."""

    losers: dict[int, str] = field(default_factory=dict)
    conflicts: list[UnresolvedConflict] = field(default_factory=list)
    #: The losers of near-duplicate drift alone (no version or claim verdict): drift is decided on
    #: cosine pairs, whose weights at the threshold can differ by a float32 ulp between BLAS tiles.
    drift_losers: set[int] = field(default_factory=set)
    #: The older versions a newer selectable one supersedes: read from the packed codes alone, so
    #: the same in a run that compares every pair (a cut's bound leaves them out).
    superseded: set[int] = field(default_factory=set)

    def left_free(self, n: int, pairs) -> np.ndarray:
        """Which of ``pairs`` (ContradictionPairs over n chunks) are free-text conflicts (claims,
        drift, nothing else) that ``keep_both`` left free: neither forbidden nor penalised."""
        kept = {(c.i, c.j) for c in self.conflicts if c.outcome == "both eligible"}
        if not kept:
            return np.zeros(len(pairs), dtype=bool)
        keys = np.array(sorted(a * n + b for a, b in kept), dtype=np.int64)
        only_free_text = (pairs.kind & ~np.uint8(ConflictKind.CLAIM | ConflictKind.DRIFT)) == 0
        return np.isin(pairs.i.astype(np.int64) * n + pairs.j, keys) & only_free_text


def _mentions(packed: PackedCandidates) -> dict[tuple, set[int]]:
    """(kind, unit, value) -> the chunks that state that value with that unit anywhere."""
    index: dict[tuple, set[int]] = {}
    for k, cand in enumerate(packed.candidates):
        for c in extract_claims(cand.text) if cand.text else ():
            index.setdefault((c.kind, c.unit, c.value), set()).add(k)
    return index


def _agreements_by_chunk(agreements: dict) -> dict[int, list[tuple[int, list, bool]]]:
    """chunk -> [(other chunk, aligned claim pairs, whether the chunk is the pair's first)], so a
    chunk's agreements are found without scanning them all."""
    out: dict[int, list[tuple[int, list, bool]]] = {}
    for (a, b), pairs in agreements.items():
        out.setdefault(a, []).append((b, pairs, True))
        out.setdefault(b, []).append((a, pairs, False))
    return out


def _supporters(node: int, claim, agreements: dict, mentions: dict) -> set[int]:
    """The chunk, the chunks whose aligned claim states the same value, and the chunks that state
    the same value with the same unit elsewhere in other words (weaker, but independent).

    ``agreements`` is :func:`_agreements_by_chunk` of the aligned agreements."""
    value, unit = claim.value, claim.unit
    out = {node} | mentions.get((claim.kind, unit, value), set())
    for other, pairs, first in agreements.get(node, ()):
        for ca, cb in pairs:
            mine = ca if first else cb
            if mine.value == value and mine.unit == unit:
                out.add(other)
    return out


def _numbers(values: list[str]) -> str:
    """Differing numbers as a reason lists them: at most :data:`MAX_QUOTED_NUMBERS`."""
    shown = ", ".join(values[:MAX_QUOTED_NUMBERS])
    return shown + (f" and {len(values) - MAX_QUOTED_NUMBERS} more" if len(values) > MAX_QUOTED_NUMBERS else "")


def _support(packed: PackedCandidates, weight: np.ndarray, members: set[int]) -> tuple[float, int]:
    best: dict[object, float] = {}
    for k in members:
        group = ("doc", int(packed.doc[k])) if packed.doc[k] >= 0 else ("chunk", k)
        best[group] = max(best.get(group, 0.0), float(weight[k]))
    return sum(best.values()), len(best)


def _trust(packed: PackedCandidates, k: int) -> float:
    """The requirements' ``source_precedence`` trust of chunk k's source (0 when not listed)."""
    return packed.requirements.source_precedence.get(packed.source_names[packed.source[k]], 0.0)


def _decide(packed: PackedCandidates, weight: np.ndarray, out: Resolution, pair: tuple[int, int],
            sides: tuple[set[int], set[int]], values: tuple[str, str], on_unresolved: OnUnresolved,
            what: str = "", eligible: np.ndarray | None = None) -> None:
    """Weigh the two sides of one disagreement and record the losers (or the even split).

    ``sides`` hold each side's supporters (chunk i's first); a third chunk on both sides supports
    neither; ``values`` are the two statements as quoted in the reasons (replaced by "one / another
    stated figure" when either chunk is inadmissible: :func:`ctxselect.features.contradictions.stated_figures`);
    ``what`` qualifies the partner ("near-duplicate ")."""
    i, j = pair
    both = (sides[0] & sides[1]) - {i, j}
    side_i = {k for k in (sides[0] - both) - {j} if eligible is None or eligible[k]}
    side_j = {k for k in (sides[1] - both) - {i} if eligible is None or eligible[k]}
    if not side_i or not side_j:
        return
    (w_i, docs_i), (w_j, docs_j) = _support(packed, weight, side_i), _support(packed, weight, side_j)
    ids = packed.ids
    v_i, v_j, withheld = stated_figures(packed, i, j, *values)
    if w_i >= MARGIN * w_j and docs_i >= docs_j:
        winner, win, lose, win_value, lose_value = i, side_i, side_j, v_i, v_j
    elif w_j >= MARGIN * w_i and docs_j >= docs_i:
        winner, win, lose, win_value, lose_value = j, side_j, side_i, v_j, v_i
    else:
        if eligible is None or (eligible[i] and eligible[j]):  # a pair with a chunk the caller may not
            # see, or that is out for another reason, is no disagreement the context can hold: the
            # eligible chunks' own pairs are decided and listed instead
            _even_split(packed, out, pair, (side_i, side_j), (w_i, w_j), (v_i, v_j), withheld, on_unresolved, what)
        return
    for k in lose:
        out.losers.setdefault(k, f"contradicted by `{ids[winner]}`: {'a near-duplicate ' if what else ''}states "
                                 f"{lose_value} where {len(win)} chunk(s) state {win_value} "
                                 f"(this side: {len(lose)} chunk(s)){withheld}")


def _even_split(packed, out: Resolution, pair, sides, support, values, withheld, on_unresolved, what) -> None:
    """An unresolved conflict: source precedence first, then ``on_unresolved``; recorded either way."""
    (i, j), ids = pair, packed.ids
    note = (f"{values[0]} ({len(sides[0])} supporting chunk(s)) vs {values[1]} ({len(sides[1])} supporting "
            f"chunk(s)), an even split{withheld}")
    trust = (_trust(packed, i), _trust(packed, j))
    if trust[0] != trust[1]:
        keep = 0 if trust[0] > trust[1] else 1
        src = [packed.source_names[packed.source[k]] for k in (i, j)]
        why = f"source precedence: `{src[keep]}` over `{src[1 - keep]}`"
        outcome = "source precedence"
    elif on_unresolved is OnUnresolved.KEEP_STRONGER:
        keep = 0 if (support[0], packed.relevance[i], -i) >= (support[1], packed.relevance[j], -j) else 1
        why = f"the stronger side is kept (support {support[keep]:.3g} vs {support[1 - keep]:.3g})"
        outcome = "kept the stronger side"
    elif on_unresolved is OnUnresolved.KEEP_BOTH:
        out.conflicts.append(UnresolvedConflict(i, j, values, "both eligible"))
        return
    else:
        for side, other in ((sides[0], j), (sides[1], i)):
            for k in side:
                out.losers.setdefault(k, f"unresolved conflict with {what}`{ids[other]}`: {note}; neither side "
                                         "is corroborated, both are left out")
        out.conflicts.append(UnresolvedConflict(i, j, values, "both left out"))
        return
    winner = (i, j)[keep]
    for k in sides[1 - keep]:
        out.losers.setdefault(k, f"unresolved conflict with {what}`{ids[winner]}`: {note}; {why}")
    out.conflicts.append(UnresolvedConflict(i, j, values, outcome))


def resolve_conflicts(packed: PackedCandidates, signals: Signals, eligible: np.ndarray, *,
                      on_unresolved: OnUnresolved = OnUnresolved.DROP_BOTH,
                      superseded: Supersession | None = None) -> Resolution:
    """Decide each free-text claim conflict by corroboration, and supersede older versions.

    An even split goes to the requirements' ``source_precedence`` when the two sources' trust
    differs, else to ``on_unresolved`` (:class:`OnUnresolved`); every even split is recorded in
    ``Resolution.conflicts``. ``superseded``: :func:`~ctxselect.selection.versions.supersession` of
    ``packed`` when the caller has it already."""
    on_unresolved = OnUnresolved(on_unresolved)
    out = Resolution()
    for older, newer in (supersession(packed) if superseded is None else superseded).first_newer(eligible).items():
        out.losers.setdefault(older, f"superseded by `{packed.ids[newer]}` (a newer version of the same document)")
    out.superseded = set(out.losers)
    conflicts = signals.claim_conflicts or {}
    agreements = _agreements_by_chunk(signals.claim_agreements or {}) if conflicts else {}
    weight = packed.relevance * signals.freshness
    mentions = _mentions(packed) if conflicts else {}
    for (i, j), pairs in sorted(conflicts.items()):
        for ci, cj in pairs:
            sides = (_supporters(i, ci, agreements, mentions), _supporters(j, cj, agreements, mentions))
            _decide(packed, weight, out, (i, j), sides, (repr(ci.raw), repr(cj.raw)), on_unresolved,
                    eligible=eligible)
    firm = set(out.losers)
    _resolve_drift(packed, signals, eligible, weight, out, on_unresolved)
    out.drift_losers = set(out.losers) - firm
    return out


def _resolve_drift(packed, signals, eligible, weight, out: Resolution, on_unresolved: OnUnresolved) -> None:
    """Near-duplicates whose numbers differ (DRIFT) that no aligned claim explains: each side is
    supported by the chunks that state all of its differing numbers, decided as above.

    Numbers are read as drift reads them (:func:`~ctxselect.features.contradictions.detect.drift_numbers`:
    the prefix claims read). The pairs are at most what
    :func:`~ctxselect.features.contradictions.detect.drift_pairs` examines; per pair the differing numbers
    are set differences (in C) and each set of differing numbers' supporters is found once. Weighing a
    pair costs its two sides' sizes: once the sides weighed in one call, pairs taken in (i, j) order, hold
    more than ``max(DRIFT_SIDE_FLOOR, DRIFT_SIDES_PER_CANDIDATE * n)`` chunks, the remaining pairs are
    not decided here (they stay contradictions, as a pair whose sides are not eligible does)."""
    con = signals.contradictions
    drift = ((con.kind & ConflictKind.DRIFT) > 0) & ((con.kind & ConflictKind.CLAIM) == 0)
    if not drift.any():
        return
    di, dj = con.i[drift], con.j[drift]
    tokens = drift_tokens(packed, None)  # supporters may be any chunk, not only the pairs'
    held: dict[int, frozenset] = {}  # chunk -> its numbers as (value, k) for k below the value's count
    holders: dict[str, set[int]] = {}
    for k, written in tokens.items():
        if written:
            found = numbers_of(written)
            held[k] = number_multiset(found)
            for value in found:
                holders.setdefault(value, set()).add(k)
    supporters: dict[tuple, set[int]] = {}
    work = max(DRIFT_SIDE_FLOOR, DRIFT_SIDES_PER_CANDIDATE * packed.n)
    for i, j in zip(di.tolist(), dj.tolist()):
        ni, nj = held.get(i, frozenset()), held.get(j, frozenset())
        only_i, only_j = sorted({v for v, _ in ni - nj}), sorted({v for v, _ in nj - ni})
        sides = []
        for only, k in ((only_i, i), (only_j, j)):
            key = tuple(only)
            found = supporters.get(key)
            if found is None:
                found = supporters[key] = set.intersection(*sorted((holders[v] for v in only), key=len))
            sides.append(found | {k})
        work -= len(sides[0]) + len(sides[1])
        if work < 0:
            break  # every pair so far weighed; the rest stay contradictions
        _decide(packed, weight, out, (i, j), tuple(sides), (_numbers(only_i), _numbers(only_j)), on_unresolved,
                what="near-duplicate ", eligible=eligible)
