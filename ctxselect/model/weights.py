"""The objective's weights (:class:`ObjectiveWeights`), defined with the data model so that a
requirements object's ``weights`` is checked when it is read, by the check ``select()`` runs
(the objective itself is :mod:`ctxselect.selection.problem`'s)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model import validation as checks

__all__ = ["ObjectiveWeights", "relative_weights"]


@dataclass(frozen=True)
class ObjectiveWeights:
    """Weights of the objective's terms (all ≥ 0).

    Attributes
    ----------
    relevance : float
        w_rel, on relevance × freshness of each selected chunk.
    coverage : float
        w_cov, on the weighted share of required aspects covered (a full cover adds w_cov).
    redundancy : float
        w_red, on the similarity of each selected redundant pair.
    contradiction : float
        w_con, on the severity of each selected conflicting pair.
    tokens : float
        w_tok, on the share of the budget used.
    sharpen : float
        Exponent p on relevance (r^p): above 1, weak chunks count for less.
    query_coverage : float
        On the IDF-weighted share of the question's terms covered (needs ``query``).
    expansion, title_link, time_match, source_match : float
        On each chunk's query signals (:mod:`ctxselect.features.query_terms`; need ``query``).
    same_document : float
        On each selected pair of chunks from the same ``doc_id`` (diversity).
    chunk_cost : float
        A fixed cost per selected chunk: a chunk must earn its place.
    relative_freshness : float
        1: freshness enters the value relative to the freshest candidate (f / max f), so a set of
        equally old candidates is not discounted to nothing; 0: absolute freshness.
    """

    relevance: float = 1.0
    coverage: float = 1.0
    redundancy: float = 1.0
    contradiction: float = 1.0
    tokens: float = 0.01
    sharpen: float = 4.0
    query_coverage: float = 0.5
    expansion: float = 0.0
    title_link: float = 0.3
    time_match: float = 0.5
    source_match: float = 0.5
    same_document: float = 0.0
    chunk_cost: float = 0.0
    relative_freshness: float = 1.0

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, checks.number(getattr(self, f.name), f"weights.{f.name}", low=0.0,
                                                                 high=checks.MAX_WEIGHT))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | "ObjectiveWeights" | None) -> "ObjectiveWeights":
        """The weights of a mapping (name -> weight; the others keep their defaults): the one check of
        weights, which ``select()`` runs and a requirements object's ``weights`` too when it is read.

        Raises
        ------
        InputError
            Not a mapping (field ``weights``), an unknown name or a weight that is not a finite
            number in [0, :data:`~ctxselect.model.validation.MAX_WEIGHT`] (field ``weights.NAME``).
        """
        if isinstance(data, ObjectiveWeights):
            return data
        if data is not None:
            checks.mapping(data, "weights", "an object of objective weights")
        if not data:  # no weight given (None or {}): the defaults
            return _DEFAULTS if cls is ObjectiveWeights else cls()
        valid = [f.name for f in fields(cls)]
        for key in data:
            if key not in valid:
                raise InputError(field=f"weights.{key}", message="unknown objective weight",
                                 expected="one of " + ", ".join(valid))
        return cls(**data)

    @property
    def uses_query(self) -> bool:
        """Whether a term of the objective reads the question (its query signals)."""
        return max(self.query_coverage, self.expansion, self.title_link, self.time_match, self.source_match) > 0


#: The default weights, made (and checked) once: ``from_mapping`` of None or an empty mapping returns them (15 us
#: a call at 200 candidates to check the 14 defaults again; a frozen dataclass, equal to any ``ObjectiveWeights()``).
_DEFAULTS = ObjectiveWeights()


def relative_weights(weights: np.ndarray) -> np.ndarray:
    """Weights that count only by their ratios (the required aspects'), scaled by one power of two.

    Parameters
    ----------
    weights : float64 array
        Finite weights ≥ 0, any magnitude: three weights of 1e308 are valid, but their sum is inf.

    Returns
    -------
    float64 array
        ``weights`` times 2^-e, the largest in [0.5, 1): their sum is finite (at most their count)
        and every share (``w[covered].sum() / w.sum()``, ``c * w / w.sum()``) comes out bit for bit
        as it does of the weights themselves whenever that does not overflow, since scaling by a
        power of two is exact. The one definition of the aspect weights' shares (coverage, its gate
        and the objective's coverage term).
    """
    weights = np.asarray(weights, dtype=np.float64)
    if not weights.size:
        return weights
    return np.ldexp(weights, -np.frexp(weights.max())[1])
