"""``inspect``: score any assembled context with the quality vector and the gate."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from ctxselect.features.contradictions import ConflictSummary
from ctxselect.model.candidate import Candidate
from ctxselect.model.requirements import Requirements
from ctxselect.model.tokens import TokenCounter
from ctxselect.packing import PackedCandidates, pack
from ctxselect.quality.gate import GateFailure, evaluate_gate
from ctxselect.quality.vector import QualityVector, quality_vector

__all__ = ["QualityReport", "inspect", "report_for"]


@dataclass(frozen=True)
class QualityReport:
    """The quality of one context.

    Attributes
    ----------
    metrics : dict
        Exactly the keys of :data:`ctxselect.quality.vector.METRIC_NAMES`.
    passed : bool
        Whether every gate condition holds.
    failures : list of GateFailure
        The conditions that do not hold, each with threshold, value and why.
    starved_sources : list of dict
        ``{"source", "selected", "required"}`` for each required source short of its minimum.
    conflicting_pairs : list of ConflictPair
        The first :data:`ctxselect.features.contradictions.MAX_LISTED_PAIRS` conflicting pairs in position
        order; no value of a chunk outside the allowed scopes is quoted in their reasons.
    stale_ids, inadmissible_ids : list of str
    ids : list of str
        The chunks scored, in the order given.
    tokens_used : int
    conflicting_pair_count : int
        Every conflicting pair, listed or not (the contradiction metrics count the same pairs).
    claim_conflicts : list of ConflictPair
        Pairs that conflict on free-text claims (the first listed), beside the contradiction density
        (which, with the requirements' default ``contradictions="fields"``, counts conflict fields
        and versions only, as article 000 defines it); empty with ``contradictions="all"``, where
        the density counts them.
    claim_conflict_count : int
        How many such pairs, listed or not.
    """

    metrics: dict[str, float]
    passed: bool
    failures: list[GateFailure]
    starved_sources: list[dict]
    conflicting_pairs: list
    stale_ids: list[str]
    inadmissible_ids: list[str]
    ids: list[str] = field(default_factory=list)
    tokens_used: int = 0
    conflicting_pair_count: int = 0
    claim_conflicts: list = field(default_factory=list)
    claim_conflict_count: int = 0

    @property
    def quality_score(self) -> float:
        """Article 000's weighted score of the metrics (:func:`ctxselect.quality.score.quality_score`,
        default weights)."""
        from ctxselect.quality.score import quality_score

        return quality_score(self.metrics)

    @property
    def diagnostics(self) -> dict[str, Any]:
        return {
            "starved_sources": self.starved_sources,
            "conflicting_pairs": [p.to_dict() for p in self.conflicting_pairs],
            "claim_conflicts": [p.to_dict() for p in self.claim_conflicts],
            "stale_ids": self.stale_ids,
            "inadmissible_ids": self.inadmissible_ids,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: metrics, passed, failures, diagnostics, ids, tokens_used,
        conflicting_pair_count, claim_conflict_count."""
        return {
            "metrics": dict(self.metrics),
            "passed": self.passed,
            "failures": [f.to_dict() for f in self.failures],
            "diagnostics": self.diagnostics,
            "ids": list(self.ids),
            "tokens_used": self.tokens_used,
            "conflicting_pair_count": self.conflicting_pair_count,
            "claim_conflict_count": self.claim_conflict_count,
        }


def report_for(packed: PackedCandidates, mask: np.ndarray, order: Iterable[int] | None = None,
               freshness: np.ndarray | None = None, conflicts: ConflictSummary | None = None,
               claim_readable: np.ndarray | None = None) -> QualityReport:
    """The quality report of the chunks of ``packed`` selected by ``mask`` (``conflicts``,
    ``claim_readable``: see :func:`ctxselect.quality.vector.quality_vector`)."""
    quality: QualityVector = quality_vector(packed, mask, freshness, conflicts=conflicts, claim_readable=claim_readable)
    failures = evaluate_gate(quality, packed.requirements.gate)
    positions = np.flatnonzero(mask) if order is None else list(order)
    return QualityReport(
        metrics=quality.metrics,
        passed=not failures,
        failures=failures,
        starved_sources=quality.starved_sources,
        conflicting_pairs=quality.conflicting_pairs,
        stale_ids=quality.stale_ids,
        inadmissible_ids=quality.inadmissible_ids,
        ids=[packed.ids[i] for i in positions],
        tokens_used=quality.tokens_used,
        conflicting_pair_count=quality.conflicting_pair_count,
        claim_conflicts=quality.claim_conflicts,
        claim_conflict_count=quality.claim_conflict_count,
    )


def inspect(
    chunks: Iterable[Candidate | Mapping[str, Any]],
    requirements: Requirements | Mapping[str, Any],
    *,
    token_counter: TokenCounter | None = None,
) -> QualityReport:
    """Score an assembled context with the six-number quality vector and the gate.

    Parameters
    ----------
    chunks : iterable of Candidate or dict
        The context as sent (or about to be sent) to the model. Dicts use the dump's field names;
        article 000's shape (conflict fields as top-level keys, ``timestamp`` as a datetime) works
        too. A chunk without ``relevance`` weighs 1.0 in freshness, as in article 000.
    requirements : Requirements or dict
        Budget, required aspects and sources, allowed scopes, conflict fields, freshness decay,
        reference time ``now`` (default: the current time) and gate thresholds.
    token_counter : callable, optional
        Counts tokens of chunks without ``tokens``.

    Returns
    -------
    QualityReport
        ``metrics`` (coverage, coverage_weighted, token_utilization, utilization_risk,
        source_starvation, contradiction_density, contradiction_density_weighted, freshness,
        stale_risk, policy_admissibility), ``passed``, ``failures`` and diagnostics.

    Raises
    ------
    InputError
        For a chunk or requirement that cannot be read, naming the chunk id and field.

    Examples
    --------
    >>> report = inspect(
    ...     [{"id": "a", "source": "policy", "tokens": 2200, "relevance": 0.9},
    ...      {"id": "b", "source": "procedure", "tokens": 1800, "relevance": 0.8}],
    ...     {"token_budget": 20000, "required_sources": ["policy", "procedure", "status"]})
    >>> round(report.metrics["source_starvation"], 3), report.passed
    (0.333, False)
    """
    packed = pack(chunks, requirements, token_counter=token_counter, default_relevance=1.0)
    return report_for(packed, np.ones(packed.n, dtype=bool))
