"""Brute force over every subset (numpy over the 2^n subsets), the reference twin of the optimizer.

The problem is rebuilt from the raw candidate and requirement dicts (the shapes of
``tests.strategies.build_instance``), not read from the library's ``Problem``:

- feasibility: the budget, admissibility (scope in ``allowed_scopes``), the validity window at
  ``now``, a chunk over the budget alone, an older version of a document whose newer version is
  eligible, source minimums and maximums (``max_per_source``), the chunk cap (``max_chunks``),
  hard conflicts from raw field values and document versions, and the gate (coverage, token
  utilization, freshness, contradiction density, stale risk) with article 000's defaults;
- the objective of docs/objective.md without a question: w_rel·r^4·(f / max f) − w_tok·T/B per
  chunk, w_cov·ω_a/Σω per covered aspect, and w_red·s + w_con·σ per selected pair, with f the
  freshness e^(−λ·age) computed here from the timestamps.

Only what needs text similarity comes from the library, each from a call that sees the texts and
nothing else the twin rebuilds: redundancy weights, near-duplicate groups and the text
contradictions (drift, free-text claims) from ``signals()`` of the candidates stripped of fields,
documents and versions; and the chunks that corroboration drops for a claim or drift conflict
(their reasons in ``prepare()``; corroboration weighs documents, so it needs the whole input).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

import ctxselect
from ctxselect.features.compute import signals
from ctxselect.selection.api import prepare

DAY = 86400.0
# article 000's gate, the selector keeping to all of it (a None ceiling: the whole budget)
GATE_DEFAULTS = {"min_coverage": 0.80, "min_token_utilization": 0.10, "max_token_utilization": 0.90,
                 "max_contradiction_density": 0.0, "min_freshness": 0.70, "max_stale_risk": None}
WEIGHT_DEFAULTS = {"relevance": 1.0, "coverage": 1.0, "redundancy": 1.0, "contradiction": 1.0, "tokens": 0.01,
                   "sharpen": 4.0, "relative_freshness": 1.0}
CORROBORATION_REASONS = ("contradicted by ", "unresolved conflict with ")
EPS = 1e-9
FRESHNESS_SLACK = 1e-6  # the lowered floor sits this far below the best freshness (the library's too)


@dataclass
class RawProblem:
    """The twin's own problem: plain lists and dicts, positions as in the candidate list."""

    n: int
    ids: list
    tokens: list
    budget: int
    eligible: list
    sources: list
    source_min: dict
    source_max: dict
    max_chunks: int | None
    aspects: dict          # required aspect -> weight, in the requirements' order
    coverage_weight: float  # w_cov
    covers: list           # per chunk, the set of its aspects
    value: list
    penalty: dict          # (i, j) -> w_red·s + w_con·σ, only pairs with a positive penalty
    conflicts: dict        # (i, j) -> σ > 0 (every kind)
    gate_conflicts: set    # the pairs κ counts: fields and versions, or every kind with contradictions="all"
    freshness_fallback: str  # "closest": an unreachable freshness floor is lowered to the freshest reachable
    hard: set              # pairs never selected together
    groups: list           # near-duplicate groups: at most one member each
    relevance: list
    freshness: list        # absolute e^(−λ·age), what the gate's φ reads
    valid: list
    gate: dict


def _versions_key(version: str):
    return int(version) if version.isdigit() else version


def text_signals(cands, reqs):
    """The library's signals of the texts alone (no fields, documents or versions)."""
    stripped = [{k: v for k, v in c.items() if k not in ("fields", "doc_id", "version")} for c in cands]
    return signals(ctxselect.pack(stripped, {"token_budget": reqs["token_budget"], "now": reqs["now"]}))


def raw_problem(cands, reqs, weights=None, *, hard_conflict_severity=1.0) -> RawProblem:
    """Build the selection problem from the raw dicts (see the module docstring)."""
    n = len(cands)
    w = {**WEIGHT_DEFAULTS, **(weights or {})}
    budget, now = reqs["token_budget"], reqs["now"]
    tokens = [c["tokens"] for c in cands]

    allowed = reqs.get("allowed_scopes")
    admissible = [allowed is None or c.get("scope") in allowed for c in cands]
    valid = [c.get("valid_from", -math.inf) <= now <= c.get("valid_to", math.inf) for c in cands]
    fits = [t <= budget for t in tokens]
    eligible = [a and v and f for a, v, f in zip(admissible, valid, fits)]
    superseded = [any(eligible[k] and c.get("doc_id") is not None and o.get("doc_id") == c["doc_id"]
                      and _versions_key(o["version"]) > _versions_key(c["version"])
                      for k, o in enumerate(cands) if "version" in o)
                  if "version" in c else False for c in cands]
    corroboration = prepare(cands, reqs, weights=weights, hard_conflict_severity=hard_conflict_severity)
    dropped = {k for k, why in corroboration.ineligible_reason.items() if why.startswith(CORROBORATION_REASONS)}
    # on_unresolved="keep_both" (the default): these free-text conflicts neither forbid nor cost
    free = {(c.i, c.j) for c in corroboration.unresolved if c.outcome == "both eligible"}
    eligible = [e and not s and k not in dropped for k, (e, s) in enumerate(zip(eligible, superseded))]

    # contradictions: fields and versions from the raw values, text ones from the texts' signals
    text = text_signals(cands, reqs)
    conflicts, version_pairs = {}, set()
    severities = reqs.get("conflict_fields", {})
    versions_conflict = reqs.get("version_conflicts", True)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = cands[i], cands[j]
            sev = 0.0
            for name, severity in severities.items():
                va, vb = a.get("fields", {}).get(name), b.get("fields", {}).get(name)
                if va is not None and vb is not None and va != vb:
                    sev = max(sev, severity)
            if (versions_conflict and a.get("doc_id") is not None and a.get("doc_id") == b.get("doc_id")
                    and "version" in a and "version" in b and a["version"] != b["version"]):
                sev = max(sev, reqs.get("version_conflict_severity", 1.0))
                version_pairs.add((i, j))
            if sev > 0:
                conflicts[(i, j)] = sev
    structural = set(conflicts)
    for (i, j), sev in text.contradictions.as_dict().items():
        if (i, j) not in free:
            conflicts[(i, j)] = max(conflicts.get((i, j), 0.0), sev)
    claimed = {(int(a), int(b)) for a, b, kind in zip(text.contradictions.i, text.contradictions.j,
                                                      text.contradictions.kind) if kind & 8}  # CLAIM, not drift
    everything = structural | claimed
    hard = {p for p, sev in conflicts.items() if sev >= hard_conflict_severity - 1e-12} | version_pairs

    # the objective
    ages = [max((now - c["timestamp"]) / DAY, 0.0) if "timestamp" in c else 0.0 for c in cands]
    freshness = [math.exp(-reqs.get("decay_lambda", 0.01) * age) if "timestamp" in c else 1.0
                 for c, age in zip(cands, ages)]
    top = max(freshness, default=0.0)
    rel_w = w["relative_freshness"]
    phi = [rel_w * f / top + (1 - rel_w) * f if top > 0 else f for f in freshness]
    value = [w["relevance"] * c["relevance"] ** w["sharpen"] * p - w["tokens"] * c["tokens"] / budget
             for c, p in zip(cands, phi)]
    penalty = {}
    for (i, j), s in text.redundancy.as_dict().items():
        penalty[(i, j)] = penalty.get((i, j), 0.0) + w["redundancy"] * s
    for pair, sev in conflicts.items():
        penalty[pair] = penalty.get(pair, 0.0) + w["contradiction"] * sev
    penalty = {p: x for p, x in penalty.items() if x > 0}

    max_per_source = reqs.get("max_per_source")
    sources = [c["source"] for c in cands]
    return RawProblem(
        n=n, ids=[c["id"] for c in cands], tokens=tokens, budget=budget, eligible=eligible, sources=sources,
        source_min=dict(reqs.get("required_sources", {})),
        source_max={s: max_per_source for s in set(sources)} if isinstance(max_per_source, int)
        else dict(max_per_source or {}),
        max_chunks=reqs.get("max_chunks"), aspects=dict(reqs.get("required_aspects", {})), coverage_weight=w["coverage"],
        covers=[set(c.get("aspects", [])) for c in cands], value=value, penalty=penalty, conflicts=conflicts,
        gate_conflicts=everything if reqs.get("contradictions") == "all" else structural, hard=hard,
        freshness_fallback=reqs.get("freshness_fallback", "drop"), groups=[[int(k) for k in g] for g in text.duplicate_groups()],
        relevance=[c["relevance"] for c in cands], freshness=freshness, valid=valid,
        gate={**GATE_DEFAULTS, **reqs.get("gate", {})},
    )


def all_subsets(n):
    codes = np.arange(2 ** n, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n)) & 1).astype(bool)


def _covered_weight(p: RawProblem, X):
    total = np.zeros(len(X))
    for aspect, weight in p.aspects.items():
        members = [k for k in range(p.n) if aspect in p.covers[k]]
        total += weight * X[:, members].any(axis=1)
    return total


def naive_objective(p: RawProblem, X):
    """The objective of each row of X (selections as boolean rows)."""
    total = X @ np.array(p.value, dtype=np.float64)
    if p.aspects:
        total = total + p.coverage_weight * _covered_weight(p, X) / sum(p.aspects.values())
    for (i, j), x in p.penalty.items():
        total = total - x * (X[:, i] & X[:, j])
    return total


def naive_sources_met(p: RawProblem, X):
    """Required chunks each row of X holds: Σ_s min(its chunks from s, the minimum of s)."""
    met = np.zeros(len(X), dtype=np.int64)
    for source, need in p.source_min.items():
        members = [k for k in range(p.n) if p.sources[k] == source]
        met += np.minimum(X[:, members].sum(axis=1), need)
    return met


def naive_phi(p: RawProblem, X):
    """Relevance-weighted freshness of each row of X (the plain mean when its relevances are 0)."""
    r, f = np.array(p.relevance), np.array(p.freshness)
    count = X.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(X @ r > 0, (X @ (r * f)) / (X @ r), (X @ f) / np.maximum(count, 1))


def naive_feasible(p: RawProblem, X, *, gate_on, sources_on, ceiling=None):
    """Which rows of X meet the hard constraints, and the gate and source minimums when asked
    (``ceiling``: the gate's utilization ceiling, which select() keeps whenever it enforces the
    gate; default: with the gate)."""
    need = p.source_min
    tokens = np.array(p.tokens, dtype=np.int64)
    ok = ~(X & ~np.array(p.eligible, dtype=bool)).any(axis=1)
    used = X.astype(np.int64) @ tokens
    ok &= used <= p.budget
    for i, j in p.hard:
        ok &= ~(X[:, i] & X[:, j])
    for group in p.groups:
        ok &= X[:, group].sum(axis=1) <= 1
    count = X.sum(axis=1)
    for source in set(p.sources) | set(p.source_min):
        members = X[:, [k for k in range(p.n) if p.sources[k] == source]].sum(axis=1)
        if source in p.source_max:
            ok &= members <= p.source_max[source]
        if sources_on:
            ok &= members >= need.get(source, 0)
    if p.max_chunks is not None:
        ok &= count <= p.max_chunks
    if (gate_on if ceiling is None else ceiling) and p.gate["max_token_utilization"] is not None:
        ok &= used <= math.floor(p.gate["max_token_utilization"] * p.budget + EPS)
    if gate_on:
        gate = p.gate
        ok &= used >= math.ceil(gate["min_token_utilization"] * p.budget - EPS)
        ok &= count >= 1
        if p.aspects:
            ok &= _covered_weight(p, X) >= gate["min_coverage"] * sum(p.aspects.values()) - EPS
        ok &= naive_phi(p, X) >= gate["min_freshness"] - EPS
        conflicting = np.zeros(len(X))
        for i, j in p.gate_conflicts:
            conflicting += X[:, i] & X[:, j]
        ok &= conflicting <= gate["max_contradiction_density"] * count * (count - 1) / 2 + EPS
        if gate["max_stale_risk"] is not None:
            stale = X @ (~np.array(p.valid, dtype=bool)).astype(np.int64)
            ok &= stale <= gate["max_stale_risk"] * count + EPS
    return ok


def brute_force(p: RawProblem, *, enforce_gate=True):
    """(best objective, tiers relaxed, (X, feasible rows, objectives)) over every subset, relaxing
    the gate, then the source minimums (at best effort: the most required chunks any subset holds,
    then the best objective among those), as select() does."""
    X = all_subsets(p.n)
    objective = naive_objective(p, X)
    tiers = [("gate", True, True), ("sources", False, True), ("none", False, False)]
    if not enforce_gate:
        tiers = tiers[1:]
    relaxed = []
    for name, gate_on, sources_on in tiers:
        ok = naive_feasible(p, X, gate_on=gate_on, sources_on=sources_on, ceiling=enforce_gate)
        if name == "none" and p.source_min:  # best effort: the most required chunks, then the best
            met = naive_sources_met(p, X)
            ok &= met == met[ok].max()
        if ok.any():
            return float(objective[ok].max()), relaxed, (X, ok, objective)
        if name == "gate" and p.freshness_fallback == "closest" and p.gate["min_freshness"] > 0:
            ok = naive_feasible(replace(p, gate={**p.gate, "min_freshness": 0.0}), X, gate_on=True, sources_on=True,
                                ceiling=enforce_gate)
            if ok.any():
                phi = naive_phi(p, X)
                ok &= phi >= phi[ok].max() - FRESHNESS_SLACK
                return float(objective[ok].max()), ["gate"], (X, ok, objective)
        relaxed.append("gate" if name == "gate" else "sources")
    raise AssertionError("the empty set is always feasible")


def mask_of(p: RawProblem, ids) -> np.ndarray:
    chosen = set(ids)
    return np.array([cid in chosen for cid in p.ids], dtype=bool)
