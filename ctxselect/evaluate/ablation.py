"""Ablation variants of a selection (shared seed 004): did the context earn its tokens?

For each query: ``full`` (the selection in assembly order), ``none`` (no context), ``shuffled``
(the selection of another query of the dump, chosen by a seeded permutation with no fixed point:
unrelated context of the same kind), ``truncated_half`` and ``truncated_quarter`` (the first half
/ quarter of the window's tokens, see below) and ``reordered`` (the same chunks, most relevant
last). A user's harness runs its model on each and diffs the outcomes.

Truncation is by tokens: the whole chunks that fit within the limit L (half or a quarter of the
window's tokens, in window order), then the next chunk cut inside its text to the r = L − used
tokens left. A chunk of T tokens and W words keeps k = ⌊W·r/T⌋ words (its tokens counted in
proportion, ⌊T·k/W⌋, at least 1), a "word" being what the default token counter counts as one
unit (:data:`ctxselect.model.tokens.TOKEN_UNIT`: a run of letters, or one character of a script
written without spaces, so Chinese and Japanese chunks are cut too): cut after the last sentence
end (``.``, ``!``, ``?`` or ``…`` before whitespace, or ``。！？``) within those k words when that
keeps at least half of them, else after the k-th word. A non-empty window never truncates to nothing: when not
even one word fits, the first word of the first chunk is kept. The record's ``cut`` names the cut
chunk (``id``, ``words`` kept of ``of_words``, ``tokens``), null when the limit fell between chunks.

Scopes: no variant carries text a query's ``allowed_scopes`` do not admit. A query's own
selection must name its candidates, all admissible (else an :class:`InputError` naming the chunk,
never quoting it); the ``shuffled`` variant borrows only the chunks of the other query's selection
that both queries admit (a chunk is admissible when the query allows every scope, or its scope is
one of the allowed ones), so its ``ids`` may be fewer than the other query's selection.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model.io import Query
from ctxselect.model.tokens import TOKEN_UNIT

__all__ = ["VARIANTS", "ablation_variants", "truncate"]

VARIANTS = ("full", "none", "shuffled", "truncated_half", "truncated_quarter", "reordered")


_SENTENCE_END = re.compile(r"[.!?\u2026][\"')\]\u201d\u2019]*(?=\s|$)|[\u3002\uff01\uff1f]")


def _cut_text(text: str, keep_words: int) -> tuple[str, int]:
    """The text cut after its ``keep_words``-th word (or an earlier sentence end keeping at least
    half of them), and the words kept."""
    ends = [m.end() for m in TOKEN_UNIT.finditer(text)]
    keep = min(keep_words, len(ends))
    if keep <= 0:
        return "", 0
    cut = ends[keep - 1]
    best = None
    for m in _SENTENCE_END.finditer(text):
        if m.start() > cut:
            break
        words = sum(1 for e in ends if e <= m.start())
        if words * 2 >= keep:
            best = (m.end(), words)
    if best is not None:
        return text[:best[0]], best[1]
    return text[:cut], keep


def truncate(ids: list[str], texts: dict[str, str], tokens: dict[str, int],
             limit: float) -> tuple[list[str], list[str], dict | None]:
    """The window ``ids`` truncated to ``limit`` tokens, cutting inside the last kept chunk.

    Parameters
    ----------
    ids : list of str
        The window, in order.
    texts, tokens : dict
        Each chunk's text and token count.
    limit : float
        The tokens to keep (see the module docstring for where a chunk is cut).

    Returns
    -------
    tuple
        The ids kept, their texts (the last one possibly cut) and the cut (``id``, ``words``,
        ``of_words``, ``tokens``), None when the limit fell between chunks.

    Examples
    --------
    >>> texts = {"a": "One two. Three four.", "b": "Five six."}
    >>> truncate(["a", "b"], texts, {"a": 4, "b": 2}, 3)
    (['a'], ['One two.'], {'id': 'a', 'words': 2, 'of_words': 4, 'tokens': 2})
    """
    out, context, used = [], [], 0
    for cid in ids:
        if used + tokens[cid] <= limit:
            out.append(cid)
            context.append(texts[cid])
            used += tokens[cid]
            continue
        text, total = texts[cid], tokens[cid]
        words = len(TOKEN_UNIT.findall(text))
        keep = int(np.floor(words * (limit - used) / total + 1e-9)) if total > 0 else 0
        if keep < 1 and not out and words:
            keep = 1  # a non-empty window never truncates to nothing
        if keep >= 1:
            cut, kept = _cut_text(text, keep)
            share = max(1, int(np.floor(total * kept / words + 1e-9)))
            out.append(cid)
            context.append(cut)
            return out, context, {"id": cid, "words": kept, "of_words": words, "tokens": share}
        break
    return out, context, None


def _derangement(n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    if n < 2:
        return list(range(n))
    shift = int(rng.integers(1, n))
    order = rng.permutation(n)
    target = np.empty(n, dtype=int)
    target[order] = order[(np.arange(n) + shift) % n]  # a rotation inside a random order: no fixed point
    return target.tolist()


def _check_selection(query: Query, ids: list[str]) -> None:
    by_id = {c.id: c for c in query.candidates}
    for cid in ids:
        if cid not in by_id:
            raise InputError(query_id=query.query_id, candidate_id=cid, field="selections",
                             message="unknown candidate id", expected="ids of this query's candidates")
        if not query.requirements.admits(by_id[cid].scope):
            raise InputError(query_id=query.query_id, candidate_id=cid, field="selections",
                             message="the query's allowed scopes do not admit this chunk",
                             expected="admissible chunks only")


def ablation_variants(queries: Iterable[Query], selections: Iterable[list[str]], *, seed: int = 0) -> Iterator[dict]:
    """The ablation variants of each query's selection (see the module docstring).

    Parameters
    ----------
    queries : iterable of Query
    selections : iterable of list of str
        One selection (ids in assembly order) per query, each of admissible candidates.
    seed : int
        Seed of the permutation that pairs queries for ``shuffled``.

    Yields
    ------
    dict
        One record per (query, variant): ``query_id``, ``query``, ``variant``, ``ids``, ``context``
        (the chunks' texts in order; a truncated variant's last text may be cut), for ``shuffled``
        ``source_query_id``, and for ``truncated_half`` / ``truncated_quarter`` ``cut`` (the cut
        chunk's ``id``, ``words``, ``of_words`` and ``tokens``, None when no chunk was cut).

    Raises
    ------
    InputError
        When the counts differ, or a selection names an unknown or inadmissible chunk.
    """
    queries, selections = list(queries), [list(s) for s in selections]
    if len(queries) != len(selections):
        raise InputError(field="selections", expected=f"one selection per query ({len(queries)})",
                         found=f"{len(selections)} selections")
    for query, ids in zip(queries, selections):
        _check_selection(query, ids)
    partner = _derangement(len(queries), seed)
    for k, (query, ids) in enumerate(zip(queries, selections)):
        by_id = {c.id: c for c in query.candidates}
        tokens = {c.id: c.tokens for c in query.candidates}
        total = sum(tokens[c] for c in ids)
        texts = {c: by_id[c].text for c in ids}
        variants = {
            "full": ids,
            "none": [],
            "truncated_half": truncate(ids, texts, tokens, total / 2),
            "truncated_quarter": truncate(ids, texts, tokens, total / 4),
            "reordered": sorted(ids, key=lambda c: (by_id[c].relevance, c)),
        }
        for name in VARIANTS:
            if name == "shuffled":
                if len(queries) < 2:
                    continue  # no unrelated query to borrow from
                other = queries[partner[k]]
                other_by_id = {c.id: c for c in other.candidates}
                # the other selection is admissible for the other query (checked above); keep what
                # this query admits too, so no text crosses into a query that may not see it
                chosen = [c for c in selections[partner[k]] if query.requirements.admits(other_by_id[c].scope)]
                yield {"query_id": query.query_id, "query": query.query, "variant": name, "ids": chosen,
                       "context": [other_by_id[c].text for c in chosen], "source_query_id": other.query_id}
                continue
            chosen = variants[name]
            if name.startswith("truncated_"):
                chosen, context, cut = chosen
                yield {"query_id": query.query_id, "query": query.query, "variant": name, "ids": chosen,
                       "context": context, "cut": cut}
                continue
            yield {"query_id": query.query_id, "query": query.query, "variant": name, "ids": chosen,
                   "context": [by_id[c].text for c in chosen]}
