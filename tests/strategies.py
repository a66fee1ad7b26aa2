"""Every generator of test inputs: hypothesis strategies for candidates and requirements, and the
selection instances (every constraint kind) that the optimizer is checked on.

A selection instance is built by one function, :func:`build_instance`, from a source of draws:
hypothesis (:func:`selection_instances`, a composite strategy that draws the structure and the
texts, and shrinks them) or a seeded NumPy generator (:func:`random_instance`, for the
parametrized brute-force comparisons, which must be the same instances on every run).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

SOURCES = ["policy", "procedure", "status", "wiki"]
SCOPES = ["public", "support", "internal"]
ASPECTS = ["a", "b", "c", "d", "e"]
NOW = 1_790_000_000.0  # fixed reference time, epoch seconds
DAY = 86400.0


# -- candidates and requirements (quality, signals, list shapes) -----------------------------------

@st.composite
def candidate_lists(draw, min_size=0, max_size=12):
    """Candidate dicts with test-only keys the twins read: ``age_days`` (from ``timestamp``)."""
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        c = {
            "id": f"c{i}",
            "source": draw(st.sampled_from(SOURCES)),
            "tokens": draw(st.integers(1, 400)),
            "relevance": draw(st.floats(0, 1, allow_nan=False)),
            "aspects": draw(st.lists(st.sampled_from(ASPECTS), max_size=3, unique=True)),
            "fields": {k: v for k, v in {
                "x": draw(st.one_of(st.none(), st.integers(0, 2))),
                "y": draw(st.one_of(st.none(), st.sampled_from(["p", "q"]))),
            }.items() if v is not None},
        }
        if draw(st.booleans()):
            c["scope"] = draw(st.sampled_from(SCOPES))
        if draw(st.booleans()):
            age = draw(st.floats(0, 400, allow_nan=False))
            c["timestamp"] = NOW - age * DAY
            c["age_days"] = age
        if draw(st.booleans()):
            c["doc_id"] = draw(st.sampled_from(["d1", "d2"]))
            c["version"] = draw(st.sampled_from(["1", "2", "3"]))
        # a validity window: open, or bounded on either side, ending before, at or after NOW
        offsets = st.sampled_from([-30.0, -1.0, 0.0, 1.0, 30.0])
        start = draw(st.one_of(st.none(), offsets))
        end = draw(st.one_of(st.none(), offsets))
        if start is not None and end is not None and start > end:
            start, end = end, start
        if start is not None:
            c["valid_from"] = NOW + start * DAY
        if end is not None:
            c["valid_to"] = NOW + end * DAY
        out.append(c)
    return out


@st.composite
def requirement_dicts(draw):
    aspects = draw(st.dictionaries(st.sampled_from(ASPECTS), st.floats(0.05, 1.0), max_size=4))
    return {
        "token_budget": draw(st.integers(1, 3000)),
        "required_aspects": aspects,
        "required_sources": draw(st.dictionaries(st.sampled_from(SOURCES), st.integers(1, 3), max_size=3)),
        "allowed_scopes": draw(st.one_of(st.none(), st.lists(st.sampled_from(SCOPES), unique=True))),
        "conflict_fields": draw(st.dictionaries(st.sampled_from(["x", "y"]), st.floats(0.1, 1.0), max_size=2)),
        "decay_lambda": draw(st.floats(0, 0.05)),
        "now": NOW,
    }


def api_chunks(chunks):
    """Drop the test-only keys before handing chunks to the library."""
    return [{k: v for k, v in c.items() if k != "age_days"} for c in chunks]


# -- selection instances (optimizer, baselines, invariants) ---------------------------------------

SELECTION_SOURCES = ["policy", "procedure", "status"]
WORDS = ["refund", "window", "annual", "plan", "steps", "console", "status", "outage", "billing", "days"]
TEXT_WORDS = 12


class _SeededDraws:
    """Draws from a seeded NumPy generator: the same instance for the same seed."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def integer(self, low: int, high: int) -> int:  # both ends included
        return int(self.rng.integers(low, high + 1))

    def uniform(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, options):
        return options[int(self.rng.integers(0, len(options)))]

    def words(self, count: int) -> list[str]:
        return [str(w) for w in self.rng.choice(WORDS, count)]


class _HypothesisDraws:
    """The same draws through hypothesis, with the same odds (``chance`` draws a percentile), so the
    shapes are as varied as the seeded ones; shrinking goes towards the small and the likely."""

    def __init__(self, draw):
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def uniform(self, low: float, high: float) -> float:
        return self.draw(st.floats(low, high, allow_nan=False))

    def chance(self, p: float) -> bool:
        return self.draw(st.integers(0, 99)) < round(100 * p)

    def choice(self, options):
        return self.draw(st.sampled_from(options))

    def words(self, count: int) -> list[str]:
        return self.draw(st.lists(st.sampled_from(WORDS), min_size=count, max_size=count))


def build_instance(d, n_min: int = 1, n_max: int = 12, gate_loose: bool | None = None):
    """(candidates, requirements, weights) of one selection problem with every constraint kind:
    budget, scopes, validity windows, required aspects and sources, per-source and total caps,
    field conflicts, document versions, near-duplicate texts (shared base texts) and drift
    (a near-duplicate that adds a number), and the gate."""
    n = d.integer(n_min, n_max)
    base_texts = [" ".join(d.words(TEXT_WORDS)) for _ in range(max(1, n // 2))]
    cands = []
    for k in range(n):
        c = {
            "id": f"c{k}",
            "source": d.choice(SELECTION_SOURCES),
            "tokens": d.integer(10, 119),
            "relevance": d.integer(0, 9999) / 10000,
            "text": d.choice(base_texts) + (f" extra {k}" if d.chance(0.5) else ""),
            "aspects": [a for a in ("a", "b", "c") if d.chance(0.3)],
            "timestamp": NOW - d.uniform(0, 120) * DAY,
        }
        if d.chance(0.2):
            c["scope"] = "internal"
        elif d.chance(0.8):
            c["scope"] = "public"
        if d.chance(0.3):
            c["fields"] = {"window": d.integer(0, 2)}
        if d.chance(0.25):
            c["doc_id"] = "doc"
            c["version"] = str(d.integer(1, 3))
        if d.chance(0.1):
            c["valid_to"] = NOW - DAY
        cands.append(c)
    loose = d.chance(0.5) if gate_loose is None else gate_loose
    reqs = {
        "token_budget": d.integer(60, 399),
        "required_aspects": {"a": 0.5, "b": 0.3, "c": 0.2} if d.chance(0.6) else {},
        "required_sources": {s: d.integer(1, 2) for s in SELECTION_SOURCES if d.chance(0.3)},
        "allowed_scopes": ["public"],
        "conflict_fields": {"window": d.choice([0.5, 1.0])},
        "now": NOW,
        "decay_lambda": 0.01,
        "gate": {"min_coverage": 0.0 if loose else 0.5, "min_freshness": 0.0 if loose else 0.5,
                 "min_token_utilization": 0.0 if loose else 0.1,
                 "max_contradiction_density": 0.0 if d.chance(0.7) else 0.5},
    }
    if d.chance(0.3):
        reqs["max_per_source"] = d.integer(1, 2)
    if d.chance(0.3):
        reqs["max_chunks"] = d.integer(1, 4)
    weights = {"relevance": d.uniform(0.5, 2), "coverage": d.uniform(0, 2), "redundancy": d.uniform(0, 2),
               "contradiction": d.uniform(0, 2), "tokens": d.uniform(0, 0.5)}
    if d.chance(0.4):  # drawn last: the draws before it make the same instances as before
        reqs["freshness_fallback"] = "closest"
    return cands, reqs, weights


def random_instance(seed: int, n_min: int = 1, n_max: int = 12, gate_loose: bool | None = None):
    """The instance of ``seed`` (a fixed corpus for parametrized tests)."""
    return build_instance(_SeededDraws(seed), n_min, n_max, gate_loose)


@st.composite
def selection_instances(draw, n_min: int = 1, n_max: int = 12, gate_loose: bool | None = None):
    """Hypothesis strategy of (candidates, requirements, weights): the same shapes, drawn."""
    return build_instance(_HypothesisDraws(draw), n_min, n_max, gate_loose)


# -- contradictions in a context, and reshaped lists ------------------------------------------------

CLAIM_SENTENCE = "the storm outage in the northern district affected {} people"


@st.composite
def conflict_inputs(draw):
    """(chunks, requirements, mask) for contradiction counting: conflict fields with severities, doc
    versions, claim sentences that agree or disagree, scopes, and a selection mask."""
    n = draw(st.integers(0, 22))
    n_fields = draw(st.integers(0, 4))
    names = [f"f{k}" for k in range(n_fields)]
    severities = {name: draw(st.sampled_from([0.25, 0.5, 0.5, 1.0, 0.7])) for name in names}
    chunks = []
    for i in range(n):
        fields = {}
        for name in names:
            value = draw(st.one_of(st.none(), st.integers(0, 2)))
            if value is not None:
                fields[name] = value
        c = {"id": f"c{i}", "source": "s", "tokens": 5, "relevance": 0.5, "fields": fields,
             "scope": draw(st.sampled_from(["public", "public", "internal"]))}
        if draw(st.booleans()):
            c["doc_id"] = draw(st.sampled_from(["d1", "d2"]))
            if draw(st.integers(0, 3)):
                c["version"] = draw(st.sampled_from(["1", "2", "3"]))
        if draw(st.integers(0, 2)) == 0:
            c["text"] = CLAIM_SENTENCE.format(draw(st.sampled_from(["3,559", "10,000", "42"])))
        chunks.append(c)
    reqs = {"token_budget": 1000, "conflict_fields": severities, "allowed_scopes": ["public"],
            "version_conflicts": draw(st.booleans()),
            "version_conflict_severity": draw(st.sampled_from([1.0, 0.5, 0.25]))}
    mask = np.array([draw(st.booleans()) or i % 3 == 0 for i in range(n)], dtype=bool)
    return chunks, reqs, mask


@st.composite
def reshaped(draw, items):
    """``items`` with duplicates added, shuffled, and merged with a sub-list of itself."""
    items = list(items)
    if not items:
        return items
    dup = draw(st.lists(st.sampled_from(items), max_size=4))
    merged = items + dup + items[: draw(st.integers(0, len(items)))]
    return draw(st.permutations(merged))


def unit_rows(rng, n: int, d: int, zero=(), spread: bool = False) -> np.ndarray:
    """n float32 unit rows of d standard normal numbers (the rows ``zero`` all zero); ``spread``: the
    first quarter's components times a uniform number to the 8th (rows of one or two large components
    and many small, as the int8 route's steps meet them)."""
    x = rng.standard_normal((n, d))
    if spread:
        x[: n // 4] *= rng.random((n // 4, d)) ** 8
    x[list(zero)] = 0.0
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1.0)).astype(np.float32)
