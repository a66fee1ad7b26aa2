"""Plain-Python twins of the claim prefilter: the join without it, and the kernel's keys.

``naive_find_claim_conflicts`` is ``find_claim_conflicts`` without the prefilter: every text's
claims are read (then joined and scope-tested as ``find_claim_conflicts`` does). ``naive_claim_keys`` computes the entries ctxselect/kernels/claims.py
computes, by another route: for each possible claim start it re-reads the words of the text
before it with the regular expression of text/claims.py (so a word cut by the start is cut here
too), and the words after a number with regular expressions.
"""

import re

from ctxselect.kernels.claims import UNIT_ANY, UNIT_DATE, UNIT_NONE, UNIT_PERCENT
from ctxselect.text.claim_keys import exotic_code_points, key_of, unit_key, word_hash
from ctxselect.text.claims import _aligned_claims, extract_claims, scope_reader, settle
from ctxselect.text.words import STOPWORDS

_WORD = re.compile(r"[A-Za-z\u00C0-\uFFFF][A-Za-z0-9\u00C0-\uFFFF'\-]*")
_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0"
_MONTH_START = re.compile(rf"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-zA-Z]*\.?,?[{_SPACE}]+[0-9]")
_DATE_AHEAD = re.compile(rf"[0-9]{{4}}-|[0-9]{{1,2}}(?![0-9])[a-zA-Z]{{0,2}}[{_SPACE}]+{_MONTH_START.pattern}")
_SCALES = ("thousand", "million", "billion", "trillion")
ANY, DATE, PERCENT, NONE = int(UNIT_ANY), int(UNIT_DATE), int(UNIT_PERCENT), int(UNIT_NONE)
_ASCII_WORD = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")


def naive_find_claim_conflicts(texts, *, context_ratio=90.0, min_context_words=4, titles=None):
    """find_claim_conflicts without the prefilter (the implementation before it)."""
    texts = list(texts)
    claims = [extract_claims(t) if t else [] for t in texts]  # every text read: no prefilter
    scopes = scope_reader(texts, titles)
    return settle(_aligned_claims(claims, context_ratio, min_context_words, scopes), scopes)


def claim_entries(text, min_context_words=4):
    """The join keys of ``text``'s claims that can join, as the kernel hashes them: (word key,
    unit key)."""
    return {(key_of(*c.before.split()[-2:]), unit_key(c)) for c in extract_claims(text)
            if len(c.before.split()) >= min_context_words}


def covered(entries, kernel_entries):
    """Whether every entry is in ``kernel_entries`` or matched there by a word key with any unit."""
    return all(e in kernel_entries or (e[0], ANY) in kernel_entries for e in entries)


def _unit_after(lower, q, reach):
    """The unit key of the first content word from ``q``: its hash if it and the words before it
    end by ``reach``; NONE if there is none and the text ends by ``reach``; else ANY."""
    for m in _WORD.finditer(lower, q):
        if m.end() > reach:
            return ANY
        if len(m.group()) > 1 and m.group() not in STOPWORDS:
            return word_hash(m.group())
    return NONE if len(lower) <= reach else ANY


def _number_units(lower, p):
    """The units a number at ``p`` may have (the kernel's rules, by regular expressions)."""
    reach = p + 41
    q = p + len(re.match(r"[0-9.,]*", lower[p:]).group())
    percent = re.match(rf"[{_SPACE}]*(%|per)", lower[q:]) is not None
    first = next(_WORD.finditer(lower, q), None)
    if (first.end() if first else len(lower)) > reach:
        return [ANY]
    spaces = first is not None and all(c in _SPACE for c in lower[q:first.start()])
    scale = next((s for s in _SCALES if spaces and first.group().startswith(s)), None)
    if re.fullmatch(r"[0-9]{4}", lower[p:q]) and 1500 <= int(lower[p:q]) <= 2099 and not percent and not scale:
        return []
    units = [_unit_after(lower, q, reach)]
    if percent:
        units.append(PERCENT)
    if scale:
        units.append(_unit_after(lower, first.end(), reach) if first.group() == scale else ANY)
    return units


def naive_scan_bounds(data: bytes, offsets):
    """kernels/scan_bounds.py's ``_scan_bounds`` read byte by byte: per text data[offsets[t]:offsets[t + 1]],
    [first positions, stop positions]. The stop: after the last ASCII digit or byte from 0xC0 on (the start if
    none); the first: the first ASCII digit or byte from 0x80 on before the stop, backed up over ASCII
    whitespace (\t..\r, 0x1C..0x20), then one ",", then one ".", then ASCII letters."""
    firsts, stops = [], []
    for start, end in zip(list(offsets[:-1]), list(offsets[1:])):
        stop = end
        while stop > start and not (data[stop - 1] >= 0xC0 or 48 <= data[stop - 1] <= 57):
            stop -= 1
        first = next((p for p in range(start, stop) if data[p] >= 0x80 or 48 <= data[p] <= 57), stop)
        while first > start and (9 <= data[first - 1] <= 13 or 28 <= data[first - 1] <= 32):
            first -= 1
        for mark in (44, 46):
            if first > start and data[first - 1] == mark:
                first -= 1
        while first > start and chr(data[first - 1]).lower() in "abcdefghijklmnopqrstuvwxyz" and data[first - 1] < 128:
            first -= 1
        firsts.append(int(first))
        stops.append(int(stop))
    return [firsts, stops]


def naive_claim_keys(text, *, max_chars, window=80, need=4):
    """(sorted entries, flag) of one text as the kernel reads it (``text`` not yet lower-cased):
    flag 1 for an exotic text (then no entries)."""
    lower = text.lower()
    exotic = set(exotic_code_points().tolist())
    if any(ord(c) in exotic for c in lower[:max_chars + 128]):
        return [], 1
    entries = set()
    for p in range(min(len(lower), max_chars)):
        if p > 0 and lower[p - 1] in _ASCII_WORD:
            continue
        digit = "0" <= lower[p] <= "9"
        if not digit and not _MONTH_START.match(lower, p):
            continue
        content = [w for w in _WORD.findall(lower, max(0, p - window), p) if len(w) > 1 and w not in STOPWORDS]
        if len(content) < need:
            continue
        key = key_of(content[-2], content[-1])
        if not digit or _DATE_AHEAD.match(lower, p):
            entries.add((key, DATE))
        if digit and (p == 0 or lower[p - 1] not in ".,"):
            entries.update((key, u) for u in _number_units(lower, p))
    return sorted(entries), 0


_MONTH_PREFIXES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def naive_claim_hints(text, *, max_chars, read_chars):
    """(flag, positions) of one text as ctxselect/kernels/claim_hints.py reads it (``text`` not yet
    lower-cased): flag 4 for an exotic text (then nothing else), else 1 for an ASCII digit before
    ``max_chars`` and 2 for a "-" or a month's first three letters among the first ``read_chars``
    characters; the positions of the ASCII digits before ``max_chars`` not after an ASCII letter,
    digit, "_", "." or ","."""
    lower = text.lower()[:read_chars]
    exotic = set(exotic_code_points().tolist())
    if any(ord(c) in exotic for c in lower):
        return 4, []
    flag, positions = 0, []
    for p, c in enumerate(lower):
        if "0" <= c <= "9" and p < max_chars:
            flag |= 1
            if p == 0 or not (lower[p - 1].isascii() and (lower[p - 1].isalnum() or lower[p - 1] in "_.,")):
                positions.append(p)
    if "-" in lower or any(m in lower for m in _MONTH_PREFIXES):
        flag |= 2
    return flag, positions


def naive_scope_free_difference(a, b):
    """claim_scope._scope_free_difference with the common start and end found one character at a
    time: the two windows hold the same digit runs and differ only in lower-case words that carry
    no scope (digits, labels, numerals, periods), between their common start and end (24 characters
    of each kept)."""
    from ctxselect.text.claim_scope import _DIGITS, _SCOPE_WORDS, _WORD
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end] == b[len(b) - 1 - end]:
        end += 1
    head, tail = max(0, start - 24), max(0, end - 24)
    a, b = a[head:len(a) - tail], b[head:len(b) - tail]
    if sorted(_DIGITS.findall(a)) != sorted(_DIGITS.findall(b)):
        return False
    return all(w.islower() and w not in _SCOPE_WORDS and not w[-1].isdigit()
               for w in set(_WORD.findall(a)) ^ set(_WORD.findall(b)))
