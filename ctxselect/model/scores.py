"""Raw retriever scores as relevance in [0, 1]: the one place scores are normalised.

``select(..., relevance=...)`` (and :class:`ctxselect.ContextSelector`) take one of
:class:`Relevance`: ``as_is`` (the default: each relevance must already lie in [0, 1]),
``minmax`` (BM25 and other unbounded scores: (s − min) / (max − min), all 1 when they are equal;
any finite range, even one wider than the largest float),
``sigmoid`` (cross-encoder logits: 1 / (1 + e^−s)) or ``rank`` (only the order counts: the best
1, falling linearly to 1/n; equal scores share the best of their ranks).
"""

from __future__ import annotations

import math
from dataclasses import replace
from enum import Enum
from typing import Any, Mapping

from ctxselect.errors import InputError
from ctxselect.model import validation as checks

__all__ = ["Relevance", "normalise_relevance", "AS_IS_EXPECTED"]

#: What ``as_is`` expects of a relevance, naming the option for raw scores.
AS_IS_EXPECTED = "a number in [0, 1] (raw scores: relevance='minmax', 'sigmoid' or 'rank')"


class Relevance(str, Enum):
    """How candidates' ``relevance`` values are read."""

    AS_IS = "as_is"
    MINMAX = "minmax"
    SIGMOID = "sigmoid"
    RANK = "rank"


def _raw(item: Any, k: int) -> float:
    value = item.get("relevance") if isinstance(item, Mapping) else getattr(item, "relevance", None)
    try:
        return checks.number(value, "relevance")
    except InputError as err:
        located = item.get("id") if isinstance(item, Mapping) else getattr(item, "id", None)
        raise (err.located(candidate_id=str(located)) if located is not None
               else err.located(candidate_index=k)) from None


def normalise_relevance(candidates: list, mode: Relevance) -> list:
    """``candidates`` (dicts or Candidates) with their relevance mapped into [0, 1] by ``mode``;
    dicts are copied, never changed; ``as_is`` returns the list itself."""
    if mode is Relevance.AS_IS or not candidates:
        return candidates
    raw = [_raw(item, k) for k, item in enumerate(candidates)]
    if mode is Relevance.MINMAX:
        low, high = min(raw), max(raw)
        if high - low == math.inf:  # wider than the largest float (1e308 and -1e308): halved, an exact scaling
            raw, low, high = [s / 2 for s in raw], low / 2, high / 2
        scaled = [1.0 if high == low else (s - low) / (high - low) for s in raw]
    elif mode is Relevance.SIGMOID:
        scaled = [1.0 / (1.0 + math.exp(-s)) if s > -700 else 0.0 for s in raw]
    else:
        order = sorted(raw, reverse=True)
        first = {}
        for place, s in enumerate(order):
            first.setdefault(s, place)
        scaled = [1.0 - first[s] / len(raw) for s in raw]
    return [dict(item, relevance=value) if isinstance(item, Mapping) else replace(item, relevance=value)
            for item, value in zip(candidates, scaled)]
