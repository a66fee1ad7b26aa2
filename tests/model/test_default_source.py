"""`source` is optional: a candidate without one gets DEFAULT_SOURCE, which no source rule accepts."""

import json

import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.model.candidate import DEFAULT_SOURCE, Candidate

TEXTS = ["Annual plans are refunded within 30 days.", "Refunds reach the card in five days.",
         "Monthly plans are not refunded.", "Annual plans are refunded within 30 days."]


def _candidates(**source):
    return [{"id": f"c{k}", "text": t, "relevance": 0.9 - 0.1 * k, **source} for k, t in enumerate(TEXTS)]


def test_a_candidate_without_a_source_gets_the_default_and_keeps_it_out_of_its_record():
    cand = Candidate.from_dict({"id": "a", "relevance": 0.5, "tokens": 3})
    assert cand.source == DEFAULT_SOURCE == "-"
    assert Candidate(id="a", source=None, relevance=0.5, tokens=3) == cand
    assert "source" not in cand.to_dict() and Candidate.from_dict(cand.to_dict()) == cand
    assert Candidate.from_dict({"id": "b", "source": None, "relevance": 0.5, "tokens": 3}).source == "-"
    assert Candidate.from_dict({"id": "c", "source": "policy", "relevance": 0.5, "tokens": 3}).to_dict()["source"] == "policy"


@pytest.mark.parametrize("method", ["optimal", "greedy"])
def test_selection_without_sources_equals_selection_with_one_unnamed_source(method):
    question = "how long do refunds of annual plans take"
    plain = ctxselect.select(_candidates(), {"token_budget": 20}, question, method=method)
    named = ctxselect.select(_candidates(source="kb"), {"token_budget": 20}, question, method=method)
    assert plain.ids == named.ids and plain.objective == pytest.approx(named.objective)
    assert ctxselect.inspect(_candidates(), {"token_budget": 20}).metrics == \
        ctxselect.inspect(_candidates(source="kb"), {"token_budget": 20}).metrics


@pytest.mark.parametrize("rule,value", [("required_sources", ["policy"]), ("max_per_source", 2),
                                        ("max_per_source", {"policy": 1}), ("source_decay", {"policy": 0.1}),
                                        ("source_precedence", ["policy", "wiki"])])
def test_a_source_rule_refuses_a_candidate_without_a_source(rule, value):
    cands = _candidates(source="policy")
    del cands[2]["source"]
    expected = (r"^candidate 'c2', field 'source': missing required field; "
                rf"expected a source name, since the requirements set {rule}$")
    with pytest.raises(InputError, match=expected):
        ctxselect.select(cands, {"token_budget": 20, rule: value})
    with pytest.raises(InputError, match=expected):
        ctxselect.inspect(cands, {"token_budget": 20, rule: value})
    cands[2]["source"] = "wiki"
    assert ctxselect.select(cands, {"token_budget": 20, rule: value}).ids


def test_an_explicit_default_name_counts_as_no_source():
    cands = _candidates(source="policy")
    cands[0]["source"] = DEFAULT_SOURCE
    with pytest.raises(InputError, match="candidate 'c0', field 'source'"):
        ctxselect.select(cands, {"token_budget": 20, "required_sources": ["policy"]})


def test_a_dump_without_sources_reads_and_selects(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"query_id": "q", "requirements": {"token_budget": 20}, "candidates": _candidates()}) + "\n")
    (query,) = ctxselect.read_dump(path)
    assert {c.source for c in query.candidates} == {DEFAULT_SOURCE}
    assert ctxselect.select(query.candidates, query.requirements).ids
