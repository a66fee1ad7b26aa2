"""Contradictions counted in a given context: exact counts against a dense twin, and the memory and
work bounds of the report layer (issue 11, item 4).

Each bound test fails on the old code for an algorithmic reason (an n x n matrix, claims without a
cap), measured by allocated memory or by counts, never by wall-clock time. The counting of
conflicting pairs is checked against a dense O(n²) twin (the old implementation) on random inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.features.contradictions import (
    ConflictPair,
    claim_reason,
    conflict_pairs,
    conflict_summary,
    pair_conflicts,
)
from ctxselect.features.contradictions import context as conflicts
from ctxselect.features.contradictions.fields import some_differ
from ctxselect.packing import NO_CODE, pack
from ctxselect.text.claims import find_claim_conflicts
from tests.helpers import MiB, peak_memory
from tests.strategies import conflict_inputs

# -- the dense twin: the old all-pairs implementation ---------------------------------------------

def _dense_matrix(codes: np.ndarray) -> np.ndarray:
    present = codes != NO_CODE
    differ = (codes[:, None] != codes[None, :]) & present[:, None] & present[None, :]
    return np.triu(differ, k=1)


def dense_conflict_pairs(packed, mask=None, claim_severity=1.0) -> list[ConflictPair]:
    """Every conflicting pair by n x n boolean matrices (what conflict_pairs did before)."""
    index = np.arange(packed.n) if mask is None else np.flatnonzero(mask)
    if len(index) < 2:
        return []
    hits = np.zeros((len(index), len(index)), dtype=bool)
    for f in range(len(packed.field_names)):
        hits |= _dense_matrix(packed.field_values[index, f])
    if packed.requirements.version_conflicts:
        doc = packed.doc[index]
        same_doc = (doc[:, None] == doc[None, :]) & (doc[:, None] != NO_CODE)
        hits |= same_doc & _dense_matrix(packed.version[index])
    found = {}
    for a, b in zip(*np.nonzero(hits)):
        i, j = int(index[a]), int(index[b])
        found[(i, j)] = pair_conflicts(packed, i, j)
    disagreements, _ = find_claim_conflicts([packed.candidates[k].text for k in index.tolist()])
    for (a, b), pairs in disagreements.items():
        i, j = int(index[a]), int(index[b])
        found.setdefault((i, j), []).extend((claim_reason(packed, i, j, ca, cb), claim_severity) for ca, cb in pairs)
    return [ConflictPair(packed.ids[i], packed.ids[j], max(s for _, s in why), tuple(w for w, _ in why))
            for (i, j), why in sorted(found.items())]


@settings(max_examples=300, deadline=None)
@given(conflict_inputs(), st.integers(0, 6))
def test_counts_match_the_dense_twin(case, limit):
    chunks, reqs, mask = case
    packed = pack(chunks, reqs)
    for m in (None, mask):
        dense = dense_conflict_pairs(packed, m)
        assert conflict_pairs(packed, m) == dense
        summary = conflict_summary(packed, m, limit=limit)
        assert summary.count == len(dense)
        assert summary.severity_sum == pytest.approx(sum(p.severity for p in dense), abs=1e-9)
        assert summary.pairs == dense[:limit]


@settings(max_examples=150, deadline=None)
@given(conflict_inputs())
def test_blocked_fallback_matches_the_pattern_count(case):
    chunks, reqs, _ = case
    packed = pack(chunks, reqs)
    index = np.arange(packed.n)
    reasons = conflicts._structural_reasons(packed, index)
    levels, counts = conflicts._level_counts(reasons, packed.n)
    blocked = conflicts._blocked_levels(reasons, packed.n, levels)
    assert counts.tolist() == blocked.tolist()


def test_many_presence_patterns_fall_back_to_the_blocked_count(monkeypatch):
    rng = np.random.default_rng(7)
    names = [f"f{k}" for k in range(8)]
    chunks = [{"id": f"c{i}", "source": "s", "tokens": 5, "relevance": 0.5,
               "fields": {name: int(rng.integers(0, 3)) for name in names if rng.random() < 0.5}}
              for i in range(300)]
    severities = {name: 0.1 * (k + 1) for k, name in enumerate(names)}
    packed = pack(chunks, {"token_budget": 100, "conflict_fields": severities})
    dense = dense_conflict_pairs(packed)
    called = []
    original = conflicts._blocked_levels
    monkeypatch.setattr(conflicts, "_blocked_levels", lambda *a: called.append(1) or original(*a))
    summary = conflict_summary(packed, limit=3)
    assert called  # 8 fields carried in varying combinations: more than PATTERN_LIMIT patterns
    assert summary.count == len(dense)
    assert summary.severity_sum == pytest.approx(sum(p.severity for p in dense))


# -- memory bounds ------------------------------------------------------------------------------

def test_conflicts_among_60000_chunks_allocate_no_n_by_n_matrix():
    """60,000 chunks with distinct values of one field: 1.8e9 conflicting pairs, counted exactly
    (the old dense matrices needed 3.6 GB each)."""
    n = 60_000
    chunks = [{"id": f"c{i}", "source": "s", "tokens": 1, "relevance": 0.5, "fields": {"k": i},
               "doc_id": f"d{i % 50}", "version": str(i % 3)} for i in range(n)]
    packed = pack(chunks, {"token_budget": 10 * n, "conflict_fields": {"k": 0.5}})
    summary, peak = peak_memory(lambda: conflict_summary(packed))
    every = n * (n - 1) // 2
    assert summary.count == every
    same_doc_other_version = 50 * (1200 * 1199 // 2 - 3 * (400 * 399 // 2))
    assert summary.severity_sum == pytest.approx(0.5 * every + 0.5 * same_doc_other_version)
    assert len(summary.pairs) == conflicts.MAX_LISTED_PAIRS
    assert peak < 64 * MiB


def test_inspect_report_lists_at_most_the_cap_and_counts_all():
    n = 3000
    chunks = [{"id": f"c{i}", "source": "s", "tokens": 1, "relevance": 0.5, "fields": {"k": i % 7}}
              for i in range(n)]
    report = ctxselect.inspect(chunks, {"token_budget": n, "conflict_fields": ["k"]})
    expected = n * (n - 1) // 2 - sum(c * (c - 1) // 2 for c in np.bincount(np.arange(n) % 7).tolist())
    assert report.conflicting_pair_count == expected
    assert len(report.conflicting_pairs) == conflicts.MAX_LISTED_PAIRS
    assert report.to_dict()["conflicting_pair_count"] == expected
    assert report.metrics["contradiction_density"] == pytest.approx(expected / (n * (n - 1) / 2))
    message = next(f.message for f in report.failures if f.condition == "max_contradiction_density")
    assert f"{expected} conflicting pair(s)" in message and f"and {expected - 3} more" in message


# -- which reasons a set of chunks can conflict on, against counting distinct codes ----------------

def _reference_reasons(packed, index):
    """The reasons as first written: distinct codes counted by ``np.unique``."""
    out = []
    for f in range(len(packed.field_names)):
        value = packed.field_values[index, f].astype(np.int64)
        if len(np.unique(value[value != NO_CODE])) >= 2:
            out.append((f, value.tolist()))
    if packed.requirements.version_conflicts:
        doc, version = packed.doc[index].astype(np.int64), packed.version[index].astype(np.int64)
        present = (doc != NO_CODE) & (version != NO_CODE)
        pairs = np.unique(np.stack([doc[present], version[present]]), axis=1)
        if pairs.shape[1] > len(np.unique(pairs[0])):
            out.append(("version", version.tolist()))
    return out


@settings(max_examples=300, deadline=None)
@given(conflict_inputs())
def test_structural_reasons_match_distinct_code_counts(case):
    chunks, reqs, mask = case
    packed = pack(chunks, reqs)
    for index in (np.arange(packed.n), np.flatnonzero(mask)):
        got = conflicts._structural_reasons(packed, index)
        want = _reference_reasons(packed, index)
        assert [r.value.tolist() for r in got] == [v for _, v in want]
        assert [r.group is not None for r in got] == [k == "version" for k, _ in want]


@pytest.mark.parametrize("seed", range(20))
def test_some_differ_matches_np_unique(seed):
    rng = np.random.default_rng(seed)
    for size in (0, 1, 2, 3, 7, 40, 300):
        codes = int(rng.integers(1, 5))
        value = rng.integers(0, codes, size)
        group = rng.integers(0, int(rng.integers(1, 6)), size)
        assert some_differ(value) == (len(np.unique(value)) >= 2)
        distinct_pairs = np.unique(np.stack([group, value]), axis=1).shape[1]
        assert some_differ(value, group) == (distinct_pairs > len(np.unique(group)))


@pytest.mark.parametrize("seed", range(8))
def test_the_report_reading_the_signals_claim_prefilter_finds_the_same_conflicts(seed):
    """select()'s report joins the selected chunks' claims where the signals' prefilter over every
    candidate says one may join (Signals.claim_readable) instead of running it again over them: a
    text whose claims join nothing among all the candidates joins nothing among a few."""
    import random

    from tests.text.claim_texts import seeded_fact_text

    rng = random.Random(seed)
    texts = [seeded_fact_text(rng, rng.randint(1, 4)) for _ in range(80)]
    packed = pack([{"id": f"c{k}", "text": t, "source": "s", "tokens": 5, "relevance": 0.5,
                    **({"title": f"page {k % 2}"} if k % 5 == 0 else {})} for k, t in enumerate(texts)],
                  {"token_budget": 1000})
    readable = ctxselect.signals(packed).claim_readable
    assert readable is not None and 0 < readable.sum() < len(texts)  # precondition: the prefilter kept some
    conflicting = sorted(find_claim_conflicts(texts)[0])
    found = 0
    for trial in range(16):
        mask = np.array([rng.random() < 0.3 for _ in texts])
        for i, j in conflicting[trial % max(len(conflicting), 1):][:2]:
            mask[i] = mask[j] = True
        plain = conflict_summary(packed, mask)
        assert conflict_summary(packed, mask, claim_readable=readable) == plain
        found += plain.claim_count
    assert found  # precondition: claim conflicts were compared


def test_a_claim_prefilter_of_another_length_is_refused():
    with pytest.raises(ctxselect.InputError, match="read"):
        find_claim_conflicts(["the storm outage in the district affected 3 people"] * 3, read=np.ones(2, bool))
