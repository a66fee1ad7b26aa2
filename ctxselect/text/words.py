"""Small, dependency-free text helpers: content terms, the content words around a claim, numbers (the
one number reader) and years."""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from functools import lru_cache

from ctxselect.model.tokens import LETTERS, WORD, WORD_CHARACTERS

__all__ = ["content_terms", "last_content_words", "first_content_word", "number_text", "number_value", "numbers_in",
           "number_tokens", "numbers_of", "years_in", "TextCache", "STOPWORDS"]

# Each pattern of this module and of text/claims.py opens with what its first character must be, and
# the look-behind that guards that character comes after it ("(?<![\w.,])\d" written
# "\d(?<![\w.,]\d)"): the same matches, but ``re`` then skips the positions where that character
# cannot stand without trying the pattern there (2-3 times faster on ordinary text).
_YEAR = re.compile(r"(1(?<!\d1)[5-9]\d\d|2(?<!\d2)0\d\d)(?!\d)")  # (?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)

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
    """Lower-cased, lightly stemmed words (:data:`ctxselect.model.tokens.WORD`) of ``text`` without
    stopwords and one-letter words."""
    return set(_terms_of(text))


@lru_cache(maxsize=8192)
def _terms_of(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in (m.lower() for m in WORD.findall(text)) if len(w) > 1 and w not in STOPWORDS)


#: A context word of a claim (text/claims.py): a word (:data:`ctxselect.model.tokens.WORD`) that starts
#: with a letter, with ``'`` and ``-`` joining words ("o'neil", "long-term"); a run starting with a digit is a number.
_WORD = re.compile(rf"[{LETTERS}][{WORD_CHARACTERS}'\-]*")
#: ASCII -> a space for what ends a context word (all but letters, digits, ``'`` and ``-``), lower case for a letter.
_BREAKS = bytes(ord(chr(k).lower()) if chr(k).isalnum() or chr(k) in "'-" else 32 for k in range(128)) + b" " * 128
_NO_START = "0123456789'-"  # what a run of _words_of holds before its word (strip it: no-op on a word)


def _words_of(text: str) -> list[str]:
    """``_WORD.findall(text)`` lower-cased, one-letter words as "" (one may lower-case to two, "İ");
    of an ASCII text (in a third of the time), its runs of letters, digits, ``'`` and ``-``: each
    holds one word, from its first letter on, or none."""
    return text.encode().translate(_BREAKS).decode().split() if text.isascii() else [
        w.lower() if len(w) > 1 else "" for w in _WORD.findall(text)]


def last_content_words(text: str, count: int) -> list[str]:
    """The last ``count`` content words (context words of two or more characters, not stopwords) of
    ``text``, lower-cased, in text order (read from the end)."""
    out = []
    for w in reversed(_words_of(text)):
        if len(w := w.lstrip(_NO_START)) > 1 and w not in STOPWORDS:
            out.append(w)
            if len(out) == count:
                break
    out.reverse()
    return out


@lru_cache(maxsize=1 << 14)
def first_content_word(text: str) -> str:
    """The first content word of ``text``, lower-cased; "" if none (cached: the texts whose claims
    join share the words after their values)."""
    for w in _words_of(text):
        if len(w := w.lstrip(_NO_START)) > 1 and w not in STOPWORDS:
            return w
    return ""


def years_in(text: str) -> list[int]:
    """Four-digit years (1500–2099) mentioned in ``text``, in order of appearance."""
    return [int(y) for y in _YEAR.findall(text)]


_NUMBER = re.compile(r"\d(?<![\w.,]\d)\d*(?:[.,]\d+)*(?!\w)")  # (?<![\w.,])\d+(?:[.,]\d+)*(?!\w)


def number_value(token: str) -> float:
    """The value of a written number, the one reading every module uses.

    Commas followed by groups of three digits separate thousands ("1,500" = 1500); a lone comma
    otherwise is a decimal comma ("1,5" = 1.5); one point is a decimal point ("1.500" = 1.5, as
    English writes it); several points separate thousands ("1.000.000" = 1000000).
    """
    if "," in token:
        head, *groups = token.split(",")
        last = groups[-1].split(".")
        if head.isdecimal() and all(len(g) == 3 and g.isdecimal() for g in groups[:-1]) and len(last) <= 2 and (
                len(last[0]) == 3 and last[0].isdecimal()):  # "3.5,1.2" is no thousands grouping
            return float(head + "".join(groups))
        if len(groups) == 1 and "." not in token:
            return float(f"{head}.{groups[0]}")
        token = token.replace(",", "")
    if token.count(".") > 1:
        return float(token.replace(".", ""))
    return float(token)


def number_text(value: float) -> str:
    """A number as messages show it: "1500", "1.5"."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def numbers_in(text: str) -> Counter:
    """Standalone numbers in a text ("w123" is a word, not a number), each read by
    :func:`number_value` and written by :func:`number_text` ("1,000" and "1000" are one number)."""
    return numbers_of(number_tokens(text))


def number_tokens(text: str, starts=None) -> list[str]:
    """The standalone numbers of a text as written, in order (what :func:`numbers_in` reads);
    ``starts`` (ascending, optional): every position where one may start, the only ones tried
    (:func:`ctxselect.text.claim_keys.claim_hints` gives them)."""
    if starts is None:
        return _NUMBER.findall(text)
    out, after = [], 0  # matches do not overlap: the next starts at or after the last one's end
    for p in starts:
        if p >= after and (m := _NUMBER.match(text, p)) is not None:
            after = m.end()
            out.append(m.group())
    return out


def numbers_of(tokens: list[str]) -> Counter:
    """:func:`numbers_in` of a text from its :func:`number_tokens`."""
    return Counter(map(_number_written, tokens))


def _number_written(token: str) -> str:
    return number_text(number_value(token))


class TextCache:
    """``read(text, *hints)`` cached for the last ``size`` texts (least recently used out; thread-safe).
    The cache is keyed by the text alone: hints may change how a text is read, never what."""

    def __init__(self, read, size: int):
        self._read, self._size, self._lock, self._found = read, size, threading.Lock(), OrderedDict()
        self.cache_clear = self._clear  # on the instance: what clears caches finds it there, not on the class

    def __call__(self, text: str, *hints):
        with self._lock:
            found = self._found.get(text)
            if found is not None:
                self._found.move_to_end(text)
                return found
        found = self._read(text, *hints)
        with self._lock:
            self._found[text] = found
            if len(self._found) > self._size:
                self._found.popitem(last=False)
        return found

    def _clear(self) -> None:
        """Forget every text."""
        with self._lock:
            self._found.clear()
