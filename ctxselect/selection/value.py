"""Each chunk's value and the aspects it covers: the linear part of the objective
(:mod:`ctxselect.selection.problem`), computed once per query from the packed candidates, their
freshness and the question's probes. :func:`ctxselect.selection.problem.build_problem` and the
optimizer's reach (:func:`ctxselect.selection.solvers.core.reach`) both read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ctxselect.features.query_terms import QueryProbes, query_features
from ctxselect.model.weights import relative_weights
from ctxselect.packing import PackedCandidates

if TYPE_CHECKING:
    from ctxselect.selection.problem import ObjectiveWeights

__all__ = ["ChunkValues", "chunk_values"]


@dataclass(frozen=True, eq=False)
class ChunkValues:
    """``value`` (float64, n), ``covers`` (bool, n x A: the required aspects, then the question's
    terms), ``aspect_gain`` (float64, A) and ``n_required`` (how many aspects are required)."""

    value: np.ndarray
    covers: np.ndarray
    aspect_gain: np.ndarray
    n_required: int


def chunk_values(packed: PackedCandidates, freshness: np.ndarray, probes: QueryProbes | None,
                 weights: "ObjectiveWeights", query: str | None) -> ChunkValues:
    """The value of each chunk, w_rel·s^p·φ − w_tok·T/B − c, and what covering each aspect adds
    (see :mod:`ctxselect.selection.problem`); ``probes``: the question's hits found by
    :func:`ctxselect.signals` (else the texts are scanned here)."""
    n = packed.n
    reqs = packed.requirements
    w = weights
    if w.relative_freshness > 0 and n and freshness.max() > 0:
        relative = freshness / freshness.max()
        freshness = w.relative_freshness * relative + (1.0 - w.relative_freshness) * freshness
    strength = packed.relevance.astype(np.float64)
    n_required = len(reqs.required_aspects)
    covers = packed.aspects[:, :n_required]
    omega = relative_weights(packed.aspect_weights[:n_required])  # their sum is finite
    aspect_gain = w.coverage * omega / omega.sum() if n_required else np.zeros(0)
    if query and w.uses_query and n:
        features = query_features(packed, query, probes=probes)  # the hits found with the signatures
        for name in ("expansion", "title_link", "time_match", "source_match"):
            signal = getattr(features, name)
            strength = strength + getattr(w, name) * (signal - signal.min())  # only differences count
        if strength.max() > 0:
            strength = strength / strength.max()
        if w.query_coverage > 0 and features.terms:
            covers = np.concatenate([covers, features.covers], axis=1)
            aspect_gain = np.concatenate([aspect_gain, w.query_coverage * features.term_weight])
    value = (w.relevance * strength ** w.sharpen * freshness
             - w.tokens * packed.tokens / packed.budget - w.chunk_cost)
    return ChunkValues(value, covers, aspect_gain, n_required)
