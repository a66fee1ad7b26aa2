"""Article 000's weighted score of the six numbers: one figure to rank candidate contexts.

The article scores a context as a weighted combination of its quality vector and shows that a
context C1 with lower coverage but stronger utilization, stronger freshness and no source
starvation outscores a context C2 with higher raw coverage. Its formula, weights and the two
vectors were images and are lost from the text (shared seed 000), so the weights here are
ctxselect's, chosen and documented to keep the article's reading:

    score = Σ_k w_k · g_k / Σ_k w_k

with the six terms g in [0, 1], each "higher is better":

====================  =======================================  ========
term                  g                                        weight
====================  =======================================  ========
coverage              ρ (weighted coverage ω when ``weighted``) 0.25
token_utilization     τ · (1 − r_τ): τ inside the healthy range 0.15
                      [τ_min, τ_max], 0 outside it
source_starvation     1 − δ                                    0.20
contradiction_density 1 − κ                                    0.15
freshness             φ                                        0.15
policy_admissibility  π                                        0.10
====================  =======================================  ========

so the score lies in [0, 1] (1: every required aspect and source present, a window used up to its
healthy ceiling, no conflict, fresh, admissible). It is a ranking aid beside the gate, never a
replacement: a context can score 0.8 and fail the gate.
"""

from __future__ import annotations

from typing import Mapping

from ctxselect.errors import InputError
from ctxselect.model import validation as checks

__all__ = ["SCORE_WEIGHTS", "quality_score"]

#: The weight of each of the six numbers (keys: article 000's metric names).
SCORE_WEIGHTS = {
    "coverage": 0.25,
    "token_utilization": 0.15,
    "source_starvation": 0.20,
    "contradiction_density": 0.15,
    "freshness": 0.15,
    "policy_admissibility": 0.10,
}


def _term(metrics: Mapping[str, float], name: str, weighted: bool) -> float:
    def value(key: str, default: float | None = None) -> float:
        if key not in metrics:
            if default is not None:
                return default
            raise InputError(field=f"metrics.{key}", expected="the quality vector's value")
        return checks.number(metrics[key], f"metrics.{key}", low=0.0)

    if name == "coverage":
        return value("coverage_weighted" if weighted else "coverage")
    if name == "token_utilization":
        return min(1.0, value("token_utilization")) * (1.0 - value("utilization_risk", 0.0))
    if name in ("source_starvation", "contradiction_density"):
        return 1.0 - min(1.0, value(name))
    return min(1.0, value(name))


def quality_score(metrics: Mapping[str, float], weights: Mapping[str, float] | None = None, *,
                  weighted_coverage: bool = False) -> float:
    """Article 000's weighted score of a quality vector (see the module docstring).

    Parameters
    ----------
    metrics : mapping
        A quality vector's metrics (``QualityReport.metrics``, ``Selection.report.metrics``):
        coverage, token_utilization, source_starvation, contradiction_density, freshness,
        policy_admissibility, and utilization_risk (0 when absent).
    weights : mapping, optional
        Weights by metric name, replacing :data:`SCORE_WEIGHTS` for the names given (≥ 0, not all 0).
    weighted_coverage : bool
        Use the aspect-weighted coverage instead of the plain one.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    InputError
        Naming the metric or weight that is missing, unknown or not a number.

    Examples
    --------
    >>> c1 = {"coverage": 0.75, "token_utilization": 0.56, "source_starvation": 0.0,
    ...       "contradiction_density": 0.17, "freshness": 0.81, "policy_admissibility": 1.0}
    >>> round(quality_score(c1), 4)
    0.8175
    """
    w = dict(SCORE_WEIGHTS)
    for name, value in (weights or {}).items():
        if name not in SCORE_WEIGHTS:
            raise InputError(field=f"weights.{name}", message="unknown metric",
                             expected="one of " + ", ".join(SCORE_WEIGHTS))
        w[name] = checks.number(value, f"weights.{name}", low=0.0)
    total = sum(w.values())
    if total <= 0:
        raise InputError(field="weights", expected="at least one positive weight")
    return sum(w[name] * _term(metrics, name, weighted_coverage) for name in w) / total
