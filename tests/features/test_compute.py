"""signals(): contradictions, supersession, drift, clusters, thresholds, determinism."""

import numpy as np
import pytest
from hypothesis import given, settings

import ctxselect
from ctxselect.features.compute import signals
from ctxselect.features.contradictions import version_pairs
from ctxselect.features.contradictions.fields import field_pairs, union_contradictions
from ctxselect.features.pairs import ConflictKind
from ctxselect.packing import pack
from tests.helpers import MiB, peak_memory
from tests.naive.quality import naive_conflicts
from tests.strategies import api_chunks, candidate_lists, requirement_dicts


def cand(cid, text="", **kw):
    base = {"id": cid, "source": "s", "tokens": 10, "relevance": 0.5, "text": text or f"text {cid}"}
    base.update(kw)
    return base


@settings(max_examples=100, deadline=None)
@given(candidate_lists(), requirement_dicts())
def test_field_and_version_contradictions_match_twin(chunks, reqs):
    """Field and version conflicts stay per-value codes; their pairs on request (``field_pairs``,
    ``version_pairs``) complete the twin's list."""
    packed = ctxselect.pack(api_chunks(chunks), reqs)
    listed = signals(packed, similarity="none").contradictions
    assert not (listed.kind & (ConflictKind.FIELD | ConflictKind.VERSION)).any()
    fields = field_pairs(packed, range(len(packed.field_names)))
    assert (fields.kind == ConflictKind.FIELD).all()
    versions = version_pairs(packed)
    assert (versions.kind == ConflictKind.VERSION).all()
    got = union_contradictions(packed.n, union_contradictions(packed.n, listed, versions), fields).as_dict()
    want = naive_conflicts(chunks, reqs["conflict_fields"])
    assert got == pytest.approx(want)


def test_version_conflict_names_the_older():
    packed = ctxselect.pack([
        cand("new", doc_id="d", version="v10", timestamp="2024-01-01"),
        cand("old", doc_id="d", version="v9", timestamp="2025-01-01"),  # natural order beats time
        cand("x1", doc_id="e", version="draft", timestamp="2024-01-01"),
        cand("x2", doc_id="e", version="final", timestamp="2024-06-01"),
        cand("u1", doc_id="f", version="a"), cand("u2", doc_id="f", version="b"),
    ], {"token_budget": 100})
    assert not len(signals(packed, similarity="none").contradictions)  # codes, not pairs
    c = version_pairs(packed)
    superseded = {(packed.ids[i], packed.ids[j]): (packed.ids[s] if s >= 0 else None)
                  for i, j, s in zip(c.i, c.j, c.superseded)}
    assert superseded[("new", "old")] == "old"
    assert superseded[("x1", "x2")] == "x1"  # alphabetical "draft" < "final"
    assert superseded[("u1", "u2")] == "u1"
    assert all(k == ConflictKind.VERSION for k in c.kind)


def test_drift_and_duplicate_clusters():
    body = ("The storm power outage in the northern district affected {n} people on March 3, 2021, and "
            "crews restored power to most homes within two days according to the utility company report. "
            "Engineers replaced damaged transformers along the coastal road, inspected every substation "
            "in the valley, and published a detailed timeline of the repairs for residents and local "
            "businesses who asked for compensation after the long weekend without electricity")
    packed = ctxselect.pack([
        cand("a", body.format(n="3,559")),
        cand("b", body.format(n="10,000")),
        cand("c", body.format(n="3559")),       # same number, other formatting: no drift
        cand("d", "A completely different chunk about refund policies and annual plans for customers"),
    ], {"token_budget": 100})
    s = signals(packed)
    assert s.similarity == "minhash"
    pairs = s.contradictions.as_dict()
    assert pairs == {(0, 1): 1.0, (1, 2): 1.0}  # drift (0.5) and a claim conflict (1.0): the highest
    assert all(k & ConflictKind.CLAIM for k in s.contradictions.kind)
    assert any(k & ConflictKind.DRIFT for k in s.contradictions.kind)
    assert [(a.raw, b.raw) for a, b in s.claim_conflicts[(0, 1)]] == [("3,559 people", "10,000 people")]
    assert (0, 2) in s.claim_agreements  # "3,559" and "3559" are the same number
    no_claims = signals(packed, claims=False).contradictions.as_dict()
    assert no_claims == {(0, 1): 0.5, (1, 2): 0.5}
    assert s.clusters.tolist() == [0, 0, 0, 1]
    assert [g.tolist() for g in s.duplicate_groups()] == [[0, 1, 2]]
    assert len(s.redundancy) == 3 and s.duplicate.all()


def test_cosine_path_and_thresholds():
    emb = [[1, 0, 0], [0.99, 0.1, 0], [0.7, 0.7, 0], [0, 0, 1]]
    packed = ctxselect.pack([cand(str(k), embedding=v) for k, v in enumerate(emb)], {"token_budget": 9})
    s = signals(packed)
    assert s.similarity == "cosine"
    assert list(s.redundancy.as_dict()) == [(0, 1)]
    assert s.duplicate.tolist() == [True]
    loose = signals(packed, redundancy_threshold=0.6, duplicate_threshold=0.999)
    assert list(loose.redundancy.as_dict()) == [(0, 1), (0, 2), (1, 2)]
    assert not loose.duplicate.any()
    assert loose.clusters.tolist() == [0, 1, 2, 3]


def test_text_duplicate_needs_rapidfuzz_confirmation():
    words = " ".join(f"w{k}" for k in range(200))
    packed = ctxselect.pack([cand("a", words), cand("b", words + " tail")], {"token_budget": 9})
    assert signals(packed).duplicate.tolist() == [True]
    assert signals(packed, confirm_ratio=100.0).duplicate.tolist() == [False]


def test_edges_and_determinism():
    for cands in ([], [cand("solo")]):
        s = signals(ctxselect.pack(cands, {"token_budget": 9}))
        assert len(s.redundancy) == 0 and len(s.contradictions) == 0
        assert s.clusters.tolist() == list(range(len(cands)))
    no_text = ctxselect.pack([{"id": "a", "source": "s", "tokens": 3, "relevance": 0.1}] * 1, {"token_budget": 9})
    assert signals(no_text).similarity == "none"
    packed = ctxselect.pack([cand(str(k), "same words in every chunk here") for k in range(30)],
                            {"token_budget": 9})
    a, b = signals(packed), signals(packed)
    assert a.redundancy.as_dict() == b.redundancy.as_dict() and len(a.redundancy) == 435
    assert a.clusters.tolist() == [0] * 30


def test_bad_arguments():
    packed = ctxselect.pack([cand("a")], {"token_budget": 9})
    with pytest.raises(ctxselect.InputError, match="field 'similarity': expected one of auto, cosine"):
        signals(packed, similarity="jaccard")
    with pytest.raises(ctxselect.InputError, match="embeddings on the candidates"):
        signals(packed, similarity="cosine")
    with pytest.raises(ctxselect.InputError, match="redundancy_threshold"):
        signals(packed, redundancy_threshold=1.5)


@pytest.mark.parametrize("option, value, expected", [
    ("claim_severity", float("nan"), "a number in [0, 1]"), ("claim_severity", -1.0, "a number in [0, 1]"),
    ("claim_severity", "x", "a number in [0, 1]"), ("claim_severity", None, "a number in [0, 1]"),
    ("confirm_ratio", "x", "a number in [0, 100]"), ("confirm_ratio", None, "a number in [0, 100]"),
    ("confirm_ratio", float("nan"), "a number in [0, 100]"), ("confirm_ratio", -1, "a number in [0, 100]"),
    ("confirm_ratio", 1e308, "a number in [0, 100]"),
    ("claims", "false", "true or false"), ("claims", 1, "true or false"), ("claims", None, "true or false"),
    ("zero_outside_window", 10**20, "true or false"), ("zero_outside_window", "no", "true or false"),
])
def test_every_option_is_checked(option, value, expected):
    """claim_severity NaN or -1 silently turned claim conflicts off ("x" crashed in float()),
    confirm_ratio "x" or None crashed in NumPy, claims and zero_outside_window took any value
    (10**20: OverflowError in the freshness kernel): each is now an InputError naming the option."""
    body = "The outage affected {n} people in the northern district on Tuesday evening last week"
    packed = ctxselect.pack([cand("a", body.format(n="3,559")), cand("b", body.format(n="10,000"))],
                            {"token_budget": 100})
    with pytest.raises(ctxselect.InputError) as err:
        signals(packed, **{option: value})
    assert f"field '{option}'" in str(err.value) and expected in str(err.value)
    with pytest.raises(ctxselect.InputError, match=f"field 'signal_options.{option}'|field '{option}'"):
        ctxselect.select([{"id": "a", "tokens": 5, "relevance": 0.5, "text": body.format(n="1")}],
                         {"token_budget": 50}, signal_options={option: value})


@pytest.mark.parametrize("given", [None, [cand("a")], {"token_budget": 9}, "packed"])
def test_anything_but_packed_candidates_is_an_input_error(given):
    """signals([...]) raised AttributeError ('list' object has no attribute 'n')."""
    with pytest.raises(ctxselect.InputError, match="field 'packed': expected PackedCandidates from ctxselect.pack"):
        signals(given)


def test_freshness_outside_window():
    packed = ctxselect.pack([cand("a", timestamp="2026-10-31", valid_to="2026-10-31T12:00:00Z")],
                            {"token_budget": 9, "now": "2026-11-01"})
    assert signals(packed).freshness[0] == pytest.approx(np.exp(-0.01))
    assert signals(packed, zero_outside_window=True).freshness[0] == 0.0


def test_identical_chunks_give_linear_redundancy_pairs():
    n = 4000
    text = ("The support desk handles refund requests within 14 days according to policy and the team "
            "answered 3,559 people last quarter")
    packed = pack([{"id": f"c{i}", "source": "s", "tokens": 5, "relevance": 0.5, "text": text} for i in range(n)],
                  {"token_budget": 100})
    sig = signals(packed)
    assert len(sig.redundancy) < 2 * n
    assert len(sig.contradictions) == 0
    assert [len(g) for g in sig.duplicate_groups()] == [n]
    report, peak = peak_memory(lambda: ctxselect.inspect(
        [{"id": f"c{i}", "source": "s", "tokens": 5, "relevance": 0.5, "text": text} for i in range(n)],
        {"token_budget": 10 * n}))
    assert report.conflicting_pair_count == 0
    assert peak < 64 * MiB

