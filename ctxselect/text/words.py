"""Small, dependency-free text helpers: content terms and years."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

__all__ = ["content_terms", "numbers_in", "years_in", "STOPWORDS"]

_WORD = re.compile(r"[A-Za-z0-9\u00C0-\uFFFF]+")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves whose whether within without upon one two per via yes
according article report reported reports said says say published
""".split())


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A light suffix strip, enough to match plurals and simple inflections (cached: a corpus
    repeats a small vocabulary, and this ran once per word of every text)."""
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


def content_terms(text: str) -> set[str]:
    """Lower-cased, lightly stemmed words of ``text`` without stopwords and one-letter words."""
    return set(_terms_of(text))


@lru_cache(maxsize=8192)
def _terms_of(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in (m.lower() for m in _WORD.findall(text)) if len(w) > 1 and w not in STOPWORDS)


def years_in(text: str) -> list[int]:
    """Four-digit years (1500–2099) mentioned in ``text``, in order of appearance."""
    return [int(y) for y in _YEAR.findall(text)]


_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?!\w)")


def numbers_in(text: str) -> Counter:
    """Standalone numbers in a text ("w123" is a word, not a number), with thousands separators
    removed ("1,000" == "1000") and a decimal comma read as a point."""
    out: Counter = Counter()
    for token in _NUMBER.findall(text):
        if "," in token or "." in token:
            parts = token.replace(",", ".").split(".")
            if len(parts) > 1 and all(len(p) == 3 for p in parts[1:]):
                token = "".join(parts)  # 1,000 / 1.000.000: thousands
            else:
                token = ".".join(parts)
        out[token] += 1
    return out
