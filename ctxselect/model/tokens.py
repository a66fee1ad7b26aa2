"""Token counting for candidates that arrive without a ``tokens`` count.

The default counter needs no model files: it counts words (runs of letters, digits and
underscores, the regex ``\\w+``; punctuation marks and whitespace are not counted) and scales
them by 1.3, the usual ratio of BPE tokens to English words, rounding up (and never below 1). It
is an estimate; pass your tokenizer's counter for exact budgets::

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

__all__ = ["TokenCounter", "default_token_counter", "set_token_counter", "get_token_counter"]

TokenCounter = Callable[[str], int]

_WORD = re.compile(r"\w+")
TOKENS_PER_WORD = 1.3


def default_token_counter(text: str) -> int:
    """Estimate the tokens of ``text``: ceil(1.3 x words), at least 1 (a word is a run of ``\\w``
    characters; punctuation is not counted)."""
    words = len(_WORD.findall(text))
    return max(1, math.ceil(TOKENS_PER_WORD * words))


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
