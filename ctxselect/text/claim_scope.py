"""What a claim is about: its subject and its qualifiers, read from the text around it.

Two chunks built from one template ("The {plan} plan costs {c} dollars per month", "{n} goals in
{year}", "note number {k} on topic {k}") state the same words before their values and differ only
in what the sentence is about. A :class:`ClaimScope` holds what separates them:

- ``document``: the chunk's title (and section, when given), normalised — the entity a page is about;
- ``subject``: the names of the claim's sentence, and of the sentence before when it has none or
  opens with a pronoun or a definite common noun ("The outlet is licensed ...", "Its population")
  (words with a capital letter, not stopwords, months, weekdays, label words, quarters or
  versions): "basic", "pro", "herman", "u17";
- ``time``: years, decades, fiscal years, quarters and months ("2018", "1990s", "fy2023", "q3",
  "mar");
- ``labels``: identifiers — a label word and its number or numeral ("part 2", "volume 1",
  "number 0", "topic 0", "version 2.1", "part ii"), a numeral after a name ("war ii"), an ordinal
  ("1st", "15th");
- ``period``: what a rate is per, next to the value ("month", "year", "per user").

Times and labels are the claim's sentence's (without the value itself), or, when it states none,
those of the sentences before it in the claim's window — the :data:`SCOPE_BEFORE` characters before
the value, not before the start of its line — so a year or a label stated earlier ("In 2018, ... .
He scored 27 goals.") carries over. A sentence ends at most :data:`SCOPE_AFTER` characters after
the value. The period is read from the words next to the value. Two scopes *match* unless their documents differ (both known) or, for
some part, each side holds something the other does not (``{"2018"}`` vs ``{"2019"}``); an unknown
part (empty on one side) or a more specific one (``{"springfield"}`` vs ``{"springfield",
"illinois"}``) matches. Scopes are read only for the claims the join pairs, never for every claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxselect.model.tokens import LETTERS, WORD_CHARACTERS
from ctxselect.text.words import STOPWORDS

__all__ = ["ClaimScope", "claim_scope", "document_key", "claim_titles", "is_label_before", "SCOPE_BEFORE",
           "SCOPE_AFTER"]

#: A claim's window starts this many characters before its value ...
SCOPE_BEFORE = 250
#: ... and ends with its sentence, at most this many characters after it.
SCOPE_AFTER = 160
_PERIOD_REACH = 50  # a rate's period is read this close to the value

# Words a number after which names something rather than measures it ("part 2", "no. 5", "topic 0").
_LABEL_WORDS = {
    "part": "part", "pt": "part", "vol": "volume", "volume": "volume", "chapter": "chapter", "ch": "chapter",
    "episode": "episode", "ep": "episode", "season": "season", "series": "series", "number": "number",
    "no": "number", "nr": "number", "num": "number", "topic": "topic", "section": "section", "sec": "section",
    "article": "article", "art": "article", "clause": "clause", "paragraph": "paragraph", "para": "paragraph",
    "page": "page", "pp": "page", "figure": "figure", "fig": "figure", "table": "table", "appendix": "appendix",
    "exhibit": "exhibit", "item": "item", "step": "step", "phase": "phase", "stage": "stage", "round": "round",
    "level": "level", "grade": "grade", "class": "class", "tier": "tier", "book": "book", "act": "act",
    "scene": "scene", "verse": "verse", "version": "version", "ver": "version", "release": "release",
    "build": "build", "edition": "edition", "issue": "issue", "route": "route", "highway": "highway",
    "interstate": "interstate", "district": "district", "ward": "ward", "zone": "zone", "region": "region",
    "sector": "sector", "precinct": "precinct", "block": "block", "lot": "lot", "suite": "suite", "room": "room",
    "floor": "floor", "building": "building", "platform": "platform", "gate": "gate", "exit": "exit",
    "track": "track", "channel": "channel", "flight": "flight", "model": "model", "mark": "mark", "mk": "mark",
    "type": "type", "note": "note", "question": "question", "task": "task", "lesson": "lesson", "unit": "unit",
    "module": "module", "lecture": "lecture", "exercise": "exercise", "problem": "problem", "example": "example",
    "case": "case", "patient": "patient", "participant": "participant", "sample": "sample", "cohort": "cohort",
    "wave": "wave", "week": "week", "day": "day", "game": "game", "match": "match", "lap": "lap", "heat": "heat",
    "group": "group", "pool": "pool", "division": "division", "div": "division", "term": "term",
    "semester": "semester", "session": "session", "quarter": "quarter", "option": "option",
    "port": "port", "seat": "seat", "slot": "slot", "id": "id", "code": "code",
}
_LABEL_ALTERNATION = "|".join(sorted(_LABEL_WORDS, key=len, reverse=True))
_NUMERAL = r"#?\d+(?:\.\d+)*[a-z]?(?![\w.,]\d)"
# A number just after a label word is a label, not a claim (text/claims.py asks, on the text before it).
_LABEL_BEFORE = re.compile(rf"(?:(?<![\w'\-])(?:{_LABEL_ALTERNATION})\.?\s{{1,2}}#?|#\s?)$", re.I)
_LABEL = re.compile(rf"(?<![\w'\-])({_LABEL_ALTERNATION})\.?\s{{1,2}}({_NUMERAL}|[ivxlc]{{1,6}}\b)", re.I)
_HASH = re.compile(r"(?<![\w#])#\s?(\d+)")
_VERSION = re.compile(r"(?<![\w.])v(\d+(?:\.\d+)*)\b", re.I)
_ORDINAL = re.compile(r"(?<![\w.,])(\d+)(?:st|nd|rd|th)\b", re.I)
_ROMAN_AFTER_NAME = re.compile(rf"(?<![\w'\-])([{LETTERS}][{WORD_CHARACTERS}'\-]*)\s+([IVXLC]{{1,6}})(?![\w'\-])")
_YEAR = re.compile(r"(?<![\w.,$€£¥])((?:1[5-9]|20)\d\d)(s\b)?(?!\d|[.,]\d)")
_FISCAL = re.compile(r"(?<![\w])(?:(q[1-4])|fy\s?'?(\d{2}(?:\d{2})?))\b", re.I)
_WORD = re.compile(rf"[{LETTERS}][{WORD_CHARACTERS}'\-]*")
_ROMAN = re.compile(r"[IVXLC]{1,6}")
_CODE = re.compile(r"(?i)q[1-4]|fy'?\d+|v\d+")  # times and versions, not names ("U17", "A380" are names)
_MONTH = re.compile(r"(?<![\w'\-])(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)(?:[a-z]*)(?![\w'\-])")
_NOT_NAMES = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
              "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
_PERIODS = {"second": "second", "sec": "second", "s": "second", "minute": "minute", "min": "minute",
            "hour": "hour", "hr": "hour", "h": "hour", "hourly": "hour", "day": "day", "d": "day", "daily": "day",
            "week": "week", "wk": "week", "weekly": "week", "biweekly": "fortnight", "fortnightly": "fortnight",
            "fortnight": "fortnight", "month": "month", "mo": "month", "monthly": "month", "quarter": "quarter",
            "qtr": "quarter", "quarterly": "quarter", "year": "year", "yr": "year", "annum": "year",
            "yearly": "year", "annually": "year", "annual": "year"}
_PERIOD = re.compile(r"(?<![\w])(?:(?P<intro>per|a|an|each|every)\s+(?P<per>[a-z]+)|/\s?(?P<slash>[a-z]+)\b"
                     r"|(?P<adverb>hourly|daily|weekly|biweekly|fortnightly|monthly|quarterly|yearly|annually|annual))",
                     re.I)
# A sentence that opens with a pronoun or a definite common noun ("The outlet", "Its population")
# is about the subject of the sentence before.
_ANAPHORA = re.compile(r"[\s\"'(\[]*(?:(?i:he|she|it|its|they|their|his|her|this|these|those)\b(?!\s+[A-Z])"
                       r"|(?i:the|that)\s+[a-z])")
_SENTENCE_END = re.compile(r"[.!?][\"')\]»”]*(?=\s+[^\sa-z]|\s*$)|\n")


def is_label_before(text: str, start: int) -> bool:
    """Whether the number at ``start`` follows a label word ("part 2", "No. 5", "topic 0", "#3"): it
    names something rather than states a value, so it is no claim."""
    return _LABEL_BEFORE.search(text, max(0, start - 16), start) is not None


@dataclass(frozen=True)
class ClaimScope:
    """What a claim is stated of, and under which qualifiers (module docstring).

    Attributes
    ----------
    document : tuple of str
        The chunk's normalised title, then section; "" where unknown.
    subject, time, labels, period : frozenset of str
        Names, years and quarters, identifiers and ordinals, and rate periods of the claim's window.
    """

    document: tuple[str, ...] = ()
    subject: frozenset[str] = frozenset()
    time: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()
    period: frozenset[str] = frozenset()

    def differences(self, other: ClaimScope) -> list[str]:
        """The parts on which the two scopes differ ([] when they match): "document", "subject",
        "time", "labels", "period"."""
        out = ["document"] if any(a and b and a != b for a, b in zip(self.document, other.document)) else []
        for part in ("subject", "time", "labels", "period"):
            mine, theirs = getattr(self, part), getattr(other, part)
            if not mine <= theirs and not theirs <= mine:  # each side holds something the other does not
                out.append(part)
        return out

    def matches(self, other: ClaimScope) -> bool:
        """Whether two claims can be about the same thing: no part of the scopes differs."""
        return not self.differences(other)


def document_key(title) -> tuple[str, ...]:
    """A chunk's document scope from its title: a string, a sequence (title, section, ...) or None;
    each part lower-cased to its words ("" when missing or not text)."""
    parts = title if isinstance(title, (tuple, list)) else (title,)
    return tuple(" ".join(re.findall(r"\w+", p.lower())) if isinstance(p, str) else "" for p in parts)


class _Titles(Sequence):
    """Candidates' (title, section), read from ``extra`` only when asked for."""

    def __init__(self, candidates):
        self._candidates = candidates

    def __len__(self) -> int:
        return len(self._candidates)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        extra = self._candidates[k].extra
        return (extra.get("title"), extra.get("section"))


def claim_titles(candidates) -> Sequence:
    """The ``titles`` argument of :func:`ctxselect.text.claims.find_claim_conflicts` for candidates:
    each one's ``(title, section)`` from its ``extra`` (``None`` where absent), read lazily — only for
    the chunks whose claims join another's.

    Parameters
    ----------
    candidates : sequence of Candidate

    Returns
    -------
    Sequence of (str or None, str or None)
    """
    return _Titles(candidates)


def _window(text: str, start: int, end: int) -> tuple[int, int]:
    """[lo, hi) of a claim's window: back SCOPE_BEFORE characters (not past a line start, not mid-word),
    forward to the end of the value's sentence (at most SCOPE_AFTER characters)."""
    lo = max(text.rfind("\n", 0, start) + 1, start - SCOPE_BEFORE, 0)
    if lo > 0 and text[lo - 1].isalnum():
        while lo < start and text[lo].isalnum():
            lo += 1
    m = _SENTENCE_END.search(text, end, min(len(text), end + SCOPE_AFTER))
    return lo, (m.start() if m else min(len(text), end + SCOPE_AFTER))


def _names(part: str) -> set[str]:
    out = set()
    for w in _WORD.findall(part):
        low = w.lower()
        if (low != w and len(w) > 1 and low not in STOPWORDS and low not in _NOT_NAMES and low not in _LABEL_WORDS
                and not _ROMAN.fullmatch(w) and not _CODE.fullmatch(w)):
            out.add(low)
    return out


def _labels(part: str) -> set[str]:
    out = {f"{_LABEL_WORDS[m.group(1).lower()]} {m.group(2).lower().lstrip('#')}" for m in _LABEL.finditer(part)}
    out |= {f"number {m.group(1)}" for m in _HASH.finditer(part)}
    out |= {f"version {m.group(1)}" for m in _VERSION.finditer(part)}
    out |= {m.group(1) + "." for m in _ORDINAL.finditer(part)}
    for m in _ROMAN_AFTER_NAME.finditer(part):
        word = m.group(1).lower()
        if word != m.group(1) and word not in STOPWORDS:
            out.add(f"{_LABEL_WORDS.get(word, word)} {m.group(2).lower()}")
    return out


def _times(part: str) -> set[str]:
    out = {m.group(1) + (m.group(2) or "") for m in _YEAR.finditer(part)}
    out |= {m.group(1).lower() for m in _MONTH.finditer(part) if m.group(0).lower() in _NOT_NAMES}
    for m in _FISCAL.finditer(part):
        if m.group(1):
            out.add(m.group(1).lower())
        else:
            year = m.group(2)
            out.add("fy" + (year if len(year) == 4 else "20" + year))
    return out


def _periods(part: str) -> set[str]:
    out = set()
    for m in _PERIOD.finditer(part):
        word = (m.group("per") or m.group("slash") or m.group("adverb")).lower()
        if word in _PERIODS:
            out.add(_PERIODS[word])
        elif (m.group("intro") or "").lower() == "per" and word not in ("cent", "se") and len(word) > 2:
            out.add("per " + word.removesuffix("s"))
    return out


def claim_scope(text: str, claim, title=None) -> ClaimScope:
    """The scope of ``claim``, one of ``extract_claims(text)``'s (it knows where it stands in ``text``).

    Parameters
    ----------
    text : str
        The text the claim was read from.
    claim : Claim
        A claim with its position (``start``, ``end``).
    title : str, sequence of str, or None
        The chunk's title, or (title, section, ...) (:func:`document_key`).

    Returns
    -------
    ClaimScope
    """
    start, end = claim.start, claim.end
    if start < 0:
        return ClaimScope(document_key(title))
    lo, hi = _window(text, start, end)
    starts = [lo, lo] + [m.end() for m in _SENTENCE_END.finditer(text, lo, start)]  # sentences before the value
    own = text[starts[-1]:start] + " | " + text[end:hi]  # the value's sentence, without the value
    subject = _names(own)  # the names of the value's sentence, and of the one before when it has none
    if not subject or _ANAPHORA.match(text, starts[-1], start):  # or refers back to it ("Herman is a
        subject |= _names(text[starts[-2]:starts[-1]])         # town. The population was 1,207 ...")
    time, labels = _times(own), _labels(own)  # the sentence's own, else those stated before it in the window
    near = text[max(lo, start - _PERIOD_REACH):start] + " | " + text[end:min(hi, end + _PERIOD_REACH)]
    return ClaimScope(
        document=document_key(title),
        subject=frozenset(subject),
        time=frozenset(time or _times(text[lo:starts[-1]])),
        labels=frozenset(labels or _labels(text[lo:starts[-1]])),
        period=frozenset(_periods(near)),
    )
