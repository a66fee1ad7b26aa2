"""Plain-Python reference twins of the quality vector (article 000's formulas, bugs fixed)."""

import math


def naive_conflicts(chunks, conflict_fields, version_severity=1.0):
    """{(i, j): severity} for every conflicting pair, counted once (i < j)."""
    out = {}
    for i in range(len(chunks)):
        for j in range(i + 1, len(chunks)):
            a, b = chunks[i], chunks[j]
            sev = 0.0
            for name, weight in conflict_fields.items():
                va, vb = a.get("fields", {}).get(name), b.get("fields", {}).get(name)
                if va is not None and vb is not None and (type(va) is str, va) != (type(vb) is str, vb):
                    sev = max(sev, weight)
            if (a.get("doc_id") is not None and a.get("doc_id") == b.get("doc_id")
                    and a.get("version") is not None and b.get("version") is not None
                    and a["version"] != b["version"]):
                sev = max(sev, version_severity)
            if sev > 0:
                out[(i, j)] = sev
    return out


def naive_metrics(chunks, reqs):
    """The ten metrics for chunks given as dicts with tokens, relevance, source, scope, aspects,
    fields, doc_id, version, (optional) age_days and valid_from / valid_to (epoch seconds); reqs
    uses the dump's keys and must give ``now`` (epoch seconds)."""
    n = len(chunks)
    aspects = reqs.get("required_aspects", {})
    covered = {a for c in chunks for a in c.get("aspects", [])}
    coverage = sum(1 for a in aspects if a in covered) / len(aspects) if aspects else 1.0
    weighted = (sum(w for a, w in aspects.items() if a in covered) / sum(aspects.values())
                if aspects else 1.0)
    used = sum(c["tokens"] for c in chunks)
    tau = used / reqs["token_budget"]
    risk = 0.0 if 0.10 - 1e-9 <= tau <= 0.90 + 1e-9 else 1.0
    sources = reqs.get("required_sources", {})
    starved = [s for s, m in sources.items() if sum(c["source"] == s for c in chunks) < m]
    delta = len(starved) / len(sources) if sources else 0.0
    pairs = naive_conflicts(chunks, reqs.get("conflict_fields", {}))
    total = n * (n - 1) / 2
    kappa = len(pairs) / total if total else 0.0
    kappa_w = sum(pairs.values()) / total if total else 0.0
    fresh = [math.exp(-reqs.get("decay_lambda", 0.01) * c.get("age_days", 0.0)) for c in chunks]
    rel = [c["relevance"] for c in chunks]
    if n == 0:
        phi = 0.0
    elif sum(rel) > 0:
        phi = sum(r * f for r, f in zip(rel, fresh)) / sum(rel)
    else:
        phi = sum(fresh) / n
    now = reqs["now"]
    valid = [c.get("valid_from", -math.inf) <= now <= c.get("valid_to", math.inf) for c in chunks]
    stale = 1.0 - sum(valid) / n if n else 0.0
    allowed = reqs.get("allowed_scopes")
    admissible = n if allowed is None else sum(c.get("scope") in allowed for c in chunks)
    pi = admissible / n if n else 0.0
    return {"coverage": coverage, "coverage_weighted": weighted, "token_utilization": tau,
            "utilization_risk": risk, "source_starvation": delta, "contradiction_density": kappa,
            "contradiction_density_weighted": kappa_w, "freshness": phi, "stale_risk": stale,
            "policy_admissibility": pi}
