"""Requirements: defaults and round trip, and list-valued requirements mean sets: duplicated,
reordered or merged lists change nothing.

Issue 11's policy bypass: ``allowed_scopes: ["public", "public"]`` admitted the next scope the
interner met. These properties draw scope, source, aspect and conflict-field lists, reshape them
(duplicates, another order, a merge of two role lists) and check that no unlisted scope is ever
admitted or selected, and that ``inspect`` and ``select`` answer the same for every shape.
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.errors import InputError
from tests.strategies import (
    ASPECTS,
    SCOPES,
    SOURCES,
    api_chunks,
    candidate_lists,
    requirement_dicts,
    reshaped,
)

METHODS = ["greedy", "topk", "density", "mmr", "optimal"]


def _unlisted_admitted(chunks, allowed):
    listed = set(allowed)
    return [c["id"] for c in chunks if c.get("scope") not in listed]


@settings(max_examples=120, deadline=None)
@given(candidate_lists(min_size=1), st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True),
       st.data())
def test_a_reshaped_scope_list_never_admits_an_unlisted_scope(chunks, scopes, data):
    shape = data.draw(reshaped(scopes))
    reqs = {"token_budget": 5000, "allowed_scopes": shape, "now": 1_790_000_000.0,
            "gate": {"min_coverage": 0.0, "min_freshness": 0.0, "min_token_utilization": 0.0}}
    chunks = api_chunks(chunks)
    packed = ctxselect.pack(chunks, reqs)
    expected = np.array([c.get("scope") in set(scopes) for c in chunks])
    assert (packed.admissible == expected).all()
    unlisted = set(_unlisted_admitted(chunks, scopes))
    for method in METHODS:
        sel = ctxselect.select(chunks, reqs, method=method)
        assert not unlisted & set(sel.ids), (method, shape)
        assert sel.report.metrics["policy_admissibility"] in (0.0, 1.0)
    report = ctxselect.inspect(chunks, reqs)
    assert math.isclose(report.metrics["policy_admissibility"], float(expected.mean()))
    assert set(report.inadmissible_ids) == unlisted


@settings(max_examples=80, deadline=None)
@given(candidate_lists(min_size=1), requirement_dicts(), st.data())
def test_list_requirements_answer_the_same_in_any_shape(chunks, reqs, data):
    """Scopes, sources, aspects and conflict fields given as lists: any shape, same answer."""
    chunks = api_chunks(chunks)
    base = dict(reqs)
    base["allowed_scopes"] = data.draw(st.lists(st.sampled_from(SCOPES), unique=True, max_size=3))
    base["required_sources"] = data.draw(st.lists(st.sampled_from(SOURCES), unique=True, max_size=3))
    base["required_aspects"] = data.draw(st.lists(st.sampled_from(ASPECTS), unique=True, max_size=4))
    base["conflict_fields"] = data.draw(st.lists(st.sampled_from(["x", "y"]), unique=True, max_size=2))
    other = dict(base)
    for key in ("allowed_scopes", "required_sources", "required_aspects", "conflict_fields"):
        other[key] = data.draw(reshaped(base[key]))
    a, b = ctxselect.inspect(chunks, base), ctxselect.inspect(chunks, other)
    assert a.passed == b.passed
    for name in ctxselect.METRIC_NAMES:
        assert math.isclose(a.metrics[name], b.metrics[name], abs_tol=1e-12), name
    listed = set(base["allowed_scopes"])
    for method in ("greedy", "optimal"):
        sa = ctxselect.select(chunks, base, method=method)
        sb = ctxselect.select(chunks, other, method=method)
        for sel in (sa, sb):
            assert all(c.get("scope") in listed for c in chunks if c["id"] in set(sel.ids))
        if method == "greedy":
            assert sorted(sa.ids) == sorted(sb.ids)
        elif sa.status == sb.status == "optimal":
            assert math.isclose(sa.objective, sb.objective, rel_tol=1e-6, abs_tol=1e-9)


def test_the_reported_bypass_is_closed():
    chunks = [{"id": "pub", "source": "s", "tokens": 5, "relevance": 0.5, "scope": "public"},
              {"id": "int", "source": "s", "tokens": 5, "relevance": 0.9, "scope": "internal"}]
    for scopes in (["public", "public"], ["public", "support"] + ["public"], ["support", "public", "support"]):
        reqs = {"token_budget": 100, "allowed_scopes": scopes}
        for method in METHODS:
            sel = ctxselect.select(chunks, reqs, method=method)
            assert "int" not in sel.ids
            assert sel.excluded["int"].startswith("inadmissible")
        report = ctxselect.inspect(chunks, reqs)
        assert report.metrics["policy_admissibility"] == 0.5 and not report.passed
        assert report.inadmissible_ids == ["int"]


def test_requirements_round_trip_and_defaults():
    reqs = ctxselect.Requirements.from_dict({"budget": 50, "required_aspects": ["x"], "min_freshness": 0.5,
                                             "gate": {"max_stale_risk": 0.2}})
    assert reqs.token_budget == 50 and reqs.gate.min_freshness == 0.5 and reqs.gate.max_stale_risk == 0.2
    assert reqs.gate.min_coverage == 0.80  # article 000's default
    assert ctxselect.Requirements.from_dict(reqs.to_dict()) == reqs



def test_weights_are_checked_when_read_by_the_check_select_runs(tmp_path):
    """A weight's name was checked only by select(): a dump's or a requirements file's unknown weight
    was found at the first selection, not where it was read. Now Requirements runs select()'s check
    (ObjectiveWeights.from_mapping) and keeps only the weights given."""
    with pytest.raises(InputError) as read:
        ctxselect.Requirements.from_dict({"token_budget": 5, "weights": {"sharpen": 2, "bogus": 1}})
    with pytest.raises(InputError) as selected:
        ctxselect.select([{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}], {"token_budget": 5},
                         weights={"bogus": 1})
    assert str(read.value) == str(selected.value)
    assert str(read.value).startswith("field 'weights.bogus': unknown objective weight; expected one of relevance, ")
    assert ctxselect.Requirements.from_dict({"token_budget": 5, "weights": {"sharpen": np.float32(2)}}).weights == {
        "sharpen": 2.0}
    dump = tmp_path / "d.jsonl"
    dump.write_text(json.dumps({"query_id": "q", "requirements": {"token_budget": 5, "weights": {"bogus": 1}},
                                "candidates": [{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}]}) + "\n")
    with pytest.raises(InputError, match="d.jsonl, line 1, query 'q', field 'weights.bogus': unknown objective weight"):
        list(ctxselect.read_dump(dump))
