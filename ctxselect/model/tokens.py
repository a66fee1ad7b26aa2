"""Token counting for candidates that arrive without a ``tokens`` count, and the one definition
of a word.

A **word** is a maximal run of ASCII letters and digits or code points U+00C0–U+FFFF
(:data:`WORD`, the regex ``[A-Za-z0-9\\u00C0-\\uFFFF]+``). Every reader of words uses it: this
token estimate, content terms (``ctxselect.text.words``), a claim's context words
(``ctxselect.text.claims``: words that start with a letter, joined by ``'`` and ``-``) and
MinHash shingles, and the compiled kernels read the same runs off the UTF-8 buffer (in UTF-8:
ASCII alphanumerics, two-byte sequences from lead byte 0xC3 on, and every three-byte sequence;
U+0080–U+00BF, astral code points, ASCII whitespace and ASCII punctuation separate words).

The range is a cheap over-approximation of "letters and digits": it also holds the general
punctuation, typographic spaces (U+2000–U+200A, U+3000), curly quotes and dashes, and CJK
punctuation, which therefore join the words around them ("don’t" is one word, "a — b" three).
A definition by Unicode category, and counting for scripts without spaces, is the tokenizer work
of issue 15.

The default counter needs no model files: it counts words (punctuation marks, underscores and
whitespace are not counted) and scales them by 1.3, the usual ratio of BPE tokens to English
words, rounding up (and never below 1). It is an estimate; pass your tokenizer's counter for exact budgets::

    import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")
    ctxselect.set_token_counter(lambda text: len(enc.encode(text)))

or give ``token_counter=`` to :func:`ctxselect.pack`, :func:`ctxselect.inspect` and
:func:`ctxselect.read_dump`.
"""

from __future__ import annotations

import math
import re
from typing import Callable

__all__ = ["TokenCounter", "default_token_counter", "set_token_counter", "get_token_counter", "WORD",
           "WORD_CHARACTERS", "LETTERS"]

TokenCounter = Callable[[str], int]

#: A word's characters, as a regex class body: ASCII letters and digits, U+00C0–U+FFFF.
WORD_CHARACTERS = "A-Za-z0-9\u00C0-\uFFFF"
#: The word characters that are not ASCII digits (a claim's context word starts with one).
LETTERS = "A-Za-z\u00C0-\uFFFF"
#: THE word: a maximal run of :data:`WORD_CHARACTERS`.
WORD = re.compile(f"[{WORD_CHARACTERS}]+")
TOKENS_PER_WORD = 1.3


def default_token_counter(text: str) -> int:
    """Estimate the tokens of ``text``: ceil(1.3 x words), at least 1 (a word is a run of
    :data:`WORD`; punctuation is not counted)."""
    return max(1, math.ceil(TOKENS_PER_WORD * len(WORD.findall(text))))


_current: TokenCounter = default_token_counter


def set_token_counter(counter: TokenCounter | None) -> None:
    """Set the process-wide token counter (``None`` restores the default)."""
    global _current
    if counter is not None and not callable(counter):
        raise TypeError("token counter must be a callable taking a str and returning an int")
    _current = counter or default_token_counter


def get_token_counter() -> TokenCounter:
    """Return the process-wide token counter."""
    return _current
