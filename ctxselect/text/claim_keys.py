"""Which texts could hold a claim that joins another text's: the compiled prefilter of
:func:`ctxselect.text.claims.find_claim_conflicts`.

Reading a text's claims costs tens of microseconds in Python (the date and number patterns, the
context words), yet a claim only matters when its join key (kind, unit, two nearest context words)
is also a claim's of another text. :func:`texts_to_read` asks the kernel of
:mod:`ctxselect.kernels.claims` for a superset of each text's join keys — (hash of the two context
words, what the unit could be) — and keeps the texts with an entry that joins another text's. A
text the kernel cannot read exactly (a code point of :func:`exotic_code_points`) is read in Python
and its exact keys join the others. A text left out has claims only in join buckets of its own,
which never pair, and it changes no other bucket's size: the result of the join is unchanged
(tests/text/test_claim_prefilter.py checks both the superset and the equality).
"""

from __future__ import annotations

import hashlib
import marshal
import math
import os
import re
import sys
import tempfile
import unicodedata
from functools import cache

import numpy as np

from ctxselect import _config
from ctxselect._config import SERIAL_BYTES
from ctxselect.kernels.claim_hints import EXOTIC, HAS_DIGIT, MAY_HOLD_DATE, _claim_hints
from ctxselect.kernels.claims import (SCAN_EXTRA, UNIT_DATE, UNIT_PERCENT, _claim_keys, _claim_keys_serial,
                                     _shared_texts)
from ctxselect.kernels.scan_bounds import _scan_bounds
from ctxselect.model.tokens import LETTERS, WORD_CHARACTERS, char_class
from ctxselect.packing import text_buffer
from ctxselect.text.words import STOPWORDS

__all__ = ["texts_to_read", "claim_hints", "hinted_texts", "EXOTIC", "HAS_DIGIT", "candidate_keys", "byte_words",
           "key_of", "unit_key", "word_hash", "exotic_code_points", "read_only", "CONTEXT_WINDOW", "CONTEXT_WORDS"]

#: A claim's context words are read from this many characters before it (text/claims.py) ...
CONTEXT_WINDOW = 80
#: ... and at most this many of them are kept.
CONTEXT_WORDS = 5
#: The kernel reads about this many bytes of text per launch ...
BLOCK_BYTES = 1 << 23
#: ... and gives each text room for one entry per this many bytes, plus four (a text that needs
#: more is read again with room for any number).
CAP_BYTES = 32
_MASK = (1 << 64) - 1
_FNV_OFFSET, _FNV_PRIME, _SALT = 0xCBF29CE484222325, 0x100000001B3, 0x9E3779B97F4A7C15
_WORD_CLASS = re.compile(char_class(LETTERS))  # a context word's first character (text/claims.py)
_RUN_CLASS = re.compile(char_class(WORD_CHARACTERS + "'\\-"))  # ... and its others


def word_hash(word: str) -> int:
    """The kernel's hash of a lower-cased word: FNV-1a over its code points, final sigma as sigma."""
    h = _FNV_OFFSET
    for ch in word:
        cp = ord(ch)
        h = ((h ^ (0x3C3 if cp == 0x3C2 else cp)) * _FNV_PRIME) & _MASK
    return h


def _mix64(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def key_of(first: str, second: str) -> int:
    """The kernel's key of two consecutive context words."""
    return _mix64(_mix64(word_hash(first) ^ _SALT) ^ word_hash(second))


@cache
def _stopword_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """STOPWORDS as (open-addressing slots: indices by hash, -1 empty; byte offsets; UTF-8 bytes)."""
    words = sorted(STOPWORDS)
    encoded = [w.encode("utf-8") for w in words]
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    raw = np.frombuffer(b"".join(encoded) or b"\0", dtype=np.uint8).copy()
    size = 1 << max(4, (4 * len(words)).bit_length())  # at most a quarter full
    slots = np.full(size, -1, dtype=np.int64)
    for index, word in enumerate(words):
        k = word_hash(word) & (size - 1)
        while slots[k] >= 0:
            k = (k + 1) & (size - 1)
        slots[k] = index
    return slots, offsets, raw


@cache
def exotic_code_points() -> np.ndarray | None:
    """:func:`find_exotic_code_points`, read from the kernel cache directory when an earlier
    process of the same Python, Unicode data and code computed it (it takes 0.1 s, a fifth of a
    fresh process's first ``select()``), else computed and stored there (written whole or not at
    all; no disk cache: computed)."""
    if _config.CACHE_DIR is None:
        return find_exotic_code_points()
    code = marshal.dumps(find_exotic_code_points.__code__)  # the code's own bytes: no source file needed
    key = hashlib.sha256("\0".join((sys.version, unicodedata.unidata_version, WORD_CHARACTERS, LETTERS))
                         .encode("utf-8", "surrogatepass") + code).hexdigest()[:24]
    path = os.path.join(_config.CACHE_DIR, f"exotic-{key}.npy")
    try:
        stored = np.load(path, allow_pickle=False)
        if stored.dtype == np.int64 and stored.ndim == 1:
            return None if stored.size == 0 else stored  # stored empty: None (the prefilter off)
    except (OSError, ValueError):
        pass
    found = find_exotic_code_points()
    try:
        fd, temporary = tempfile.mkstemp(dir=_config.CACHE_DIR, suffix=".npy.tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.save(fh, np.zeros(0, dtype=np.int64) if found is None else found, allow_pickle=False)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    except OSError:
        pass  # a read-only cache: computed again by the next process
    return found


def find_exotic_code_points() -> np.ndarray | None:
    """Code points of a lower-cased text where the kernel's reading could differ from the regular
    expressions of text/claims.py on the original (sorted), built once from this Python's Unicode
    data; None if one of them is ASCII (the prefilter is then off).

    Non-ASCII digits (``\\d``), whitespace inside the word range (``str.split`` would cut the word),
    lone surrogates, and the lower-case forms of characters whose lower-casing changes the length
    ("İ" -> "i̇": character positions shift), changes a character's class (word, ``\\w``, ``\\s``,
    ``\\d``) or that match another letter under ``re.I`` than their lower-case form (``ſ``, ``ı``)."""
    points = np.concatenate([np.arange(0x80, 0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    chars = points.tobytes().decode("utf-32-le")
    exotic = set(range(0xD800, 0xE000)) | {ord(c) for c in re.findall(r"\d", chars)}
    exotic |= {ord(c) for c in re.findall(r"\s", chars) if 0xC0 <= ord(c) <= 0xFFFF}  # \s is str.isspace
    suspects: list[tuple[str, str]] = []  # (character, what the kernel sees instead)
    classes = (_WORD_CLASS, _RUN_CLASS, re.compile(r"\w"), re.compile(r"\s"), re.compile(r"\d"))
    for k in range(0, len(chars), 4096):
        part = chars[k:k + 4096]
        if part.lower() != part:
            for c in part:
                low = c.lower()
                if low != c and (len(low) != 1 or any(bool(p.match(c)) != bool(p.match(low)) for p in classes)):
                    suspects.append((c, low))
    for c in re.findall(r"[a-z]", chars, re.I):  # re.I: "ſ" matches "s" but lower-cases to itself
        if not re.fullmatch(re.escape(c.lower()), c, re.I) or not c.lower().isascii():
            suspects.append((c, c.lower()))
        elif not re.match(r"\w", c):
            suspects.append((c, c.lower()))  # seen as an ASCII letter, not a word character
    for _c, low in suspects:
        flagged = [ord(x) for x in low if ord(x) >= 0x80]
        if not flagged:
            return None
        exotic.update(flagged)
    return np.array(sorted(exotic), dtype=np.int64)


def unit_key(claim) -> int:
    """The kernel's unit key of a claim read in Python."""
    if claim.kind == "date":
        return int(UNIT_DATE)
    return int(UNIT_PERCENT) if claim.unit == "%" else word_hash(claim.unit)


def byte_words(buf: np.ndarray) -> tuple[np.ndarray, int]:
    """The kernel's eight-byte view of ``buf`` (uint8, C-contiguous): (its bytes from ``align`` on as
    uint64, every whole eight of them; ``align``), ``align`` the first position whose address is a multiple
    of eight. No copy."""
    align = -buf.ctypes.data % 8 if len(buf) else 0
    count = max(len(buf) - align, 0) // 8
    return buf[align:align + 8 * count].view(np.uint64), int(align)


def read_only(buffer):
    """``buffer`` (a :func:`~ctxselect.packing.text_buffer`, or None) with a read-only byte array, as
    text_buffer's: one compiled signature of the kernels."""
    if buffer is None or not buffer[0].flags.writeable:
        return buffer
    buf = buffer[0].view()
    buf.flags.writeable = False
    return buf, buffer[1]


def candidate_keys(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, *, need: int = 4, max_chars: int,
                   window: int = CONTEXT_WINDOW):
    """The kernel's entries for the texts ``buf[starts[t]:ends[t]]``: (indptr, word keys, unit
    keys, flags), in blocks of about :data:`BLOCK_BYTES` (the scratch is about half a block); the
    parallel kernel from ``SERIAL_BYTES`` of text."""
    exotic = exotic_code_points()
    assert exotic is not None
    if len(buf) == 0:
        buf = np.zeros(1, dtype=np.uint8)
    tables = _stopword_table()
    read = np.minimum(ends - starts, 4 * (max_chars + SCAN_EXTRA)).cumsum()
    total = int(read[-1]) if len(read) else 0
    edges = np.unique(np.concatenate(([0], np.searchsorted(read, np.arange(BLOCK_BYTES, total, BLOCK_BYTES)),
                                      [len(starts)])))
    kernel = _claim_keys_serial if total < SERIAL_BYTES else _claim_keys
    scan_from, scan_to = _scan_bounds(buf, *byte_words(buf), starts, ends)
    parts = []
    for a, b in zip(edges[:-1].tolist(), edges[1:].tolist()):
        part = kernel(buf, scan_from[a:b], scan_to[a:b], starts[a:b], ends[a:b], max_chars, window, need, *tables,
                      exotic, CAP_BYTES)
        over = (part[3] == 2).nonzero()[0]  # more entries than their slice holds: again, with room for all
        if len(over):
            part = _splice(part, over, _claim_keys_serial(buf, scan_from[a:b][over], scan_to[a:b][over],
                                                          starts[a:b][over], ends[a:b][over], max_chars, window, need,
                                                          *tables, exotic, 0))
        parts.append(part)
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return _claim_keys_serial(buf, scan_from, scan_to, starts, ends, max_chars, window, need, *tables, exotic,
                                  CAP_BYTES)
    indptr = np.zeros(len(starts) + 1, dtype=np.int64)
    np.concatenate([np.diff(p[0]) for p in parts]).cumsum(out=indptr[1:])
    return (indptr, *(np.concatenate([p[k] for p in parts]) for k in (1, 2, 3)))


def _splice(part, rows, again):
    """``part`` (indptr, word keys, unit keys, flags) with the texts ``rows`` replaced by ``again``."""
    counts = np.diff(part[0])
    counts[rows] = np.diff(again[0])
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    redone = np.zeros(len(counts), dtype=bool)
    redone[rows] = True
    kept = ~np.repeat(redone, counts)
    flags = part[3].copy()
    flags[rows] = again[3]
    out = [indptr]
    for old, new in ((part[1], again[1]), (part[2], again[2])):
        column = np.empty(indptr[-1], dtype=old.dtype)
        column[kept], column[~kept] = old, new
        out.append(column)
    return (*out, flags)


def texts_to_read(texts: list, buffer, min_context_words, max_chars: int, claims_of) -> np.ndarray | None:
    """Which ``texts`` can hold a claim joining another text's claim (bool array); None when
    every text must be read (fewer than three context words required: the two nearest may then be
    cut by the window; or the texts do not encode).

    Two texts can join only if entries of theirs have the same word key and the same unit key, or
    the same word key and :data:`UNIT_ANY` on either side. ``claims_of(text)`` gives a text's
    claims, for the texts the kernel flags (their exact entries are used)."""
    try:
        if not min_context_words >= 3 or exotic_code_points() is None:
            return None
        need = math.ceil(min(min_context_words, CONTEXT_WORDS + 1))  # a claim keeps 5 words
        buf, offsets = text_buffer(texts) if buffer is None else buffer
    except Exception:  # noqa: BLE001 - not numbers, not text: the plain path raises what it raises
        return None
    n = len(texts)
    if len(offsets) != n + 1:
        raise ValueError(f"buffer holds {len(offsets) - 1} texts, not {n}")
    indptr, word_keys, unit_keys, flags = candidate_keys(buf, offsets[:-1], offsets[1:], need=need,
                                                         max_chars=max_chars)
    owner = np.arange(n).repeat(indptr[1:] - indptr[:-1])
    flagged = flags.nonzero()[0].tolist()
    extra = [(key_of(*c.before.split()[-2:]), unit_key(c), t) for t in flagged for c in claims_of(texts[t])
             if len(c.before.split()) >= min_context_words]  # the flagged texts' exact entries
    if extra:
        w, u, t = (np.array(column, dtype=dtype) for column, dtype in zip(zip(*extra), (np.uint64, np.uint64, np.int64)))
        word_keys, unit_keys = np.concatenate([word_keys, w]), np.concatenate([unit_keys, u])
        owner = np.concatenate([owner, t])
    return _shared_texts(word_keys, unit_keys, owner, n)


def hinted_texts(buffer, read, max_chars: int, read_chars: int) -> tuple[list[int], list[int], list[int], list[int]]:
    """The kernel of :mod:`ctxselect.kernels.claim_hints` over the texts of ``buffer`` (a lower-cased
    :func:`~ctxselect.packing.text_buffer`) that ``read`` marks (a bool per text; None: all), as lists:
    (the texts, bounds of each one's positions, positions, flags). No texts when the kernel cannot
    read exactly (:func:`exotic_code_points` is None)."""
    exotic = exotic_code_points()
    buf, offsets = buffer
    rows = np.arange(len(offsets) - 1) if read is None else np.flatnonzero(read)
    if exotic is None or not len(rows):
        return [], [0], [], []
    indptr, where, flags = _claim_hints(buf, offsets[rows], offsets[rows + 1], max_chars, read_chars, exotic)
    return rows.tolist(), indptr.tolist(), where.tolist(), flags.tolist()


def claim_hints(buffer, read, max_chars: int, read_chars: int) -> dict[int, tuple[bool, bool, list[int]]]:
    """What reading the claims of the texts :func:`hinted_texts` reads needs: per text it reads
    exactly (no exotic code point among its first ``read_chars`` characters), (whether a digit stands
    before ``max_chars``, whether a date may be there, the character positions where a number may
    start)."""
    rows, bounds, positions, flags = hinted_texts(buffer, read, max_chars, read_chars)
    return {row: (bool(flag & HAS_DIGIT), bool(flag & MAY_HOLD_DATE), positions[bounds[k]:bounds[k + 1]])
            for k, (row, flag) in enumerate(zip(rows, flags)) if not flag & EXOTIC}
