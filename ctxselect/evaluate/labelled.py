"""Metrics over labelled queries (shared seed 003): was the evidence available, was it selected,
and where did it land.

Gold is a query's ``gold``: one id set, or alternative sets; a set's recall is the share of its
ids present, and the best-recalled set counts; a *hit* is any gold id present.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ctxselect.model.io import Query

__all__ = ["retrieval_order", "labelled_metrics", "summarize_labelled", "self_consistency", "DEPTHS"]

DEPTHS = (20, 50, 200)


def retrieval_order(query: Query) -> list[str]:
    """Candidate ids by retrieval rank (``rank`` when every candidate has one, else relevance)."""
    cands = query.candidates
    if cands and all(c.rank is not None for c in cands):
        return [c.id for c in sorted(cands, key=lambda c: (c.rank, c.id))]
    return [c.id for c in sorted(cands, key=lambda c: -c.relevance)]


def _recall(sets: list[set[str]], present: set[str]) -> float:
    return max(len(g & present) / len(g) for g in sets)


def labelled_metrics(query: Query, selected: Sequence[str], depths: Iterable[int] = DEPTHS) -> dict | None:
    """Recall at retrieval depths and of the selection, hit rates, all-gold, where the gold
    landed (1-based window ranks, token offsets, middle-third share) and distractors; None when
    the query has no gold."""
    sets = [g for g in query.gold_sets if g]
    if not sets:
        return None
    order = retrieval_order(query)
    union = set().union(*sets)
    tokens = {c.id: c.tokens for c in query.candidates}
    out = {}
    for depth in depths:
        top = set(order[:depth])
        out[f"recall@{depth}"] = _recall(sets, top)
        out[f"hit@{depth}"] = float(bool(union & top))
    chosen = list(selected)
    picked = set(chosen)
    out["recall@selection"] = _recall(sets, picked)
    out["hit@selection"] = float(bool(union & picked))
    out["all_gold"] = float(any(g <= picked for g in sets))
    total = sum(tokens[c] for c in chosen)
    offset, ranks, offsets, middle = 0, [], [], 0
    for k, cid in enumerate(chosen, start=1):
        if cid in union:
            ranks.append(k)
            offsets.append(offset)
            centre = offset + tokens[cid] / 2
            middle += total > 0 and total / 3 <= centre <= 2 * total / 3
        offset += tokens[cid]
    out["gold_window_ranks"] = ranks
    out["gold_token_offsets"] = offsets
    out["gold_middle_third_share"] = middle / len(ranks) if ranks else 0.0
    out["distractors"] = len(chosen) - len(ranks)
    out["evidence_free"] = float(not chosen)
    return out


def summarize_labelled(rows: Iterable[dict | None]) -> dict:
    """Means of the numeric metrics over labelled queries, and their count."""
    rows = [r for r in rows if r is not None]
    if not rows:
        return {"queries": 0}
    keys = [k for k, v in rows[0].items() if isinstance(v, (int, float))]
    return {"queries": len(rows), **{k: float(np.mean([r[k] for r in rows])) for k in keys}}


def self_consistency(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two selections (1 when both are empty)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0
