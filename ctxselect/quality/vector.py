"""The context-quality vector of article 000 (bugs fixed), computed over packed arrays.

For a selected set C of n chunks under budget B:

- coverage ρ = |covered ∩ required| / |required| (1 when nothing is required);
  weighted Σ ω_a·[a covered] / Σ ω_a;
- token utilization τ = Σ T_i / B; utilization risk 0 inside [τ_min, τ_max], else 1;
- source starvation δ = |{s required : n_s < m_s}| / |required sources| (0 when none required);
- contradiction density κ = conflicting pairs / C(n, 2); weighted Σ σ_ij / C(n, 2) (0 when n < 2),
  counted exactly without listing the pairs (:func:`ctxselect.features.contradictions.conflict_summary`; the
  diagnostics list the first :data:`ctxselect.features.contradictions.MAX_LISTED_PAIRS`);
- freshness φ = Σ r_i·f_i / Σ r_i with f_i = e^(−λ_s·age_i) (the plain mean of f when Σ r_i = 0;
  0 for an empty context, as in the article); stale risk = 1 − valid-at-now / n (0 when empty);
- policy admissibility π = admissible / n (0 for an empty context, as in the article).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.features.compute import chunk_freshness
from ctxselect.features.contradictions import ConflictPair, ConflictSummary, conflict_summary
from ctxselect.model.weights import relative_weights
from ctxselect.packing import PackedCandidates

__all__ = ["METRIC_NAMES", "QualityVector", "kappa_conflicts", "quality_vector"]

METRIC_NAMES = (
    "coverage",
    "coverage_weighted",
    "token_utilization",
    "utilization_risk",
    "source_starvation",
    "contradiction_density",
    "contradiction_density_weighted",
    "freshness",
    "stale_risk",
    "policy_admissibility",
)

_TOLERANCE = TOLERANCE  # float slack when comparing a metric with a threshold


@dataclass(frozen=True)
class QualityVector:
    """Metrics and diagnostics of one context.

    ``conflicting_pairs`` lists the first :data:`ctxselect.features.contradictions.MAX_LISTED_PAIRS`
    conflicting pairs counted by the contradiction density; ``conflicting_pair_count`` counts them
    all. ``claim_conflicts`` / ``claim_conflict_count``: the pairs that conflict on free-text claims
    (the first listed / all), reported beside the density when the requirements' ``contradictions``
    is ``"fields"`` (article 000's κ), counted in it (and empty here) when it is ``"all"``."""

    metrics: dict[str, float]
    starved_sources: list[dict]
    conflicting_pairs: list[ConflictPair]
    stale_ids: list[str]
    inadmissible_ids: list[str]
    tokens_used: int
    uncovered_aspects: list[str]
    conflicting_pair_count: int = 0
    claim_conflicts: list[ConflictPair] = field(default_factory=list)
    claim_conflict_count: int = 0


def kappa_conflicts(packed: PackedCandidates, mask: np.ndarray) -> ConflictSummary:
    """The conflicts the contradiction density κ counts among the chunks of ``mask``: fields and
    versions, free-text claims too with the requirements' ``contradictions="all"``."""
    return conflict_summary(packed, mask, claims=packed.requirements.contradictions == "all")


def quality_vector(packed: PackedCandidates, mask: np.ndarray, freshness: np.ndarray | None = None, *,
                   list_claims: bool = True, conflicts: ConflictSummary | None = None,
                   claim_readable: np.ndarray | None = None) -> QualityVector:
    """Score the chunks of ``packed`` selected by the boolean ``mask`` (``list_claims=False``: skip
    the claim conflicts listed beside κ, for a caller that only needs the metrics; ``conflicts``:
    what κ counts, :func:`kappa_conflicts` of this mask, when the caller has it already;
    ``claim_readable``: ``Signals.claim_readable``, for the claims listed)."""
    mask = np.asarray(mask, dtype=bool)
    reqs = packed.requirements
    index = np.flatnonzero(mask)  # the selected positions, read once (fewer NumPy calls a metric)
    n = len(index)

    n_required = len(reqs.required_aspects)
    covered = packed.aspects[index].any(axis=0)[:n_required] if n_required else np.zeros(0, bool)
    weights = relative_weights(packed.aspect_weights[:n_required])  # their sum is finite
    coverage = float(np.count_nonzero(covered) / n_required) if n_required else 1.0
    coverage_weighted = float(weights[covered].sum() / weights.sum()) if n_required else 1.0

    tokens_used = int(packed.tokens[index].sum())
    utilization = tokens_used / packed.budget
    gate = reqs.gate
    risk = 0.0 if gate.min_token_utilization - _TOLERANCE <= utilization <= gate.utilization_ceiling + _TOLERANCE else 1.0

    n_sources_required = len(reqs.required_sources)
    counts = np.bincount(packed.source[index], minlength=len(packed.source_names))
    starved = [
        {"source": name, "selected": int(counts[code]), "required": int(packed.source_min[code])}
        for code, name in enumerate(packed.source_names[:n_sources_required])
        if counts[code] < packed.source_min[code]
    ]
    starvation = len(starved) / n_sources_required if n_sources_required else 0.0

    counts_claims = reqs.contradictions == "all"
    if conflicts is None:
        conflicts = kappa_conflicts(packed, mask)
    every = (conflicts if counts_claims or not list_claims  # else with claims too
             else conflict_summary(packed, mask, claim_readable=claim_readable))
    claimed = [p for p in every.pairs if any(r.startswith("claim:") for r in p.reasons)] if every is not conflicts else []
    all_pairs = n * (n - 1) / 2
    density = conflicts.count / all_pairs if all_pairs else 0.0
    density_weighted = conflicts.severity_sum / all_pairs if all_pairs else 0.0

    fresh = chunk_freshness(packed) if freshness is None else freshness
    rel = packed.relevance[index]
    rel_sum = rel.sum()
    if n == 0:
        freshness_score = 0.0
    elif rel_sum > 0:
        freshness_score = float((rel * fresh[index]).sum() / rel_sum)
    else:
        freshness_score = float(fresh[index].mean())
    valid = packed.valid_now[index]
    stale_risk = float(1.0 - np.count_nonzero(valid) / n) if n else 0.0
    admissible = packed.admissible[index]
    admissibility = float(np.count_nonzero(admissible) / n) if n else 0.0

    metrics = {
        "coverage": coverage,
        "coverage_weighted": coverage_weighted,
        "token_utilization": utilization,
        "utilization_risk": risk,
        "source_starvation": starvation,
        "contradiction_density": density,
        "contradiction_density_weighted": density_weighted,
        "freshness": freshness_score,
        "stale_risk": stale_risk,
        "policy_admissibility": admissibility,
    }
    return QualityVector(
        metrics=metrics,
        starved_sources=starved,
        conflicting_pairs=list(conflicts.pairs),
        conflicting_pair_count=conflicts.count,
        claim_conflicts=claimed,
        claim_conflict_count=every.claim_count if every is not conflicts else 0,
        stale_ids=[packed.ids[i] for i in index[~valid].tolist()],
        inadmissible_ids=[packed.ids[i] for i in index[~admissible].tolist()],
        tokens_used=tokens_used,
        uncovered_aspects=[a for a, hit in zip(packed.aspect_names[:n_required], covered) if not hit],
    )
