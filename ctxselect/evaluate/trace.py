"""``trace``: which retrieved chunks reached an LLM prompt, where, and how they overlap.

A chunk is in context when its text is a substring of some prompt (RAGScope's rule, seed 002);
failing that, when a normalised copy (whitespace collapsed, markdown and list markers dropped,
case folded) is a substring of the normalised prompt; failing that, when rapidfuzz's
``partial_ratio`` of the normalised texts reaches ``fuzzy_threshold`` (the assembler reformatted
the chunk). ``context_position`` numbers the in-context chunks in order of appearance in the
prompt. ``overlap_with_next`` compares each chunk with the next one by retrieval rank: the longest
suffix of the first that equals a prefix of the second (up to 500 characters), over the shorter
text's length; the last chunk gets 0.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

from rapidfuzz import fuzz

from ctxselect.errors import InputError
from ctxselect.model import validation as checks

__all__ = ["TracedChunk", "trace", "suffix_prefix_overlap"]

MAX_OVERLAP_CHARS = 500
_MARKUP = re.compile(r"(^|\s)([#>*\-•]+|\d+[.)])\s+|[*_`]+")
_SPACE = re.compile(r"\s+")


def _normalise(text: str) -> str:
    return _SPACE.sub(" ", _MARKUP.sub(" ", text)).strip().casefold()


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


def trace(
    chunks: Iterable[Mapping[str, Any]],
    prompts: list[str] | tuple[str, ...] | str,
    *,
    fuzzy_threshold: float = 90.0,
) -> list[TracedChunk]:
    """Find which retrieved chunks reached the prompts.

    Parameters
    ----------
    chunks : iterable of dict
        ``id`` and ``text`` required; optional ``rank`` (or ``rank_retrieval``), ``rank_reranked``,
        ``tokens`` (default: the token counter on the text), ``relevance`` / ``score`` (a chunk
        without either has ``score_missing``). Retrieval order is ``rank`` when given, else the
        order given.
    prompts : str, or list or tuple of str
        The prompts of the trace's LLM calls (one string is one prompt); anything else (a dict,
        a set, bytes, None) is an :class:`InputError` naming ``prompts``.
    fuzzy_threshold : float
        rapidfuzz ``partial_ratio`` (0–100) at which a reformatted chunk counts as present.

    Returns
    -------
    list of TracedChunk
        In retrieval order.

    Raises
    ------
    InputError
        For bad ``prompts`` or ``fuzzy_threshold``, or a chunk without an id or with a mistyped
        field (naming the chunk and field).
    """
    from ctxselect.model.tokens import get_token_counter

    checks.number(fuzzy_threshold, "fuzzy_threshold", low=0.0, high=100.0)
    if isinstance(prompts, str):
        prompts = [prompts]
    elif not isinstance(prompts, (list, tuple)):
        raise InputError(field="prompts", expected="a string or a list of strings", found=prompts,
                         has_found=True)
    prompts = [checks.text(p, f"prompts[{k}]") for k, p in enumerate(prompts)]
    normalised_prompts = [_normalise(p) for p in prompts]
    rows = []
    for k, c in enumerate(chunks):
        if not isinstance(c, Mapping):
            raise InputError(candidate_index=k, expected="a chunk object", found=c, has_found=True)
        cid = c.get("id")
        try:
            cid = checks.label(cid, "id")
            text = checks.text(c.get("text", ""), "text")
            rank = c.get("rank", c.get("rank_retrieval"))
            rank = None if rank is None else checks.integer(rank, "rank", low=0)
            reranked = c.get("rank_reranked")
            reranked = None if reranked is None else checks.integer(reranked, "rank_reranked", low=0)
            tokens = c.get("tokens")
            tokens = get_token_counter()(text) if tokens is None and text else checks.integer(tokens or 0, "tokens", low=0)
        except InputError as err:
            raise err.located(candidate_id=cid if isinstance(cid, str) else None, candidate_index=k) from None
        rows.append((k, cid, text, rank, reranked, tokens, c.get("relevance", c.get("score")) is None))
    rows.sort(key=lambda r: (r[3] is None, r[3] if r[3] is not None else r[0], r[0]))

    found = []
    for _, cid, text, *_ in rows:
        where, how = None, "none"
        if text:
            for p in prompts:
                at = p.find(text)
                if at >= 0:
                    where, how = at / max(len(p), 1) + prompts.index(p), "exact"
                    break
            if where is None:
                norm = _normalise(text)
                for k, p in enumerate(normalised_prompts):
                    at = p.find(norm) if norm else -1
                    if at >= 0:
                        where, how = at / max(len(p), 1) + k, "normalised"
                        break
                if where is None and norm:
                    for k, p in enumerate(normalised_prompts):
                        alignment = fuzz.partial_ratio_alignment(norm, p)
                        if alignment is not None and alignment.score >= fuzzy_threshold:
                            where, how = alignment.dest_start / max(len(p), 1) + k, "fuzzy"
                            break
        found.append((where, how))
    order = sorted((w, i) for i, (w, _) in enumerate(found) if w is not None)
    position = {i: pos for pos, (_, i) in enumerate(order)}

    out = []
    for i, ((_, cid, text, rank, reranked, tokens, missing), (where, how)) in enumerate(zip(rows, found)):
        following = rows[i + 1][2] if i + 1 < len(rows) else ""
        out.append(TracedChunk(
            id=cid, rank_retrieval=rank if rank is not None else i + 1, rank_reranked=reranked, tokens=tokens,
            in_context=where is not None, context_position=position.get(i),
            overlap_with_next=suffix_prefix_overlap(text, following) if following else 0.0,
            score_missing=missing, match=how))
    return out
