"""Query-aware signals: what a candidate contributes to answering *this* question.

None of these reads labels; each uses only the question's text and the candidates:

- **query terms**: the question's content words found among the candidates, weighted by IDF over
  the candidates; covering them is a coverage term of the objective (several chunks that each
  cover a different part of the question beat several that repeat the same part);
- **expansion** (pseudo-relevance feedback): the most relevant candidate's discriminative words
  that the question does not contain — the bridge entities of multi-hop questions — and how much of
  that vocabulary each other candidate shares;
- **title links**: a candidate whose title is named in the question or in the most relevant
  candidate;
- **time match**: when the question names years, whether a candidate mentions a year inside the
  asked span (1), near it (decaying with the distance), or none (0);
- **source match**: the candidate's source is named in the question.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ctxselect.packing import PackedCandidates
from ctxselect.text.words import content_terms, years_in

__all__ = ["QueryFeatures", "query_features"]


@dataclass(frozen=True, eq=False)
class QueryFeatures:
    """Per-candidate query signals (arrays of length n, values in [0, 1])."""

    terms: tuple[str, ...]
    term_weight: np.ndarray      # (Q,), sums to 1
    covers: np.ndarray           # bool (n, Q)
    expansion: np.ndarray
    title_link: np.ndarray
    time_match: np.ndarray
    source_match: np.ndarray

    @classmethod
    def empty(cls, n: int) -> "QueryFeatures":
        zeros = np.zeros(n)
        return cls((), np.zeros(0), np.zeros((n, 0), dtype=bool), zeros, zeros.copy(), zeros.copy(), zeros.copy())


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def _time_match(query_years: list[int], chunk_years: list[int]) -> float:
    if not chunk_years:
        return 0.0
    lo, hi = min(query_years), max(query_years)
    if any(lo <= y <= hi for y in chunk_years):
        return 1.0
    if min(chunk_years) < lo and max(chunk_years) > hi:
        return 0.8  # a span that encloses the asked one
    distance = min(min(abs(y - lo), abs(y - hi)) for y in chunk_years)
    return math.exp(-distance / 3.0)


def query_features(packed: PackedCandidates, query: str | None, *, feedback: int = 1) -> QueryFeatures:
    """Compute :class:`QueryFeatures` for the candidates of ``packed`` and the question ``query``.

    Parameters
    ----------
    feedback : int
        How many of the most relevant candidates feed the expansion vocabulary.
    """
    n = packed.n
    if not query or not query.strip() or n == 0:
        return QueryFeatures.empty(n)
    titles = [c.extra.get("title") if isinstance(c.extra.get("title"), str) else "" for c in packed.candidates]
    chunk_terms = [content_terms(f"{t} {c.text}") for t, c in zip(titles, packed.candidates)]
    df: dict[str, int] = {}
    for terms in chunk_terms:
        for t in terms:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1.0 + n / d) for t, d in df.items()}

    q_terms = sorted(t for t in content_terms(query) if t in df)
    covers = np.array([[t in terms for t in q_terms] for terms in chunk_terms], dtype=bool).reshape(n, len(q_terms))
    weights = np.array([idf[t] for t in q_terms])
    weights = weights / weights.sum() if weights.size else weights

    order = np.argsort(-packed.relevance, kind="stable")[:feedback]
    expansion_vocab = {t for k in order.tolist() for t in chunk_terms[k]} - set(q_terms)
    expansion_vocab = {t for t in expansion_vocab if df[t] <= max(1, n // 2)}
    total = sum(idf[t] for t in expansion_vocab)
    expansion = np.zeros(n)
    if total > 0:
        for i, terms in enumerate(chunk_terms):
            if i not in set(order.tolist()):
                expansion[i] = sum(idf[t] for t in terms & expansion_vocab) / total
        if expansion.max() > 0:
            expansion /= expansion.max()

    known = set(content_terms(query)) | {t for k in order.tolist() for t in content_terms(packed.candidates[k].text)}
    title_link = np.zeros(n)
    for i, title in enumerate(titles):
        words = content_terms(title)
        if words:
            title_link[i] = len(words & known) / len(words)

    query_years = years_in(query)
    time_match = np.zeros(n)
    if query_years:
        time_match = np.array([_time_match(query_years, years_in(c.text)) for c in packed.candidates])

    q_norm = _normalised(query)
    source_match = np.array([float(len(_normalised(c.source)) >= 4 and _normalised(c.source) in q_norm)
                             for c in packed.candidates])
    return QueryFeatures(tuple(q_terms), weights, covers, expansion, title_link, time_match, source_match)
