"""The patterns of :mod:`ctxselect.text.claims`: the dates and numbers a claim states (kept apart
from the join, which the claims module holds; it uses them under these names).
"""

from __future__ import annotations

import re
from datetime import date

_MONTHS = {m: k for k, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}
_MONTHS.update({m[:3]: k for m, k in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DATE_PATTERNS = [
    (re.compile(r"(\d(?<!\w\d)\d{3})-(\d{1,2})-(\d{1,2})\b"), ("y", "m", "d")),  # \b(\d{4})-..., see text/words.py
    (re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), ("M", "d", "y")),
    (re.compile(rf"(\d(?<!\w\d)\d?)(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})\b", re.I), ("d", "M", "y")),
]


def _may_hold_date(text: str) -> bool:
    """A date needs an ISO form or a month name: both are checked with plain substring searches first,
    since the full date patterns cost ~80 µs a text (claim_hints reads the same in the buffer)."""
    if "-" in text:
        return True
    lower = text.lower()
    return ("jan" in lower or "feb" in lower or "mar" in lower or "apr" in lower or "may" in lower or "jun" in lower
            or "jul" in lower or "aug" in lower or "sep" in lower or "oct" in lower or "nov" in lower or "dec" in lower)


_DIGIT = re.compile(r"\d")
# (?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)..., its first digit taken first (text/words.py)
_NUMBER = re.compile(r"(\d(?<![\w.,]\d)(?:\d{0,2}(?:,\d{3})+|\d*(?:\.\d+)?))"
                     r"(?:\s*(%|percent|per cent)|\s+(thousand|million|billion|trillion))?(?![\w])", re.I)
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}


def _date(groups, order) -> str | None:  # the ISO date of a date pattern's groups, None if no date
    parts = dict(zip(order, groups))
    try:
        month = int(parts["m"]) if "m" in parts else _MONTHS[parts["M"].lower().rstrip(".")]
        return date(int(parts["y"]), month, int(parts["d"])).isoformat()
    except (KeyError, ValueError):
        return None


def _number_matches(text: str, starts):
    """``_NUMBER.finditer(text)``; with ``starts`` (ascending: every position where a match may
    start), the same matches, tried only there."""
    if starts is None:
        yield from _NUMBER.finditer(text)
        return
    after = 0  # matches do not overlap: the next starts at or after the last one's end
    for p in starts:
        if p >= after and (m := _NUMBER.match(text, p)) is not None:
            after = m.end()
            yield m
