"""Aggregating per-passage relevance into one context score (shared seed 001).

- mean: the average;
- min: the worst passage;
- weighted: mean × (1 − 0.5 × share of passages scoring below 0.3) — up to a 50 % penalty for
  irrelevant passages. (The article's example 0.9 / 0.6 / 0.2 gives 0.472 by this formula; the
  article prints 0.467.)

Bands: high ≥ 0.8 (the passages answer the query), moderate ≥ 0.5 (partial), low below 0.5
(mostly tangential; the article leaves 0.4–0.5 and 0.7–0.8 unassigned, closed here downwards).

Alert: the article advises aiming for 0.7 or more in production and alerting when context
relevance drops below a threshold; :func:`context_relevance` raises the alert when the weighted
score is below :data:`ALERT_THRESHOLD` (0.7, configurable) — the weighted one, since it is the
article's own low-score-aware aggregate.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, Mapping

from ctxselect.model import validation as checks

__all__ = ["Aggregation", "aggregate_relevance", "relevance_band", "context_relevance", "LOW_SCORE", "LOW_PENALTY",
           "ALERT_THRESHOLD"]

LOW_SCORE = 0.3
LOW_PENALTY = 0.5
ALERT_THRESHOLD = 0.7


class Aggregation(str, Enum):
    MEAN = "mean"
    MIN = "min"
    WEIGHTED = "weighted"


def aggregate_relevance(scores: Iterable[float] | Mapping[object, float], method: str = "weighted") -> float:
    """One relevance score for a context from its passages' scores in [0, 1] (0 when empty)."""

    how = checks.parse_choice(Aggregation, method, "method")
    values = list(scores.values()) if isinstance(scores, Mapping) else list(scores)
    values = [checks.number(v, f"scores[{k}]", low=0.0, high=1.0) for k, v in enumerate(values)]
    if not values:
        return 0.0
    mean = sum(values) / len(values)
    if how is Aggregation.MEAN:
        return mean
    if how is Aggregation.MIN:
        return min(values)
    low = sum(1 for v in values if v < LOW_SCORE)
    return max(0.0, mean * (1 - LOW_PENALTY * low / len(values)))


def relevance_band(score: float) -> str:
    """``high`` (≥ 0.8), ``moderate`` (≥ 0.5) or ``low``."""
    score = checks.number(score, "score", low=0.0, high=1.0)
    return "high" if score >= 0.8 else "moderate" if score >= 0.5 else "low"


def context_relevance(scores: Iterable[float], threshold: float = ALERT_THRESHOLD) -> dict:
    """All three aggregates of a context's passage scores, their bands and the alert.

    Parameters
    ----------
    scores : iterable of float
        The passages' relevance in [0, 1] (a chunk's ``relevance``).
    threshold : float
        The alert threshold in [0, 1] on the weighted aggregate (article 001: aim for ≥ 0.7).

    Returns
    -------
    dict
        ``mean``, ``min``, ``weighted``, ``bands`` (each aggregate's :func:`relevance_band`),
        ``threshold`` and ``alert`` (the weighted aggregate below the threshold; an empty context
        scores 0 and alerts).

    Examples
    --------
    >>> r = context_relevance([0.9, 0.6, 0.2])
    >>> round(r["weighted"], 3), r["bands"]["weighted"], r["alert"]
    (0.472, 'low', True)
    """
    threshold = checks.number(threshold, "relevance_alert", low=0.0, high=1.0)
    values = list(scores)
    out = {how.value: aggregate_relevance(values, how.value) for how in Aggregation}
    return {**out, "bands": {k: relevance_band(v) for k, v in out.items()}, "threshold": threshold,
            "alert": out["weighted"] < threshold}
