"""Random selection instances with every constraint kind."""

import numpy as np

SOURCES = ["policy", "procedure", "status"]
WORDS = ["refund", "window", "annual", "plan", "steps", "console", "status", "outage", "billing", "days"]
NOW = 1_790_000_000.0


def random_instance(seed, n_max=12, gate_loose=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, n_max + 1))
    base_texts = [" ".join(rng.choice(WORDS, 12)) for _ in range(max(1, n // 2))]
    cands = []
    for k in range(n):
        c = {
            "id": f"c{k}",
            "source": str(rng.choice(SOURCES)),
            "tokens": int(rng.integers(10, 120)),
            "relevance": float(np.round(rng.random(), 4)),
            "text": base_texts[int(rng.integers(0, len(base_texts)))] + (f" extra {k}" if rng.random() < 0.5 else ""),
            "aspects": [a for a in ("a", "b", "c") if rng.random() < 0.3],
            "timestamp": NOW - float(rng.uniform(0, 120)) * 86400,
        }
        if rng.random() < 0.2:
            c["scope"] = "internal"
        elif rng.random() < 0.8:
            c["scope"] = "public"
        if rng.random() < 0.3:
            c["fields"] = {"window": int(rng.integers(0, 3))}
        if rng.random() < 0.25:
            c["doc_id"] = "doc"
            c["version"] = str(int(rng.integers(1, 4)))
        if rng.random() < 0.1:
            c["valid_to"] = NOW - 86400
        cands.append(c)
    loose = rng.random() < 0.5 if gate_loose is None else gate_loose
    reqs = {
        "token_budget": int(rng.integers(60, 400)),
        "required_aspects": {"a": 0.5, "b": 0.3, "c": 0.2} if rng.random() < 0.6 else {},
        "required_sources": {s: int(rng.integers(1, 3)) for s in SOURCES if rng.random() < 0.3},
        "allowed_scopes": ["public"],
        "conflict_fields": {"window": float(rng.choice([0.5, 1.0]))},
        "now": NOW,
        "decay_lambda": 0.01,
        "gate": {"min_coverage": 0.0 if loose else 0.5, "min_freshness": 0.0 if loose else 0.5,
                 "min_token_utilization": 0.0 if loose else 0.1,
                 "max_contradiction_density": 0.0 if rng.random() < 0.7 else 0.5},
    }
    if rng.random() < 0.3:
        reqs["max_per_source"] = int(rng.integers(1, 3))
    if rng.random() < 0.3:
        reqs["max_chunks"] = int(rng.integers(1, 5))
    weights = {"relevance": float(rng.uniform(0.5, 2)), "coverage": float(rng.uniform(0, 2)),
               "redundancy": float(rng.uniform(0, 2)), "contradiction": float(rng.uniform(0, 2)),
               "tokens": float(rng.uniform(0, 0.5))}
    return cands, reqs, weights
