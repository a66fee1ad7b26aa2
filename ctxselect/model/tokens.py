"""Token counting for candidates that arrive without a ``tokens`` count, and the one definition
of a word.

A **word** is a maximal run of ASCII letters and digits or code points U+00C0–U+FFFF
(:data:`WORD`, the regex ``[A-Za-z0-9\\u00C0-\\uFFFF]+``). Every reader of words uses it: content
terms (``ctxselect.text.words``), a claim's context words (``ctxselect.text.claims``: words that
start with a letter, joined by ``'`` and ``-``) and MinHash shingles, and the compiled kernels
read the same runs off the UTF-8 buffer (in UTF-8: ASCII alphanumerics, two-byte sequences from
lead byte 0xC3 on, and every three-byte sequence; U+0080–U+00BF, astral code points, ASCII
whitespace and ASCII punctuation separate words).

The range is a cheap over-approximation of "letters and digits": it also holds the general
punctuation, typographic spaces (U+2000–U+200A, U+3000), curly quotes and dashes, and CJK
punctuation, which therefore join the words around them ("don’t" is one word, "a — b" three).

The default counter
-------------------
:func:`default_token_counter` needs no model files. A character of a script written without
spaces between words, or of Hangul (:data:`PER_CHARACTER`: Han, kana, Hangul, Thai, Lao, Khmer,
Myanmar, Tibetan, CJK and full-width punctuation, the astral CJK ideographs) counts as one token;
the rest of the text counts its words (punctuation marks, underscores and whitespace are not
counted) scaled by 1.3, the usual ratio of BPE tokens to English words. The sum is rounded up,
and never below 1. A text with no such character counts exactly as it always did: ceil(1.3 x
words), so selections over English (and any space-separated script) are unchanged.

Measured against OpenAI's BPEs on the shipped samples (``tests/data/multilingual_samples.jsonl``,
23 texts written for this; the real counts from the ``bpe-openai`` package, whose cl100k_base
vocabulary is tiktoken's own file; ``tests/model/test_token_accuracy.py`` recomputes every cell).
Error = estimate / real count - 1, per text, the range over a language's texts (negative: the
estimate is too low, a budget can be overrun by that much):

=====================  =====  ============  ==============  ====================
language               texts  cl100k_base   o200k_base      before (cl100k_base)
=====================  =====  ============  ==============  ====================
English                2      +10% .. +12%  +10% .. +15%    same
German                 2      -43% .. -32%  -28% .. -14%    same
French                 1      -23%          +0%             same
Russian                2      -58% .. -57%  -26% .. -23%    same
Greek                  1      -76%          -41%            same
Arabic                 2      -71% .. -69%  -27% .. -24%    same
Hindi                  1      -75%          -9%             same
Chinese                3      -12% .. +28%  +39% .. +55%    -98% .. -97%
Japanese               2      -4% .. +8%    +33% .. +44%    -98%
Korean                 2      -19% .. -9%   +24% .. +44%    -66% .. -61%
Thai                   2      +4% .. +8%    +134% .. +145%  -96% .. -95%
Python code            1      -23%          -23%            same
JSON                   1      -52%          -52%            same
Mixed Chinese/English  1      -12%          -8%             -53%
=====================  =====  ============  ==============  ====================

So for Chinese, Japanese, Korean and Thai text the default is now within -19% .. +28% of
cl100k_base (it was 2.6-50x too low), and it errs high against o200k_base (up to 2.5x for Thai).
Space-separated scripts count as before (1.3 tokens a word, tuned on English): still a large
undercount for Cyrillic, Greek, Arabic and Devanagari text, German compounds and code. Where
budgets must be exact, count with the model's tokenizer:

* ``token_counter="tiktoken:cl100k_base"`` (any tiktoken encoding name): needs ``tiktoken`` and the
  encoding's file already in tiktoken's cache (``TIKTOKEN_CACHE_DIR``, else
  ``<tmp>/data-gym-cache``); ctxselect never downloads it: tiktoken's file reader is blocked from
  URLs while the encoding loads, and a missing file is an :class:`~ctxselect.InputError`;
* ``token_counter="bpe-openai:o200k_base"``: the ``bpe-openai`` package, whose wheel holds the
  vocabularies (nothing to fetch);
* a tokenizer object: anything with ``encode`` -- a Hugging Face ``tokenizers.Tokenizer``
  (``Tokenizer.from_file("tokenizer.json")``), a ``transformers`` tokenizer, a tiktoken
  ``Encoding`` -- counted without special tokens;
* any callable ``text -> int``. A counter that also has ``count_batch(texts) -> list[int]``
  (tokenizer objects get one, from ``encode_batch`` / ``encode_ordinary_batch``) counts all the
  texts of a call in one batch.

Give one as ``token_counter=`` to :func:`ctxselect.select`, :func:`ctxselect.pack`,
:func:`ctxselect.inspect` and :func:`ctxselect.read_dump`, or process-wide with
:func:`set_token_counter`.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import sys
import threading
from typing import Any, Callable, Iterable, Sequence

from ctxselect.errors import InputError
from ctxselect.model.counting import batch_counts, token_length

__all__ = ["TokenCounter", "TokenizerCounter", "default_token_counter", "set_token_counter", "get_token_counter",
           "resolve_token_counter", "batch_counted", "WORD", "TOKEN_UNIT", "WORD_CHARACTERS", "LETTERS",
           "PER_CHARACTER", "char_class"]

TokenCounter = Callable[[str], int]

#: A word's characters, as a regex class body: ASCII letters and digits, U+00C0–U+FFFF.
WORD_CHARACTERS = "A-Za-z0-9\u00C0-\uFFFF"
#: The word characters that are not ASCII digits (a claim's context word starts with one).
LETTERS = "A-Za-z\u00C0-\uFFFF"


def char_class(body: str) -> str:
    """A regex character class of exactly the characters of the class body ``body`` (single
    characters, ``a-b`` ranges and backslash-escaped characters, as :data:`WORD_CHARACTERS`),
    written as the negation of the rest: Python's regex compiler fills a 65,536-entry map, one
    character at a time, for each range of the body inside the Basic Multilingual Plane (1.5-4.5 ms
    a pattern: ctxselect's regular expressions took 22-24 ms of a fresh process's imports, now 11),
    and that of the negation holds only the few characters left out (the astral range beyond it
    stays a range). Matching is as fast for :data:`WORD` and faster for the CJK classes, but 25 %
    slower for the repeated class of a claim's context words (text/words.py), which keeps the plain
    form: it runs on every call. For patterns compiled without flags (under ``re.IGNORECASE`` the
    two forms differ); a body other than characters, ranges and escaped punctuation (``\\d``, a
    leading ``^``, a backward range) is a ``ValueError``."""
    if body.startswith("^"):
        raise ValueError("char_class: a negated body is not supported")

    def literal(k: int) -> tuple[int, int]:  # (the character at k, the index after it); "\\x" is x
        if body[k] != "\\":
            return ord(body[k]), k + 1
        if k + 1 == len(body) or body[k + 1].isalnum():
            raise ValueError(f"char_class: only escaped punctuation is supported, not {body[k:k + 2]!r}")
        return ord(body[k + 1]), k + 2

    ranges, k = [], 0
    while k < len(body):
        lo, k = literal(k)
        hi = lo
        if k + 1 < len(body) and body[k] == "-":
            hi, k = literal(k + 1)
            if hi < lo:
                raise ValueError(f"char_class: a range runs backwards ({chr(lo)!r}-{chr(hi)!r})")
        ranges.append((lo, hi))
    rest, start = [], 0
    for lo, hi in sorted(ranges):
        if lo > start:
            rest.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= sys.maxunicode:
        rest.append((start, sys.maxunicode))
    if not rest:  # every character
        return f"[\\U00000000-\\U{sys.maxunicode:08x}]"
    return "[^" + "".join(f"\\U{lo:08x}" + (f"-\\U{hi:08x}" if hi > lo else "") for lo, hi in rest) + "]"


#: THE word: a maximal run of :data:`WORD_CHARACTERS`.
WORD = re.compile(f"{char_class(WORD_CHARACTERS)}+")
TOKENS_PER_WORD = 1.3
#: Characters the default counter counts one token each (a regex class body): Thai, Lao, Tibetan,
#: Myanmar, Hangul Jamo, Khmer, CJK symbols and punctuation, kana, Hangul compatibility Jamo,
#: CJK Extension A, CJK Unified Ideographs, Hangul Jamo Extended-A, Hangul syllables, CJK
#: compatibility ideographs, half- and full-width forms, and the astral CJK ideographs.
PER_CHARACTER = ("\u0E00-\u0FFF\u1000-\u109F\u1100-\u11FF\u1780-\u17FF\u3000-\u30FF\u3130-\u318F\u31F0-\u31FF"
                 "\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF"
                 "\U00020000-\U0003FFFF")
_PER_CHARACTER = re.compile(char_class(PER_CHARACTER))
#: What the default counter counts as one unit: a character of :data:`PER_CHARACTER`, or a run of
#: :data:`WORD` characters outside it (cutting a text by these units cuts it as the count goes).
TOKEN_UNIT = re.compile(f"{_PER_CHARACTER.pattern}|(?:(?!{_PER_CHARACTER.pattern}){char_class(WORD_CHARACTERS)})+")
_EXPECTED = ("a callable text -> int, an object with encode (a tokenizer), or 'tiktoken:<encoding>' / "
             "'bpe-openai:<encoding>'")


def default_token_counter(text: str) -> int:
    """Estimate the tokens of ``text`` without a tokenizer.

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    int
        ceil(c + 1.3 x w), at least 1: ``c`` characters of :data:`PER_CHARACTER` (scripts without
        spaces, Hangul) and ``w`` words (runs of :data:`WORD`) in the rest of the text. Without
        such characters this is ceil(1.3 x words), as before per-character counting.
    """
    rest, per_character = (text, 0) if text.isascii() else _PER_CHARACTER.subn(" ", text)
    return max(1, math.ceil(TOKENS_PER_WORD * len(WORD.findall(rest)) + per_character))


class TokenizerCounter:
    """A tokenizer object as a token counter: ``counter(text)`` and ``counter.count_batch(texts)``.

    Parameters
    ----------
    tokenizer : object
        Anything with ``encode(text)`` returning a sequence of ids or an object with ``.ids``
        (Hugging Face ``tokenizers``, ``transformers``, sentencepiece), or with
        ``encode_ordinary`` (tiktoken, bpe-openai). Special tokens are not added (a tokenizer
        whose ``encode`` takes ``add_special_tokens`` gets ``False``; tiktoken-like encodings use
        ``encode_ordinary``, which reads ``<|endoftext|>`` in a text as plain text).
    name : str, optional
        How the counter is shown.
    """

    def __init__(self, tokenizer: Any, name: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.name = name or type(tokenizer).__name__
        self._kwargs: dict[str, Any] = {}
        if callable(getattr(tokenizer, "encode_ordinary", None)):
            self._encode = tokenizer.encode_ordinary
            self._encode_batch = getattr(tokenizer, "encode_ordinary_batch", None)
        elif callable(getattr(tokenizer, "encode", None)):
            self._encode = tokenizer.encode
            self._encode_batch = getattr(tokenizer, "encode_batch", None)
            if _accepts(tokenizer.encode, "add_special_tokens"):
                self._kwargs = {"add_special_tokens": False}
        else:
            raise InputError(field="token_counter", expected=_EXPECTED, found=tokenizer, has_found=True)
        if self._encode_batch is not None and not _accepts(self._encode_batch, *self._kwargs):
            self._encode_batch = None

    def __repr__(self) -> str:
        return f"TokenizerCounter({self.name})"

    def __call__(self, text: str) -> int:
        return token_length(self._encode(text, **self._kwargs))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """The token count of each text, in one call of the tokenizer's batch encoder when it has one."""
        if self._encode_batch is None:
            return [self(text) for text in texts]
        return [token_length(ids) for ids in self._encode_batch(list(texts), **self._kwargs)]


def _accepts(function: Callable, *names: str) -> bool:
    """Whether ``function`` takes every keyword of ``names`` (False when its signature is unknown)."""
    if not names:
        return True
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    keywords = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    return all(name in parameters or keywords for name in names)


_TIKTOKEN_LOCK = threading.Lock()


class _Download(Exception):
    """tiktoken tried to fetch a file from a URL."""


def _tiktoken_encoding(name: str) -> Any:
    """tiktoken's encoding ``name`` from local files only (its cache, or a plugin's local paths)."""
    try:
        import tiktoken
        import tiktoken.load as load
    except ImportError:
        raise InputError(field="token_counter", message="tiktoken is not installed",
                         expected="pip install tiktoken, with the encoding's file in its cache") from None
    with _TIKTOKEN_LOCK:
        reader = load.read_file

        def local_only(blobpath: str) -> bytes:
            if "://" in blobpath:
                raise _Download(blobpath)
            return reader(blobpath)

        load.read_file = local_only
        try:
            return tiktoken.get_encoding(name)
        except _Download as download:
            import os
            import tempfile
            cache = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR",
                                   os.path.join(tempfile.gettempdir(), "data-gym-cache")))
            raise InputError(field="token_counter",
                             message=f"tiktoken's {name} file is not on this machine and ctxselect never downloads it",
                             expected=f"it in tiktoken's cache ({cache or 'disabled: TIKTOKEN_CACHE_DIR is empty'}; "
                                      f"the file for {download.args[0]}), or 'bpe-openai:{name}'") from None
        except ValueError:
            raise InputError(field="token_counter", message=f"tiktoken has no encoding {name!r}",
                             expected="one of " + ", ".join(tiktoken.list_encoding_names())) from None
        finally:
            load.read_file = reader


def _bpe_openai_encoding(name: str) -> Any:
    try:
        import bpe_openai
    except ImportError:
        raise InputError(field="token_counter", message="bpe-openai is not installed",
                         expected="pip install bpe-openai") from None
    if name not in bpe_openai.list_encoding_names():
        raise InputError(field="token_counter", message=f"bpe-openai has no encoding {name!r}",
                         expected="one of " + ", ".join(bpe_openai.list_encoding_names()))
    return bpe_openai.get_encoding(name)


_NAMED = {"tiktoken": _tiktoken_encoding, "bpe-openai": _bpe_openai_encoding}


@functools.lru_cache(maxsize=None)
def _named_counter(spec: str) -> TokenizerCounter:
    library, _, name = spec.partition(":")
    if library not in _NAMED or not name:
        raise InputError(field="token_counter", message=f"unknown token counter {spec!r}", expected=_EXPECTED)
    return TokenizerCounter(_NAMED[library](name), name=spec)


def resolve_token_counter(counter: Any) -> TokenCounter | None:
    """The callable a ``token_counter=`` argument stands for.

    Parameters
    ----------
    counter : None, str, callable or tokenizer object
        ``None`` (the caller then uses :func:`get_token_counter`); a name, ``"tiktoken:<encoding>"``
        or ``"bpe-openai:<encoding>"`` (loaded once per process, from local files only); a counter
        (a callable ``text -> int``, optionally with ``count_batch``); or a tokenizer object with
        ``encode`` / ``encode_ordinary``, wrapped in a :class:`TokenizerCounter`.

    Returns
    -------
    callable or None

    Raises
    ------
    InputError
        For anything else, or a named counter whose package or files are missing (nothing is
        downloaded).
    """
    if counter is None:
        return None
    if isinstance(counter, str):
        return _named_counter(counter)
    if isinstance(counter, TokenizerCounter) or (callable(counter) and not hasattr(counter, "encode")
                                                 and not hasattr(counter, "encode_ordinary")):
        return counter
    if hasattr(counter, "count_batch") and callable(counter):
        return counter  # a counter of one's own that happens to have an encode method
    return TokenizerCounter(counter)


def batch_counted(counter: TokenCounter, texts: Iterable[str]) -> TokenCounter:
    """``counter``, with the counts of ``texts`` taken ahead in one ``count_batch`` call when the
    counter has one (texts not among them are counted one by one, as before).

    Raises
    ------
    InputError
        When ``count_batch`` raises, returns no list, or a different number of counts than texts.
    """
    batch = getattr(counter, "count_batch", None)
    if batch is None:
        return counter
    unique = list(dict.fromkeys(texts))
    if not unique:
        return counter
    counts = batch_counts(batch, unique)  # what it raises or returns wrongly: an InputError
    if len(counts) != len(unique):
        raise InputError(field="token_counter", message=f"count_batch returned {len(counts)} counts for "
                         f"{len(unique)} texts", expected="one count per text")
    known = dict(zip(unique, counts))
    return lambda text: known[text] if text in known else counter(text)


_current: TokenCounter = default_token_counter


def set_token_counter(counter: Any) -> None:
    """Set the process-wide token counter.

    Parameters
    ----------
    counter : None, str, callable or tokenizer object
        As for :func:`resolve_token_counter`; ``None`` restores :func:`default_token_counter`.

    Raises
    ------
    InputError
        For anything else (it was a ``TypeError`` before named counters), or a named counter whose
        package or files are missing.
    """
    global _current
    _current = resolve_token_counter(counter) or default_token_counter


def get_token_counter() -> TokenCounter:
    """Return the process-wide token counter (always a callable ``text -> int``)."""
    return _current
