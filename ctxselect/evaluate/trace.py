"""``trace``: which retrieved chunks reached an LLM prompt, where, and how they overlap.

By default a chunk is in context exactly when RAGScope's ``assembleContext`` says so (seed 002):
its text is a non-empty literal substring of some prompt (Python's ``in`` on valid Unicode gives
what JavaScript's ``includes`` gives). ``context_position`` numbers the in-context chunks 0, 1, 2 …
in retrieval order, as RAGScope's counter does (not in order of appearance in the prompt), so
``audit(trace(...))`` scores a trace as RAGScope scores it.

``match="fuzzy"`` (opt-in) also finds chunks the assembler reformatted: failing the literal match,
a chunk is in context when a normalised copy (whitespace collapsed, markdown emphasis and list or
heading markers dropped, case folded) is a substring of the normalised prompt; failing that, when
rapidfuzz's ``partial_ratio`` of the normalised texts reaches ``fuzzy_threshold`` (default 90) with
the whole chunk aligned inside the prompt. Two guards keep look-alikes out:

- **numbers**: the numbers of a normalised or fuzzy match (digit runs, with ``.`` or ``,`` inside)
  must be those of the prompt text it matched, in order; a policy saying "14 days" never reaches a
  prompt that says "30 days", however alike the rest;
- **one stretch, one chunk**: a fuzzy match may not land on prompt text that an exact or
  normalised match, or a better fuzzy match, already accounts for (more than half of it), so ten
  near-copies of one chunk in the prompt do not all count as used.

``overlap_with_next`` compares each chunk with the next one by retrieval rank: the longest suffix
of the first that equals a prefix of the second (up to 500 characters), over the shorter text's
length; the last chunk gets 0.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

from rapidfuzz import fuzz

from ctxselect.errors import InputError
from ctxselect.model import validation as checks

__all__ = ["CHUNK_KEYS", "TracedChunk", "trace", "suffix_prefix_overlap", "MATCH_MODES", "DEFAULT_FUZZY_THRESHOLD"]

MAX_OVERLAP_CHARS = 500
#: The keys of a chunk :func:`trace` reads; any other is refused, naming it.
CHUNK_KEYS = ("id", "text", "rank", "rank_retrieval", "rank_reranked", "tokens", "relevance", "score")
MATCH_MODES = ("exact", "fuzzy")
DEFAULT_FUZZY_THRESHOLD = 90.0
#: Share of a fuzzy match's prompt stretch that may already be claimed by another chunk's match.
MAX_CLAIMED_SHARE = 0.5
_WORD = re.compile(r"\S+")
_INLINE_MARKS = re.compile(r"[*_`]+")
_BULLET = re.compile(r"[#>*\-•]+")        # a list or heading marker, as a whole word anywhere
_NUMBERED = re.compile(r"\d+[.)]")        # "1." or "2)": a list marker only as a line's first word
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class _Normalised:
    """A text as normalised words, each remembering its place in the normalised string and in the
    raw text, so a stretch of the one maps back to the other."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        words, self.norm_starts, self.norm_ends, self.raw_starts, self.raw_ends = [], [], [], [], []
        at, previous_end = 0, -1
        for m in _WORD.finditer(raw):
            token = m.group()
            first_on_line = previous_end < 0 or raw.find("\n", previous_end, m.start()) >= 0
            previous_end = m.end()
            if _BULLET.fullmatch(token) or (first_on_line and _NUMBERED.fullmatch(token)):
                continue
            word = _INLINE_MARKS.sub("", token).casefold()
            if not word:
                continue
            words.append(word)
            self.norm_starts.append(at)
            self.norm_ends.append(at + len(word))
            self.raw_starts.append(m.start())
            self.raw_ends.append(m.end())
            at += len(word) + 1
        self.text = " ".join(words)

    def raw_span(self, start: int, end: int) -> str:
        """The raw text of the words a normalised stretch ``[start, end)`` touches (whole words)."""
        first = bisect.bisect_right(self.norm_ends, start)
        last = bisect.bisect_left(self.norm_starts, end) - 1
        if first > last:
            return ""
        return self.raw[self.raw_starts[first]:self.raw_ends[last]]

    def norm_span(self, raw_start: int, raw_end: int) -> tuple[int, int]:
        """The normalised stretch of the words a raw stretch touches."""
        first = bisect.bisect_right(self.raw_ends, raw_start)
        last = bisect.bisect_left(self.raw_starts, raw_end) - 1
        if first > last:
            return (0, 0)
        return (self.norm_starts[first], self.norm_ends[last])

    def numbers(self, start: int = 0, end: int | None = None) -> list[str]:
        """The numbers written in the raw text of a normalised stretch (default: all words)."""
        return _NUMBER.findall(self.raw_span(start, len(self.text) if end is None else end))


def suffix_prefix_overlap(a: str, b: str, limit: int = MAX_OVERLAP_CHARS) -> float:
    """Longest suffix of ``a`` equal to a prefix of ``b`` (at most ``limit`` characters), over the
    shorter length; 0 when either is empty."""
    shorter = min(len(a), len(b))
    if shorter == 0:
        return 0.0
    for size in range(min(limit, shorter), 0, -1):
        if a[-size:] == b[:size]:
            return size / shorter
    return 0.0


@dataclass(frozen=True)
class TracedChunk:
    """A retrieved chunk with what the trace observed about it (the audit's input)."""

    id: str
    rank_retrieval: int | None
    rank_reranked: int | None
    tokens: int
    in_context: bool
    context_position: int | None
    overlap_with_next: float
    score_missing: bool
    match: str  # "exact", "normalised", "fuzzy" or "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _read_chunks(chunks: Iterable[Mapping[str, Any]]) -> list[tuple]:
    """``(index, id, text, rank, reranked, tokens, score_missing)`` per chunk, in retrieval order."""
    from ctxselect.model.counting import count_tokens
    from ctxselect.model.tokens import get_token_counter

    rows, first = [], {}
    for k, c in enumerate(chunks):
        if not isinstance(c, Mapping):
            raise InputError(candidate_index=k, expected="a chunk object", found=c, has_found=True)
        cid = c.get("id")
        try:
            unknown = [key for key in c if key not in CHUNK_KEYS]
            if unknown:  # a misspelt field would be read as absent: another order, a missing score
                raise InputError(field=str(unknown[0]), message="unknown chunk field",
                                 expected="one of " + ", ".join(CHUNK_KEYS))
            if "rank" in c and "rank_retrieval" in c:
                raise InputError(field="rank_retrieval", message="`rank` and `rank_retrieval` both given; "
                                 "they name one rank", expected="one of them")
            cid = checks.label(cid, "id")
            if cid in first:
                raise InputError(field="id", message=f"chunk #{k} repeats the id of chunk #{first[cid]}",
                                 expected="one record per chunk of a trace")
            first[cid] = k
            text = checks.text(c.get("text", ""), "text")
            rank = c.get("rank", c.get("rank_retrieval"))
            rank = None if rank is None else checks.integer(rank, "rank", low=0)
            reranked = c.get("rank_reranked")
            reranked = None if reranked is None else checks.integer(reranked, "rank_reranked", low=0)
            tokens = c.get("tokens")  # absent or null: counted on the text (0 without text); else an integer
            if tokens is None:
                # the process-wide counter (set_token_counter): what it raises or returns, located as here
                tokens = checks.integer(count_tokens(get_token_counter(), text), "tokens", low=0) if text else 0
            else:  # false, "" or [] is no count of 0: refused like any other mistyped count
                tokens = checks.integer(tokens, "tokens", low=0)
        except InputError as err:
            raise err.located(candidate_id=cid if isinstance(cid, str) else None, candidate_index=k) from None
        rows.append((k, cid, text, rank, reranked, tokens, c.get("relevance", c.get("score")) is None))
    rows.sort(key=lambda r: (r[3] is None, r[3] if r[3] is not None else r[0], r[0]))
    return rows


def _claimed_share(claims: list[tuple[int, int]], start: int, end: int) -> float:
    """The share of ``[start, end)`` that the claimed stretches cover (their union)."""
    covered, reach = 0, start
    for a, b in sorted(claims):
        a, b = max(a, reach), min(b, end)
        if b > a:
            covered += b - a
            reach = b
    return covered / max(end - start, 1)


def _fuzzy_matches(texts: list[str], exact: list[bool], prompts: list[str], threshold: float) -> dict[int, str]:
    """``{row: "normalised" | "fuzzy"}`` for the chunks without a literal match (``exact[i]``
    false), under the two guards of the module docstring."""
    norm_prompts = [_Normalised(p) for p in prompts]
    claims: list[list[tuple[int, int]]] = [[] for _ in prompts]
    for text in (t for t, literal in zip(texts, exact) if literal):  # literal matches claim first
        for k, p in enumerate(prompts):
            at = p.find(text)
            if at >= 0:
                claims[k].append(norm_prompts[k].norm_span(at, at + len(text)))
    found: dict[int, str] = {}
    pending = []
    for i, text in enumerate(texts):
        if exact[i] or not text:
            continue
        chunk = _Normalised(text)
        if not chunk.text:
            continue
        numbers = chunk.numbers()
        for k, p in enumerate(norm_prompts):
            at = p.text.find(chunk.text)
            while at >= 0 and p.numbers(at, at + len(chunk.text)) != numbers:
                at = p.text.find(chunk.text, at + 1)
            if at >= 0:
                found[i] = "normalised"
                claims[k].append((at, at + len(chunk.text)))
                break
        else:
            for k, p in enumerate(norm_prompts):
                if len(chunk.text) > len(p.text):
                    continue
                aligned = fuzz.partial_ratio_alignment(chunk.text, p.text, score_cutoff=threshold)
                if aligned is not None and aligned.score >= threshold \
                        and p.numbers(aligned.dest_start, aligned.dest_end) == numbers:
                    pending.append((-aligned.score, i, k, aligned.dest_start, aligned.dest_end))
    for _, i, k, start, end in sorted(pending):
        if i not in found and _claimed_share(claims[k], start, end) <= MAX_CLAIMED_SHARE:
            found[i] = "fuzzy"
            claims[k].append((start, end))
    return found


def trace(
    chunks: Iterable[Mapping[str, Any]],
    prompts: list[str] | tuple[str, ...] | str,
    *,
    match: str = "exact",
    fuzzy_threshold: float | None = None,
) -> list[TracedChunk]:
    """Find which retrieved chunks reached the prompts, as RAGScope does by default.

    Parameters
    ----------
    chunks : iterable of dict
        (a dict, a string or a non-iterable is an :class:`InputError` naming ``chunks``)
        ``id`` and ``text`` required; optional ``rank`` (or ``rank_retrieval``), ``rank_reranked``,
        ``tokens`` (absent or null: the token counter on the text; else an integer >= 0, so
        ``false`` or ``""`` is refused), ``relevance`` / ``score`` (a chunk
        without either has ``score_missing``); no other key (:data:`CHUNK_KEYS`), and one record
        per id. Retrieval order is ``rank`` when given, else the order given.
    prompts : str, or list or tuple of str
        The prompts of the trace's LLM calls (one string is one prompt); anything else (a dict,
        a set, bytes, None) is an :class:`InputError` naming ``prompts``.
    match : {"exact", "fuzzy"}
        ``"exact"`` (default): RAGScope's literal substring rule. ``"fuzzy"``: also normalised and
        fuzzy matches, guarded by the chunk's numbers and by one chunk per stretch of prompt (see
        the module docstring).
    fuzzy_threshold : float, optional
        rapidfuzz ``partial_ratio`` (0–100) at which a reformatted chunk counts as present; only
        with ``match="fuzzy"`` (default 90).

    Returns
    -------
    list of TracedChunk
        In retrieval order; ``context_position`` counts the in-context chunks in that order.

    Raises
    ------
    InputError
        For bad ``prompts``, ``match`` or ``fuzzy_threshold`` (a threshold without
        ``match="fuzzy"`` included), or a chunk without an id, with an unknown key, with both
        ``rank`` and ``rank_retrieval``, with a mistyped field or with another chunk's id (naming
        the chunk and field).
    """
    if isinstance(chunks, (str, bytes, bytearray, Mapping)) or not hasattr(chunks, "__iter__"):
        raise InputError(field="chunks", expected="an iterable of chunk objects", found=chunks, has_found=True)
    if not isinstance(match, str) or match not in MATCH_MODES:
        raise InputError(field="match", expected="'exact' or 'fuzzy'", found=match, has_found=True)
    if fuzzy_threshold is not None:
        if match != "fuzzy":
            raise InputError(field="fuzzy_threshold", message="applies only to fuzzy matching",
                             expected="match='fuzzy' (the CLI's --fuzzy) with it, or no threshold")
        checks.number(fuzzy_threshold, "fuzzy_threshold", low=0.0, high=100.0)
    if isinstance(prompts, str):
        prompts = [prompts]
    elif not isinstance(prompts, (list, tuple)):
        raise InputError(field="prompts", expected="a string or a list of strings", found=prompts,
                         has_found=True)
    prompts = [checks.text(p, f"prompts[{k}]") for k, p in enumerate(prompts)]
    rows = _read_chunks(chunks)

    how = ["exact" if text and any(text in p for p in prompts) else "none" for _, _, text, *_ in rows]
    if match == "fuzzy":
        threshold = DEFAULT_FUZZY_THRESHOLD if fuzzy_threshold is None else float(fuzzy_threshold)
        found = _fuzzy_matches([r[2] for r in rows], [h == "exact" for h in how], prompts, threshold)
        for i, kind in found.items():
            how[i] = kind

    out, position = [], 0
    for i, ((_, cid, text, rank, reranked, tokens, missing), kind) in enumerate(zip(rows, how)):
        following = rows[i + 1][2] if i + 1 < len(rows) else ""
        reached = kind != "none"
        out.append(TracedChunk(
            id=cid, rank_retrieval=rank if rank is not None else i + 1, rank_reranked=reranked, tokens=tokens,
            in_context=reached, context_position=position if reached else None,
            overlap_with_next=suffix_prefix_overlap(text, following) if following else 0.0,
            score_missing=missing, match=kind))
        position += reached
    return out
