"""Metrics over labelled queries (shared seeds 003 and 004): was the evidence available, was it
selected, where did it land, and how well did retrieval rank it.

Gold is a query's ``gold``: one id set, or alternative sets; a set's recall is the share of its
ids present, and the best-recalled set counts; a *hit* is any gold id present.

Article 004's ranking metrics (binary relevance: a candidate is relevant when its id is in any gold
set, the union G; the ranking is :func:`retrieval_order`; ``rel_i`` is 1 when the candidate at
rank i is relevant; gold ids missing from the candidates count in |G| as never retrieved):

- precision@k = Σ_{i≤k} rel_i / k (divided by k even when fewer than k candidates exist, as
  trec_eval does);
- retrieval_recall@k = Σ_{i≤k} rel_i / |G| (article 003's ``recall@k`` instead counts the
  best-recalled alternative set; with one gold set the two are equal);
- nDCG@k = DCG@k / IDCG@k with DCG@k = Σ_{i≤k} rel_i / log2(i + 1) and IDCG@k the DCG of a
  ranking with all of G first (min(k, |G|) ones);
- AP = Σ_i rel_i · precision@i / |G| over the whole ranking; MAP is its mean over queries.

Context density (article 004: how much of the context does work) = tokens of the selected gold
chunks ÷ tokens of the selection (0 for an empty selection).
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model.io import Query

__all__ = ["retrieval_order", "labelled_metrics", "summarize_labelled", "self_consistency", "DEPTHS",
           "ranking_metrics", "check_depths"]

DEPTHS = (20, 50, 200)


def check_depths(depths: Iterable[int]) -> tuple[int, ...]:
    """The depths as a tuple of distinct positive integers, in the order given.

    Raises
    ------
    InputError
        Naming ``depths`` when one is not a positive integer, or none is given.
    """
    out: list[int] = []
    for value in depths:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(field="depths", expected="positive integers", found=value, has_found=True)
        if int(value) not in out:
            out.append(int(value))
    if not out:
        raise InputError(field="depths", expected="at least one depth")
    return tuple(out)


def retrieval_order(query: Query) -> list[str]:
    """Candidate ids by retrieval rank (``rank`` when every candidate has one, else relevance)."""
    cands = query.candidates
    if cands and all(c.rank is not None for c in cands):
        return [c.id for c in sorted(cands, key=lambda c: (c.rank, c.id))]
    return [c.id for c in sorted(cands, key=lambda c: -c.relevance)]


def _recall(sets: list[set[str]], present: set[str]) -> float:
    return max(len(g & present) / len(g) for g in sets)


def ranking_metrics(order: Sequence[str], relevant: set[str], depths: Iterable[int] = DEPTHS) -> dict[str, float]:
    """precision@k, retrieval_recall@k, ndcg@k for each depth k and ``ap`` (average precision) of
    the ranking ``order`` against the relevant ids (see the module docstring); all 0 when
    ``relevant`` is empty.

    Examples
    --------
    >>> m = ranking_metrics(["a", "b", "c", "d"], {"a", "c", "x"}, depths=(2,))
    >>> m["precision@2"], round(m["retrieval_recall@2"], 4), round(m["ap"], 4)
    (0.5, 0.3333, 0.5556)
    """
    rel = np.array([cid in relevant for cid in order], dtype=np.float64)
    n_rel = len(relevant)
    out: dict[str, float] = {}
    discount = 1.0 / np.log2(np.arange(2, len(order) + 2))
    for k in check_depths(depths):
        top = rel[:k]
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, n_rel)))
        out[f"precision@{k}"] = float(top.sum() / k)
        out[f"retrieval_recall@{k}"] = float(top.sum() / n_rel) if n_rel else 0.0
        out[f"ndcg@{k}"] = float((top * discount[:top.size]).sum() / ideal) if n_rel else 0.0
    hits = np.cumsum(rel)
    at = hits / np.arange(1, len(order) + 1) if len(order) else hits
    out["ap"] = float((at * rel).sum() / n_rel) if n_rel else 0.0
    return out


def labelled_metrics(query: Query, selected: Sequence[str], depths: Iterable[int] = DEPTHS) -> dict | None:
    """Article 003's and 004's metrics of one selection of a labelled query.

    Parameters
    ----------
    query : Query
    selected : sequence of str
        The selection, in assembly (window) order.
    depths : iterable of int
        Retrieval depths k of ``recall@k``, ``hit@k`` and the ranking metrics.

    Returns
    -------
    dict or None
        None when the query has no gold. Else: ``recall@k`` and ``hit@k`` per depth (by retrieval
        rank), ``recall@selection``, ``hit@selection``, ``all_gold``; where the gold landed:
        ``gold_window_ranks`` (1-based), ``gold_token_offsets``, ``gold_first_rank`` and
        ``gold_first_offset`` (of the first gold chunk in the window; None when none was selected),
        ``gold_middle_third_share`` (gold chunks whose centre lies in the middle third of the
        window's tokens); ``distractors`` (selected chunks that are not gold), ``evidence_free``
        (1 for an empty selection), ``density`` (gold tokens ÷ selected tokens), and the ranking
        metrics of :func:`ranking_metrics` (``precision@k``, ``retrieval_recall@k``, ``ndcg@k``,
        ``ap``).
    """
    depths = check_depths(depths)
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
    offset, ranks, offsets, middle, gold_tokens = 0, [], [], 0, 0
    for k, cid in enumerate(chosen, start=1):
        if cid in union:
            ranks.append(k)
            offsets.append(offset)
            gold_tokens += tokens[cid]
            centre = offset + tokens[cid] / 2
            middle += total > 0 and total / 3 <= centre <= 2 * total / 3
        offset += tokens[cid]
    out["gold_window_ranks"] = ranks
    out["gold_token_offsets"] = offsets
    out["gold_first_rank"] = ranks[0] if ranks else None
    out["gold_first_offset"] = offsets[0] if offsets else None
    out["gold_middle_third_share"] = middle / len(ranks) if ranks else 0.0
    out["distractors"] = len(chosen) - len(ranks)
    out["evidence_free"] = float(not chosen)
    out["density"] = gold_tokens / total if total else 0.0
    out.update(ranking_metrics(order, union, depths))
    return out


def summarize_labelled(rows: Iterable[dict | None]) -> dict:
    """Means of the numeric metrics over labelled queries, and their count (``queries``).

    A metric that is None for some queries (``gold_first_rank`` when no gold was selected) is
    averaged over the queries that have it, and their count is given as ``METRIC:queries``."""
    rows = [r for r in rows if r is not None]
    if not rows:
        return {"queries": 0}
    keys: list[str] = []
    for r in rows:
        keys += [k for k, v in r.items() if k not in keys and (v is None or isinstance(v, (int, float)))]
    out: dict = {"queries": len(rows)}
    for k in keys:
        values = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
        if not values:
            continue
        out[k] = float(np.mean(values))
        if len(values) < len(rows):
            out[f"{k}:queries"] = len(values)
    return out


def self_consistency(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two selections (1 when both are empty)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0
