"""Claims in free text: numbers and dates with the words around them, and pairs that disagree.

A *claim* is a value stated in a chunk — a number ("3,559", "1.5 million", "45%") or a date
("March 3, 2021", "2021-03-03", "3 March 2021") — with its context: the content words just
before it and the word just after it (its unit: "people", "days"). Two chunks *disagree* on a
claim when their contexts align (the same unit or date role, at least four preceding content
words, and rapidfuzz's ``ratio`` of those words at or above 90), the claims are about the same
thing (their scopes match: :mod:`ctxselect.text.claim_scope`) and the normalised values differ;
they *agree* when the values are equal. Only claims that share a unit and their two nearest context
words are compared (a hash join), never all pairs of texts, and only texts that may hold such a
claim are read: a compiled prefilter (:mod:`ctxselect.text.claim_keys`) finds them in the bytes.

Work is bounded whatever the input: claims are read from the first :data:`MAX_CLAIM_CHARS`
characters of a text, at most :data:`MAX_CLAIMS_PER_TEXT` of them (the earliest), and a join
bucket holding more than :data:`MAX_BUCKET_TEXTS` texts or :data:`MAX_BUCKET_CLAIMS` claims is
boilerplate and skipped, as are the largest buckets beyond the join's budgets (buckets are taken
smallest first): :data:`ALIGN_BASE` + :data:`ALIGN_PER_CLAIM` comparisons and :data:`PAIRS_BASE` +
:data:`PAIRS_PER_CLAIM` aligned pairs a claim joined. Time and memory are therefore linear in the total
text length and in the number of texts (docs/conflicts.md, "Bounds").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import accumulate, compress

import numpy as np
from rapidfuzz import fuzz

from ctxselect.errors import InputError
from ctxselect.text.claim_patterns import _DATE_PATTERNS, _DIGIT, _SCALE, _date, _may_hold_date, _number_matches
from ctxselect.text.claim_keys import CONTEXT_WINDOW, CONTEXT_WORDS, claim_hints, read_only, texts_to_read
from ctxselect.text.claim_scope import ClaimScope, ScopeReader, claim_scope, is_label_before
from ctxselect.text.titles import claim_titles
from ctxselect.text.words import TextCache, first_content_word, last_content_words, number_value

__all__ = ["Claim", "ClaimScope", "extract_claims", "scoped_claims", "compare_claims", "find_claim_conflicts",
           "claim_readable", "claim_titles", "MAX_CLAIM_CHARS", "CLAIM_READ_CHARS",
           "MAX_CLAIMS_PER_TEXT", "MAX_BUCKET_TEXTS", "MAX_BUCKET_CLAIMS", "ALIGN_BASE",
           "ALIGN_PER_CLAIM", "PAIRS_BASE", "PAIRS_PER_CLAIM"]

#: Claims are read from this many leading characters of a text (about 8,000 words).
MAX_CLAIM_CHARS = 50_000
#: ... each in the text cut this far: a claim starting before MAX_CLAIM_CHARS keeps its value and the
#: words after it (drift reads numbers in the same cut, ctxselect.features.contradictions.detect).
CLAIM_READ_CHARS = MAX_CLAIM_CHARS + 120
#: At most this many claims per text: the earliest in the text.
MAX_CLAIMS_PER_TEXT = 100
#: A join key shared by more texts than this is boilerplate: its claims are not compared.
MAX_BUCKET_TEXTS = 200
#: A join key holding more claims than this (a template repeated inside a few texts) is skipped too:
#: each bucket costs at most MAX_BUCKET_CLAIMS² / 2 comparisons.
MAX_BUCKET_CLAIMS = 400
#: The join's budgets, per :func:`find_claim_conflicts` call of N claims joined (those with enough context words):
#: at most ALIGN_BASE + ALIGN_PER_CLAIM × N comparisons (m (m - 1) / 2 in a bucket of m claims) and PAIRS_BASE +
#: PAIRS_PER_CLAIM × N aligned pairs (so at most as many conflicts and agreements). Buckets are taken smallest
#: first; the largest, beyond either budget, are boilerplate and skipped. A comparison costs ~1 µs, an aligned pair
#: ~20-40 µs to the end of select() (settle, corroboration). Measured: the bench dumps (MuSiQue, TimeQA,
#: MultiHop-RAG) need at most 121 comparisons and 34 aligned pairs a call; benchmarks/claims_equal.py's cases at
#: most 22,583 and 4,314 (its templated pages together, N = 972); ALIGN_BASE holds two texts of
#: MAX_CLAIMS_PER_TEXT claims in one bucket (19,900). 50 texts in buckets of 400 claims made ~1M (docs/conflicts.md).
ALIGN_BASE = 20_000
ALIGN_PER_CLAIM = 8
PAIRS_BASE = 5_000
PAIRS_PER_CLAIM = 1


@dataclass(frozen=True)
class Claim:
    """A value stated in a text, with what it is about.

    Attributes
    ----------
    value : float or str
        The normalised value (numbers as floats, dates as ISO text).
    raw : str
        The value as written, with its unit ("3,559 people").
    before : str
        Up to five content words before the value, lower-cased.
    unit : str
        The first word after the value ("people"), or the date's role word before it; "" if none.
    kind : str
        "number" or "date".
    start, end : int
        Where the value stands in the text read (-1 when not known); not compared.
    scope : ClaimScope or None
        What the claim is about (:mod:`ctxselect.text.claim_scope`): set on the claims of the
        conflicts :func:`find_claim_conflicts` returns and on :func:`scoped_claims`', ``None`` on
        :func:`extract_claims`' (reading it costs tens of microseconds a claim); not compared.
    """

    value: float | str
    raw: str
    before: str
    unit: str
    kind: str
    start: int = field(default=-1, compare=False, repr=False)
    end: int = field(default=-1, compare=False, repr=False)
    scope: ClaimScope | None = field(default=None, compare=False, repr=False)


def _claim(value, raw: str, before: str, unit: str, kind: str, start: int, end: int) -> Claim:
    """``Claim(value, raw, before, unit, kind, start, end)``: the same attributes in the same order,
    without the frozen dataclass's ``object.__setattr__`` per field (a third of the time)."""
    claim = _new(Claim)
    claim.__dict__.update(value=value, raw=raw, before=before, unit=unit, kind=kind, start=start, end=end, scope=None)
    return claim


_new = object.__new__


@lru_cache(maxsize=1 << 14)
def _context_before(window: str) -> tuple[str, str]:
    """(the last CONTEXT_WORDS content words of ``window`` joined by spaces, the last of them): cached,
    as the texts whose claims join share their windows (copies, near-duplicates)."""
    words = last_content_words(window, CONTEXT_WORDS)
    return " ".join(words), (words[-1] if words else "")


def extract_claims(text: str) -> list[Claim]:
    """The numbers and dates stated in ``text`` with their context (years on their own are not
    claims: they name when, not what; nor are labels, "part 2", "No. 5", "topic 0": they name
    what a claim is about).

    Only the first :data:`MAX_CLAIM_CHARS` characters are read, and at most
    :data:`MAX_CLAIMS_PER_TEXT` claims are returned (the earliest in the text; dates first, then
    numbers, each in text order). The claims carry no scope (:func:`scoped_claims` reads it)."""
    return list(_claims_of(text[:CLAIM_READ_CHARS]))


def scoped_claims(text: str, title=None) -> list[Claim]:
    """:func:`extract_claims` with each claim's scope: what it is stated of and its qualifiers.

    Parameters
    ----------
    text : str
    title : str, sequence of str, or None
        The chunk's title, or (title, section); claims of chunks with different titles are about
        different things.

    Returns
    -------
    list of Claim
    """
    return [replace(c, scope=claim_scope(text, c, title)) for c in extract_claims(text)]


def _same_scope(a: Claim, b: Claim) -> bool:
    return a.scope is None or b.scope is None or a.scope.matches(b.scope)


def _read_claims(text: str, hint=None) -> tuple[Claim, ...]:
    """The claims of ``text`` (cut as :data:`_claims_of` receives it); ``hint``: (whether a digit
    stands before MAX_CLAIM_CHARS, whether a date may be there, where a number may start)."""
    if hint is None:
        if not _DIGIT.search(text, 0, MAX_CLAIM_CHARS):
            return ()
        may_date, starts = _may_hold_date(text), None
    elif not hint[0]:
        return ()
    else:
        _digit, may_date, starts = hint
    found: list[tuple[int, Claim]] = []
    taken = bytearray(len(text)) if may_date else None  # 1 where a date was read
    for pattern, order in (_DATE_PATTERNS if may_date else ()):
        for m in pattern.finditer(text):
            if m.start() >= MAX_CLAIM_CHARS:
                break
            iso = _date(m.groups(), order)
            if iso is None or taken.find(1, m.start(), m.end()) >= 0:
                continue
            taken[m.start():m.end()] = b"\x01" * (m.end() - m.start())
            before, last = _context_before(text[max(0, m.start() - CONTEXT_WINDOW):m.start()])
            found.append((m.start(), _claim(iso, m.group(0), before, last, "date", m.start(), m.end())))
    dated, numbers = bool(found), 0
    for m in _number_matches(text, starts):
        start, end = m.span()
        if start >= MAX_CLAIM_CHARS or numbers >= MAX_CLAIMS_PER_TEXT:
            break  # later numbers come after MAX_CLAIMS_PER_TEXT earlier claims: never kept
        if dated and taken.find(1, start, end) >= 0:
            continue
        digits, percent, scale = m.groups()
        plain = "," not in digits and "." not in digits
        value = float(digits) if plain else number_value(digits)  # number_value's reading of plain digits
        if not percent and not scale and "," not in digits and (
                plain and 1500 <= value <= 2099  # a bare year
                or is_label_before(text, start)):  # a label ("part 2", "No. 5"): it names what a claim is about
            continue
        if scale:
            value *= _SCALE[scale.lower()]
        after = first_content_word(text[end:end + 40])
        raw = m.group(0) + (f" {after}" if after and not percent else "")
        found.append((start, _claim(value, raw.strip(), _context_before(text[max(0, start - CONTEXT_WINDOW):start])[0],
                                    "%" if percent else after, "number", start, end)))
        numbers += 1
    if len(found) > MAX_CLAIMS_PER_TEXT:
        keep = set(sorted(range(len(found)), key=lambda k: found[k][0])[:MAX_CLAIMS_PER_TEXT])
        found = [item for k, item in enumerate(found) if k in keep]
    return tuple([claim for _, claim in found])


#: The claims of the last 8,192 texts read: one context is scored several times per call (signals,
#: report, gate checks). Called with a text cut to the prefix read (plus the context window after its
#: last value) and, optionally, its :func:`~ctxselect.text.claim_keys.claim_hints`.
_claims_of = TextCache(_read_claims, 8192)


def compare_claims(a: list[Claim], b: list[Claim], *, context_ratio: float = 90.0,
                   min_context_words: int = 4) -> tuple[list[tuple[Claim, Claim]], list[tuple[Claim, Claim]]]:
    """Aligned claim pairs of two texts: (disagreements, agreements).

    Claims align when they are of the same kind with the same unit, each has at least
    ``min_context_words`` preceding content words, rapidfuzz's ``ratio`` of those words reaches
    ``context_ratio``, and their scopes match when both carry one (:func:`scoped_claims`). A claim
    disagrees only if no aligned claim of the other text states the same value (a text may restate
    a value elsewhere). The defaults were set on real data: with two
    context words and ``token_set_ratio`` ≥ 80, the detector flagged 520 pairs in TimeQA's
    candidates, mostly the same template about different seasons or awards; with these, 50.
    """
    disagree, agree = [], []
    for ca in a:
        if len(ca.before.split()) < min_context_words:
            continue
        aligned = [cb for cb in b if cb.kind == ca.kind and cb.unit == ca.unit
                   and len(cb.before.split()) >= min_context_words
                   and fuzz.ratio(ca.before, cb.before) >= context_ratio and _same_scope(ca, cb)]
        if not aligned:
            continue
        same = [cb for cb in aligned if cb.value == ca.value]
        if same:
            agree.append((ca, same[0]))
        else:
            disagree.append((ca, max(aligned, key=lambda cb: fuzz.ratio(ca.before, cb.before))))
    return disagree, agree


def _aligned_claims(claims: list, context_ratio: float, min_context_words: int, scopes=None, info=None):
    """(text i, text j) -> list of aligned (claim of i, claim of j), i < j (``claims``: per text, a
    sequence of its claims).

    A hash join on (kind, unit, two nearest context words) — aligned claims, whose contexts match
    at ``ratio`` ≥ 90, share that key — so only claims about the same thing are ever compared.
    Keys shared by more than :data:`MAX_BUCKET_TEXTS` texts or holding more than
    :data:`MAX_BUCKET_CLAIMS` claims are boilerplate and skipped, and so are the largest buckets
    beyond the join's budgets (:func:`_within_budget`). With ``scopes`` (a
    :class:`~ctxselect.text.claim_scope.ScopeReader` of the texts), a joined pair whose scopes differ
    is not aligned (the scope test comes after the join, so the join keys, and the prefilter's
    superset of them, are unchanged). ``info`` receives ``beyond_budget`` (:func:`find_claim_conflicts`)."""
    buckets: dict[tuple, list[tuple[int, Claim]]] = {}
    for t in compress(range(len(claims)), claims):  # the texts with claims (most have none), picked in C
        for c in claims[t]:
            words = c.before.split()
            if len(words) >= min_context_words:
                buckets.setdefault((c.kind, c.unit, " ".join(words[-2:])), []).append((t, c))
    joined = sum(map(len, buckets.values()))
    room, done = PAIRS_BASE + PAIRS_PER_CLAIM * joined, []  # aligned pairs yet allowed; (join position, pairs)
    chosen, within_caps = _within_budget(buckets, joined)  # smallest first
    for at, members in chosen:
        pairs = _compare(members, context_ratio, scopes, room)
        if pairs is None:  # beyond the aligned pairs' budget: this bucket and the larger ones are boilerplate
            break
        room -= len(pairs)
        done.append((at, pairs))
    if info is not None:
        info["beyond_budget"] = within_caps - len(done)
    aligned: dict[tuple[int, int], list[tuple[Claim, Claim]]] = {}
    for _, pairs in sorted(done, key=lambda item: item[0]):  # in join order, as without the budgets
        for key, pair in pairs:
            aligned.setdefault(key, []).append(pair)
    return aligned


def _compare(members: list, context_ratio: float, scopes, room: int):
    """The aligned pairs of one join bucket, [((i, j), (claim of i, claim of j))], i < j; None if more
    than ``room``."""
    pairs = []
    ratio, equal_align = fuzz.ratio, not 100 < context_ratio  # equal texts score 100
    for a in range(len(members)):
        ta, ca = members[a]
        for b in range(a + 1, len(members)):
            tb, cb = members[b]
            if ta == tb or (not equal_align if ca.before == cb.before
                            else ratio(ca.before, cb.before) < context_ratio):
                continue
            if scopes is not None and not scopes.same(ta, ca, tb, cb):  # on the few joined pairs
                continue
            pairs.append(((ta, tb), (ca, cb)) if ta < tb else ((tb, ta), (cb, ca)))
        if len(pairs) > room:
            return None
    return pairs


def _within_budget(buckets: dict, joined: int) -> tuple[list, int]:
    """([(join position, bucket)], count): the join buckets to compare, smallest first (ties in join order),
    those within the caps whose comparisons, m (m - 1) / 2 for m claims, fit in the budget of :data:`ALIGN_BASE`
    + :data:`ALIGN_PER_CLAIM` × ``joined`` claims (the larger are boilerplate); and the count within the caps."""
    kept = [m for m in buckets.values() if 1 < len(m) <= MAX_BUCKET_CLAIMS
            and (len(m) <= MAX_BUCKET_TEXTS or len({t for t, _ in m}) <= MAX_BUCKET_TEXTS)]
    cost = [len(m) * (len(m) - 1) // 2 for m in kept]
    order = sorted(range(len(kept)), key=cost.__getitem__)  # a stable sort: ties in join order
    fits = sum(1 for spent in accumulate(cost[k] for k in order) if spent <= ALIGN_BASE + ALIGN_PER_CLAIM * joined)
    return [(k, kept[k]) for k in order[:fits]], len(kept)


def scope_reader(texts, titles=None) -> ScopeReader:
    """The join's ``scopes``: of ``texts``' claims (``titles``: per text, its title or (title, section))."""
    return ScopeReader(texts, titles)


def claim_readable(texts: list, buffer=None, min_context_words: int = 4):
    """Which ``texts`` may hold a claim joining another's (bool array; None: all): the prefilter of
    :func:`find_claim_conflicts`. A text it leaves out has no join key another text has, so it joins
    nothing in a subset either: the mask at a subset's positions is that subset's ``read``."""
    buffer = read_only(buffer)
    return texts_to_read(texts, buffer, min_context_words, MAX_CLAIM_CHARS, extract_claims) if texts else None


def find_claim_conflicts(texts, *, context_ratio: float = 90.0, min_context_words: int = 4, buffer=None,
                         titles=None, read=None, info: dict | None = None):
    """Disagreeing and agreeing claims among ``texts`` (the rules of :func:`compare_claims`).

    Claims are aligned through a hash join on their kind, unit and two nearest context words, so
    only claims about the same thing are compared — never all pairs of texts. A compiled prefilter
    (:mod:`ctxselect.text.claim_keys`) first drops the texts none of whose possible join keys
    another text has: only the others are read in Python. Joined claims then align only when their
    scopes match (:mod:`ctxselect.text.claim_scope`): the same document when both texts have a
    title, and no subject, time, label or period that differs — "27 goals in 2018" and "31 goals in
    2019", or two pricing pages' "5 users" and "20 users" of the Basic and the Pro plan, do not
    conflict. Scopes are read only for the joined claims. The join keeps to its budgets (at most
    :data:`ALIGN_BASE` + :data:`ALIGN_PER_CLAIM` comparisons and :data:`PAIRS_BASE` +
    :data:`PAIRS_PER_CLAIM` aligned pairs a claim joined): the largest buckets beyond them are skipped.

    Parameters
    ----------
    texts : sequence of str
    context_ratio, min_context_words : float
        The alignment of :func:`compare_claims`.
    buffer : tuple, optional
        The texts' :func:`~ctxselect.packing.text_buffer` (``PackedCandidates.text_buffer``), if
        already built.
    titles : sequence, optional
        Per text, its chunk's title, or (title, section) — :func:`claim_titles` of the candidates
        gives them; indexed only for texts whose claims join another's.
    read : bool array, optional
        :func:`claim_readable` of these texts, or of a superset at these texts' positions (by default
        the prefilter runs here).
    info : dict, optional
        Receives ``beyond_budget``: the join buckets within the caps that the budgets skipped (0: none).

    Returns
    -------
    conflicts, agreements : dict (i, j) -> list of (Claim of i, Claim of j)
        The claims of a conflict carry their scopes (those of an agreement do not: two copies of a
        page agree without their scopes being read).
    """
    texts = texts if isinstance(texts, list) else list(texts)
    for name, given in (("titles", titles), ("read", read)):
        if given is not None and len(given) != len(texts):
            raise InputError(field=name, expected=f"one per text ({len(texts)})", found=f"{len(given)} {name}")
    buffer = read_only(buffer)
    read = claim_readable(texts, buffer, min_context_words) if read is None else read
    hints = claim_hints(buffer, read, MAX_CLAIM_CHARS, CLAIM_READ_CHARS) if buffer is not None else {}
    claims: list = [()] * len(texts)  # per text, its claims: none where not read
    for k in range(len(texts)) if read is None else np.flatnonzero(read).tolist():
        if texts[k]:
            claims[k] = _claims_of(texts[k][:CLAIM_READ_CHARS], hints.get(k))
    scopes = scope_reader(texts, titles)
    return settle(_aligned_claims(claims, context_ratio, min_context_words, scopes, info), scopes)


def settle(aligned: dict, scopes) -> tuple[dict, dict]:
    """The aligned claim pairs of :func:`_aligned_claims` as (conflicts, agreements): per claim of
    the first text, an agreement when an aligned claim states its value, else a conflict with the
    closest-worded one (its claims carrying their scopes)."""
    conflicts: dict[tuple[int, int], list[tuple[Claim, Claim]]] = {}
    agreements: dict[tuple[int, int], list[tuple[Claim, Claim]]] = {}
    for key, pairs in sorted(aligned.items()):
        by_claim: dict[int, list[Claim]] = {}
        firsts: dict[int, Claim] = {}
        for ca, cb in pairs:
            by_claim.setdefault(id(ca), []).append(cb)
            firsts[id(ca)] = ca
        for ident, partners in by_claim.items():
            ca = firsts[ident]
            same = [cb for cb in partners if cb.value == ca.value]
            if same:
                agreements.setdefault(key, []).append((ca, same[0]))
            else:
                best = max(partners, key=lambda cb: fuzz.ratio(ca.before, cb.before))
                conflicts.setdefault(key, []).append((scopes.scoped(key[0], ca), scopes.scoped(key[1], best)))
    return conflicts, agreements
