"""The pre-inference gate: each threshold checked against the quality vector, with a reason."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ctxselect.model.requirements import GateThresholds
from ctxselect.quality.vector import _TOLERANCE, QualityVector

__all__ = ["GateFailure", "evaluate_gate"]


@dataclass(frozen=True)
class GateFailure:
    """One gate condition that does not hold.

    Attributes
    ----------
    condition : str
        The threshold's name (``min_coverage``, ``max_source_starvation`` ...).
    metric : str
        The metric it bounds.
    threshold, value : float
    message : str
        Why it fails, naming the chunks, sources or aspects responsible.
    """

    condition: str
    metric: str
    threshold: float
    value: float
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


def _names(items, limit: int = 5) -> str:
    items = list(items)
    shown = ", ".join(f"`{x}`" for x in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def evaluate_gate(quality: QualityVector, gate: GateThresholds) -> list[GateFailure]:
    """The conditions of ``gate`` that ``quality`` fails (empty when the context passes)."""
    m = quality.metrics
    failures: list[GateFailure] = []

    def fail(condition: str, metric: str, threshold: float, message: str) -> None:
        failures.append(GateFailure(condition, metric, threshold, m[metric], message))

    if m["coverage_weighted"] < gate.min_coverage - _TOLERANCE:
        fail("min_coverage", "coverage_weighted", gate.min_coverage,
             f"coverage {m['coverage_weighted']:.3f} is below {gate.min_coverage:.3f}: "
             f"no selected chunk covers {_names(quality.uncovered_aspects)}")
    tau = m["token_utilization"]
    if tau < gate.min_token_utilization - _TOLERANCE:
        fail("min_token_utilization", "token_utilization", gate.min_token_utilization,
             f"token utilization {tau:.3f} is below {gate.min_token_utilization:.3f}: "
             f"{quality.tokens_used} tokens leave the budget mostly unused")
    if tau > gate.utilization_ceiling + _TOLERANCE:
        fail("max_token_utilization", "token_utilization", gate.utilization_ceiling,
             f"token utilization {tau:.3f} is above {gate.utilization_ceiling:.3f}: "
             f"{quality.tokens_used} tokens press against the budget"
             + (" (over it)" if tau > 1.0 else ""))
    if m["source_starvation"] > gate.max_source_starvation + _TOLERANCE:
        starved = [f"`{s['source']}` ({s['selected']} of {s['required']})" for s in quality.starved_sources]
        fail("max_source_starvation", "source_starvation", gate.max_source_starvation,
             f"source starvation {m['source_starvation']:.3f} is above {gate.max_source_starvation:.3f}: "
             f"required sources short of their minimum: {', '.join(starved)}")
    if m["contradiction_density"] > gate.max_contradiction_density + _TOLERANCE:
        pairs, count = quality.conflicting_pairs, max(quality.conflicting_pair_count, len(quality.conflicting_pairs))
        # the reasons come from ctxselect.features.contradictions.reasons, which quotes no value of an inadmissible chunk
        shown = "; ".join(f"`{p.a}` vs `{p.b}` ({', '.join(p.reasons)})" for p in pairs[:3])
        more = f" and {count - 3} more" if count > 3 else ""
        fail("max_contradiction_density", "contradiction_density", gate.max_contradiction_density,
             f"contradiction density {m['contradiction_density']:.3f} is above "
             f"{gate.max_contradiction_density:.3f}: {count} conflicting pair(s): {shown}{more}")
    if m["freshness"] < gate.min_freshness - _TOLERANCE:
        detail = "the context is empty" if quality.tokens_used == 0 else "old chunks carry much of the relevance"
        fail("min_freshness", "freshness", gate.min_freshness,
             f"freshness {m['freshness']:.3f} is below {gate.min_freshness:.3f}: {detail}")
    if m["policy_admissibility"] < gate.min_policy_admissibility - _TOLERANCE:
        detail = (f"chunks outside the allowed scopes: {_names(quality.inadmissible_ids)}"
                  if quality.inadmissible_ids else "the context is empty")
        fail("min_policy_admissibility", "policy_admissibility", gate.min_policy_admissibility,
             f"policy admissibility {m['policy_admissibility']:.3f} is below "
             f"{gate.min_policy_admissibility:.3f}: {detail}")
    if gate.max_stale_risk is not None and m["stale_risk"] > gate.max_stale_risk + _TOLERANCE:
        fail("max_stale_risk", "stale_risk", gate.max_stale_risk,
             f"stale risk {m['stale_risk']:.3f} is above {gate.max_stale_risk:.3f}: chunks outside "
             f"their validity window: {_names(quality.stale_ids)}")
    return failures
