"""The articles' metrics of a bench record beside the objective and the quality vector.

Per query and method (keys of a ``bench --json`` record):

- ``labelled``: :func:`ctxselect.evaluate.labelled.labelled_metrics` of the selection (seed 003:
  recall and hits at depth, gold position, distractors; seed 004: density, precision@k,
  retrieval_recall@k, nDCG@k, AP), null without gold;
- ``self_consistency``: the mean Jaccard similarity of the selection and the selections of the
  query's paraphrases (:mod:`ctxselect.evaluate.paraphrase`), null without paraphrases;
- ``relevance``: :func:`ctxselect.evaluate.relevance.context_relevance` of the selected chunks'
  ``relevance`` (seed 001: mean, min, weighted, bands, alert);
- ``quality_score``: :func:`ctxselect.quality.score.quality_score` of the quality vector (seed 000).

Per method (keys of a summary): ``labelled`` (means over the queries with gold; a metric that is
null for some of them, ``gold_first_rank`` when no gold was selected, over those that have it),
``labelled_queries``, ``self_consistency`` and ``self_consistency_queries``, ``relevance`` (the
means of the three aggregates and ``alerts``, the queries whose weighted relevance is below the
threshold) and ``quality_score`` (the mean).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ctxselect.evaluate.labelled import labelled_metrics, summarize_labelled
from ctxselect.evaluate.paraphrase import Paraphrase, consistency_of
from ctxselect.evaluate.relevance import context_relevance
from ctxselect.model.io import Query
from ctxselect.quality.score import quality_score

__all__ = ["record_extras", "summary_extras", "extra_table", "extra_markdown"]


def record_extras(query: Query, ids: Sequence[str], metrics: Mapping[str, float], method: str, *,
                  depths: Sequence[int], paraphrases: Sequence[Paraphrase], options: Mapping[str, Any],
                  relevance_alert: float) -> dict[str, Any]:
    """The record fields of the module docstring for one selection.

    Parameters
    ----------
    query : Query
    ids : sequence of str
        The selection, in window order.
    metrics : mapping
        The selection's quality vector.
    method : str
        The selector, re-run on each paraphrase.
    depths, paraphrases, options, relevance_alert
        Retrieval depths, the query's paraphrases, :func:`ctxselect.select` keyword arguments and
        the relevance alert threshold.

    Returns
    -------
    dict
        ``labelled``, ``self_consistency``, ``relevance``, ``quality_score``.
    """
    by_id = {c.id: c for c in query.candidates}
    return {
        "labelled": labelled_metrics(query, ids, depths),
        "self_consistency": consistency_of(query, ids, paraphrases, method, options),
        "relevance": context_relevance([by_id[c].relevance for c in ids], relevance_alert),
        "quality_score": quality_score(metrics),
    }


def summary_extras(records: Sequence[Any]) -> dict[str, Any]:
    """The summary fields of the module docstring over one method's records.

    Parameters
    ----------
    records : sequence of QueryRecord

    Returns
    -------
    dict
        ``labelled_queries``, ``labelled``, ``self_consistency``, ``self_consistency_queries``,
        ``relevance`` (with ``alerts`` and ``threshold``), ``quality_score``.
    """
    labelled = summarize_labelled(r.labelled for r in records)
    consistent = [r.self_consistency for r in records if r.self_consistency is not None]
    relevance = [r.relevance for r in records if r.relevance]
    return {
        "labelled_queries": labelled.pop("queries"),
        "labelled": labelled,
        "self_consistency": float(np.mean(consistent)) if consistent else None,
        "self_consistency_queries": len(consistent),
        "relevance": {**{k: float(np.mean([r[k] for r in relevance])) if relevance else 0.0
                         for k in ("mean", "min", "weighted")},
                      "alerts": sum(bool(r["alert"]) for r in relevance),
                      **({"threshold": relevance[0]["threshold"]} if relevance else {})},
        "quality_score": float(np.mean([r.quality_score for r in records])) if records else 0.0,
    }


_LABELS = {"ap": "MAP (mean AP)", "gold_first_rank": "gold first window rank",
           "gold_first_offset": "gold first token offset", "gold_middle_third_share": "gold mid-third share"}


def _rows(labelled: list[str]) -> list[tuple[str, str, Any]]:
    return ([(_LABELS.get(k, k), "labelled", k) for k in labelled]
            + [("self-consistency", "self_consistency", None),
               ("relevance: mean", "relevance", "mean"), ("relevance: min", "relevance", "min"),
               ("relevance: weighted", "relevance", "weighted"), ("relevance alerts", "relevance", "alerts"),
               ("quality score (article 000)", "quality_score", None)])


def extra_table(summaries: Sequence[Any]) -> tuple[list[str], list[list[str]], str]:
    """The articles' metrics per method (``bench --all-metrics``): (headers, rows, caption)."""
    keys: list[str] = []
    for s in summaries:
        keys += [k for k in s.labelled if k not in keys and not k.endswith(":queries")]
    rows = []
    for label, attr, key in _rows(keys):
        cells = []
        for s in summaries:
            value = getattr(s, attr)
            value = value.get(key) if key is not None and value is not None else value
            if value is None:
                cells.append("–")
            elif key == "alerts":
                cells.append(f"{value}/{s.queries}")
            else:
                cells.append(f"{value:.3f}")
        rows.append([label, *cells])
    labelled = max((s.labelled_queries for s in summaries), default=0)
    consistent = max((s.self_consistency_queries for s in summaries), default=0)
    threshold = next((s.relevance["threshold"] for s in summaries if "threshold" in s.relevance), None)
    caption = (f"articles' metrics (mean): labelled over {labelled} queries with gold, self-consistency over "
               f"{consistent} queries with paraphrases"
               + (f", relevance alerts: weighted relevance below {threshold:g}" if threshold is not None else ""))
    return ["metric", *[s.method for s in summaries]], rows, caption


def extra_markdown(summaries: Sequence[Any]) -> str:
    """:func:`extra_table` as a markdown table (``bench --markdown --all-metrics``)."""
    head, rows, caption = extra_table(summaries)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines + ["", caption + "."])
