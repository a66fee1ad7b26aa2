"""Synthetic candidate dumps, deterministic from a seed.

Each query gets a topic; its candidates are either useful evidence (``gold``: drawn from the
topic's vocabulary, with the topic's aspects, high-ish relevance) or distractors (other topics,
lower relevance on average, with overlap). Knobs add near-duplicates, field and version
conflicts, stale and inadmissible chunks, skewed sources and optional embeddings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ctxselect.model import validation as checks
from ctxselect.model.io import Query

__all__ = ["GeneratorConfig", "generate_queries"]

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "xe", "zi", "pu", "sa", "de", "fo", "gi", "ha", "je"]
DAY = 86_400.0
NOW = 1_790_000_000.0  # 2026-09-21, the generated dumps' reference time


@dataclass(frozen=True)
class GeneratorConfig:
    """Knobs of :func:`generate_queries` (every one validated)."""

    queries: int = 20
    candidates: int = 50
    words_mean: int = 80
    words_spread: float = 0.5
    sources: int = 4
    source_skew: float = 1.0
    required_sources: int = 2
    aspects: int = 4
    gold_share: float = 0.15
    duplicate_rate: float = 0.08
    conflict_rate: float = 0.08
    version_rate: float = 0.08
    stale_rate: float = 0.1
    inadmissible_rate: float = 0.05
    budget_factor: float = 1.5
    embedding_dim: int = 0
    planted_rate: float = 0.0
    planted_majority_rate: float = 0.0
    planted_true_copies: int = 2
    planted_favour_false: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("queries", "candidates", "words_mean", "sources", "planted_true_copies"):
            checks.integer(getattr(self, name), name, low=1)
        for name in ("required_sources", "aspects", "embedding_dim", "seed"):
            checks.integer(getattr(self, name), name, low=0)
        for name in ("gold_share", "duplicate_rate", "conflict_rate", "version_rate", "stale_rate",
                     "inadmissible_rate", "words_spread", "planted_rate", "planted_majority_rate",
                     "planted_favour_false"):
            checks.number(getattr(self, name), name, low=0.0, high=1.0)
        checks.number(self.source_skew, "source_skew", low=0.0)
        checks.number(self.budget_factor, "budget_factor", low=0.0, high=1e6, low_open=True)
        if self.required_sources > self.sources:
            raise checks.InputError(field="required_sources", expected=f"at most sources ({self.sources})",
                                    found=self.required_sources)


def _words(rng: np.random.Generator, count: int) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES, int(rng.integers(2, 4)))) for _ in range(count)]


def generate_queries(config: GeneratorConfig | None = None, **knobs) -> list[Query]:
    """Generate a synthetic dump (a list of :class:`~ctxselect.model.io.Query`).

    Parameters
    ----------
    config : GeneratorConfig, optional
    **knobs
        Overrides of the config's fields (``queries=5, candidates=200, seed=3`` ...).
    """
    config = GeneratorConfig(**{**(asdict(config) if config else {}), **knobs})
    rng = np.random.default_rng(config.seed)
    vocabulary = _words(rng, 3000)
    sources = [f"source{k}" for k in range(config.sources)]
    source_p = 1.0 / np.arange(1, config.sources + 1) ** config.source_skew
    source_p /= source_p.sum()
    return [_query(rng, config, q, vocabulary, sources, source_p) for q in range(config.queries)]


def _text(rng, topic_words, vocabulary, n_words, topical_share, number):
    """Topical and background words; half the texts state a value somewhere inside them."""
    topical = rng.random(n_words) < topical_share
    words = np.where(topical, rng.choice(topic_words, n_words), rng.choice(vocabulary, n_words)).tolist()
    if rng.random() < 0.5:
        words.insert(int(rng.integers(0, n_words + 1)), f"value {number}")
    return " ".join(words)


def _query(rng, config: GeneratorConfig, q: int, vocabulary, sources, source_p) -> Query:
    from ctxselect.model.candidate import Candidate
    from ctxselect.model.requirements import Requirements

    n = config.candidates
    topic = rng.choice(vocabulary, 40, replace=False)
    aspects = [f"aspect{k}" for k in range(config.aspects)]
    n_gold = max(1, int(round(n * config.gold_share)))
    is_gold = np.zeros(n, dtype=bool)
    is_gold[rng.choice(n, n_gold, replace=False)] = True
    lengths = np.maximum(5, rng.normal(config.words_mean, config.words_mean * config.words_spread, n)).astype(int)
    relevance = np.clip(np.where(is_gold, rng.beta(5, 2, n), rng.beta(2, 4, n)), 0, 1)
    age_days = rng.exponential(60, n)
    topic_vectors = rng.normal(size=(8, max(config.embedding_dim, 1)))
    cands = []
    for i in range(n):
        source = str(rng.choice(sources, p=source_p))
        text = _text(rng, topic, vocabulary, int(lengths[i]), 0.6 if is_gold[i] else 0.15, int(rng.integers(1, 1000)))
        c = {
            "id": f"q{q}-c{i}", "source": source, "text": text, "tokens": int(np.ceil(lengths[i] * 1.3)),
            "relevance": round(float(relevance[i]), 4), "rank": 0,
            "timestamp": NOW - float(age_days[i]) * DAY, "scope": "public",
            "aspects": [a for a in aspects if rng.random() < (0.5 if is_gold[i] else 0.1)],
        }
        if rng.random() < config.stale_rate:
            c["valid_to"] = NOW - float(rng.uniform(1, 30)) * DAY
        if rng.random() < config.inadmissible_rate:
            c["scope"] = "internal"
        if config.embedding_dim:
            base = topic_vectors[int(rng.integers(0, 8))] * (1.0 if is_gold[i] else 0.3)
            c["embedding"] = np.round(base + rng.normal(size=config.embedding_dim), 4).tolist()
        cands.append(c)
    for i in range(n):  # near-duplicates: edited copies of another chunk
        if rng.random() < config.duplicate_rate:
            src = cands[int(rng.integers(0, n))]
            words = src["text"].split()
            for _ in range(max(1, len(words) // 40)):
                words[int(rng.integers(0, len(words)))] = str(rng.choice(vocabulary))
            cands[i].update(text=" ".join(words), tokens=src["tokens"], aspects=list(src["aspects"]))
            if "embedding" in src:  # a near-copy of the text is a near-copy in embedding space too
                noise = rng.normal(scale=0.05, size=config.embedding_dim)
                cands[i]["embedding"] = np.round(np.asarray(src["embedding"]) + noise, 4).tolist()
    for i in range(n):
        if rng.random() < config.conflict_rate:
            cands[i]["fields"] = {"window_days": int(rng.choice([14, 30, 60]))}
    docs = max(1, int(n * config.version_rate / 2))
    for i in np.flatnonzero(rng.random(n) < config.version_rate).tolist():
        cands[i]["doc_id"] = f"q{q}-doc{int(rng.integers(0, docs))}"
        cands[i]["version"] = str(int(rng.integers(1, 4)))
    gold_ids = [cands[i]["id"] for i in np.flatnonzero(is_gold)]
    planted = (_plant_conflict(rng, config, q, cands, topic, vocabulary, sources, topic_vectors)
               if rng.random() < config.planted_rate else None)
    if planted:
        gold_ids += planted["true"]
    relevance = np.array([c["relevance"] for c in cands])
    order = np.argsort(-relevance, kind="stable")
    for rank, i in enumerate(order.tolist(), start=1):
        cands[i]["rank"] = rank
    gold_tokens = sum(c["tokens"] for c in cands if c["id"] in set(gold_ids))
    budget = max(1, int(np.ceil(config.budget_factor * gold_tokens)))
    present = sorted({c["source"] for c in cands})
    required = {s: 1 for s in sources[: config.required_sources] if s in present}
    reqs = Requirements.from_dict({
        "token_budget": budget,
        "required_aspects": aspects,
        "required_sources": required,
        "allowed_scopes": ["public"],
        "conflict_fields": ["window_days"],
        "now": NOW,
        "decay_lambda": 0.005,
        "min_freshness": 0.5,
    })
    return Query(
        query_id=f"gen-{config.seed}-{q}", query=" ".join(topic[:6].tolist()), requirements=reqs,
        candidates=[Candidate.from_dict(c) for c in cands],
        gold=gold_ids, selected=None,
        extra={"meta": {"generator": asdict(config), **({"planted": planted} if planted else {})}},
    )


_UNITS = ["people", "days", "percent", "units", "miles", "votes"]


def _plant_conflict(rng, config: GeneratorConfig, q: int, cands: list, topic, vocabulary, sources,
                    topic_vectors) -> dict:
    """Add chunks that state one fact: ``planted_true_copies`` with the true value, from distinct
    documents and sources, and one (or, as the majority, copies + 1) with an edited value. The
    false side's relevance is as high as the truth's, and higher with ``planted_favour_false``.
    With ``embedding_dim`` they get topical embeddings like every other chunk (a dump's candidates
    have embeddings all or none)."""
    subject = " ".join(rng.choice(topic, 3).tolist())
    unit = str(rng.choice(_UNITS))
    truth = int(rng.integers(100, 9000))
    lie = truth * int(rng.integers(2, 5)) + int(rng.integers(1, 99))
    majority_false = rng.random() < config.planted_majority_rate
    n_true = config.planted_true_copies if not majority_false else 1
    n_false = 1 if not majority_false else config.planted_true_copies + 1
    relevance = round(float(rng.uniform(0.6, 0.9)), 4)
    favour = rng.random() < config.planted_favour_false
    out = {"true": [], "false": [], "value_true": truth, "value_false": lie, "majority": "false" if majority_false else "true"}
    for side, count, value in (("true", n_true, truth), ("false", n_false, lie)):
        for k in range(count):
            filler = " ".join(rng.choice(vocabulary, 25).tolist())
            text = (f"{' '.join(rng.choice(topic, 6).tolist())}. The official count for the {subject} reached "
                    f"{value:,} {unit} according to the latest figures. {filler}")
            cid = f"q{q}-fact-{side}{k}"
            rel = relevance + (0.05 if side == "false" and favour else 0.0)
            cands.append({
                "id": cid, "source": str(sources[(k + (0 if side == "true" else 1)) % len(sources)]),
                "text": text, "tokens": int(np.ceil(len(text.split()) * 1.3)), "relevance": min(1.0, rel),
                "rank": 0, "timestamp": NOW - float(rng.uniform(1, 30)) * DAY, "scope": "public",
                "doc_id": f"q{q}-factdoc-{side}{k}", "aspects": [],
            })
            if config.embedding_dim:
                base = topic_vectors[int(rng.integers(0, len(topic_vectors)))]
                cands[-1]["embedding"] = np.round(base + rng.normal(size=config.embedding_dim), 4).tolist()
            out[side].append(cid)
    return out
