"""Bad input gets a clear error naming where (file, line, query, candidate, field) and what."""

import json

import pytest

import ctxselect
from ctxselect import InputError

GOOD_CANDIDATE = {"id": "c1", "source": "wiki", "tokens": 10, "relevance": 0.5, "text": "hello"}
GOOD_LINE = {"query_id": "q1", "query": "why?", "requirements": {"token_budget": 100},
             "candidates": [GOOD_CANDIDATE]}


def line_with(**changes):
    line = json.loads(json.dumps(GOOD_LINE))
    for key, value in changes.items():
        line[key] = value
    return json.dumps(line)


def candidate_with(**changes):
    cand = dict(GOOD_CANDIDATE)
    for key, value in changes.items():
        if value is DROP:
            cand.pop(key)
        else:
            cand[key] = value
    return line_with(candidates=[cand])


DROP = object()

# (name, text of the second line, fragments the message must hold)
CASES = [
    ("malformed JSON", '{"query_id": "q2", ', ["line 2", "malformed JSON"]),
    ("not an object", "[1, 2]", ["line 2", "expected a JSON object"]),
    ("missing query_id", json.dumps({"requirements": {"token_budget": 1}, "candidates": []}),
     ["line 2", "field 'query_id'", "missing required field"]),
    ("missing requirements", json.dumps({"query_id": "q2", "candidates": []}),
     ["query 'q2'", "field 'requirements'", "missing required field"]),
    ("missing budget", line_with(query_id="q2", requirements={}),
     ["query 'q2'", "field 'requirements.token_budget'", "missing required field"]),
    ("zero budget", line_with(query_id="q2", requirements={"token_budget": 0}),
     ["field 'token_budget'", "expected a positive integer", "found 0"]),
    ("negative budget", line_with(query_id="q2", requirements={"token_budget": -5}),
     ["field 'token_budget'", "found -5"]),
    ("budget as text", line_with(query_id="q2", requirements={"token_budget": "100"}),
     ["field 'token_budget'", "found '100'"]),
    ("unknown requirement", line_with(query_id="q2", requirements={"token_budget": 5, "min_coverrage": 0.9}),
     ["field 'requirements.min_coverrage'", "unknown requirement", "min_coverage"]),
    ("gate threshold out of range", line_with(query_id="q2", requirements={"token_budget": 5, "min_freshness": 1.5}),
     ["field 'gate.min_freshness'", "expected a number in [0, 1]", "found 1.5"]),
    ("candidates not a list", line_with(query_id="q2", candidates={"id": "x"}),
     ["field 'candidates'", "expected a list of candidates"]),
    ("duplicate candidate id", line_with(query_id="q2", candidates=[GOOD_CANDIDATE, GOOD_CANDIDATE]),
     ["candidate 'c1'", "duplicate candidate id"]),
    ("missing candidate id", candidate_with(id=DROP), ["candidate #0", "field 'id'", "missing required field"]),
    ("missing source", candidate_with(source=DROP), ["candidate 'c1'", "field 'source'", "missing required field"]),
    ("missing relevance", candidate_with(relevance=DROP), ["candidate 'c1'", "field 'relevance'", "missing required field"]),
    ("NaN relevance", candidate_with(relevance=float("nan")).replace("NaN", "NaN"), ["line 2", "malformed JSON", "NaN"]),
    ("relevance above 1", candidate_with(relevance=1.7), ["candidate 'c1'", "field 'relevance'", "expected a number in [0, 1]", "found 1.7"]),
    ("relevance negative", candidate_with(relevance=-0.1), ["field 'relevance'", "found -0.1"]),
    ("relevance as text", candidate_with(relevance="high"), ["field 'relevance'", "found 'high'"]),
    ("zero tokens", candidate_with(tokens=0), ["candidate 'c1'", "field 'tokens'", "expected a positive integer", "found 0"]),
    ("fractional tokens", candidate_with(tokens=2.5), ["field 'tokens'", "found 2.5"]),
    ("no tokens and no text", candidate_with(tokens=DROP, text=DROP), ["field 'tokens'", "non-empty text to count it from"]),
    ("unparseable timestamp", candidate_with(timestamp="last tuesday"), ["candidate 'c1'", "field 'timestamp'", "ISO-8601", "found 'last tuesday'"]),
    ("validity window reversed", candidate_with(valid_from="2025-01-02", valid_to="2025-01-01"), ["field 'valid_to'", "not before valid_from"]),
    ("aspects not a list", candidate_with(aspects="steps"), ["field 'aspects'", "expected a list of strings"]),
    ("field claim not scalar", candidate_with(fields={"window": [1, 2]}), ["field 'fields.window'", "expected a string, number, boolean or null"]),
    ("embedding with text", candidate_with(embedding=[0.1, "x"]), ["field 'embedding[1]'", "expected a number in [-1e+100, 1e+100]"]),
    ("embedding dimensions differ", line_with(query_id="q2", candidates=[dict(GOOD_CANDIDATE, embedding=[1, 0]), dict(GOOD_CANDIDATE, id="c2", embedding=[1, 0, 0])]),
     ["candidate 'c2'", "field 'embedding'", "2-dimensional", "found '3 dimensions'"]),
    ("gold names unknown id", line_with(query_id="q2", gold=["nope"]), ["candidate 'nope'", "field 'gold'", "unknown candidate id"]),
    ("selected names unknown id", line_with(query_id="q2", selected=["ghost"]), ["field 'selected'", "candidate 'ghost'"]),
    ("duplicate query id", line_with(), ["line 2", "query 'q1'", "duplicate query id"]),
    ("bad decay", line_with(query_id="q2", requirements={"token_budget": 5, "decay_lambda": -1}), ["field 'decay_lambda'", "found -1"]),
    ("bad missing_timestamp", line_with(query_id="q2", requirements={"token_budget": 5, "missing_timestamp": "maybe"}),
     ["field 'missing_timestamp'", "expected one of fresh, stale", "found 'maybe'"]),
    ("source minimum zero", line_with(query_id="q2", requirements={"token_budget": 5, "required_sources": {"a": 0}}),
     ["field 'required_sources.a'", "expected a positive integer"]),
]


@pytest.mark.parametrize("name,bad_line,fragments", CASES, ids=[c[0] for c in CASES])
def test_bad_dump_line(tmp_path, name, bad_line, fragments):
    path = tmp_path / "dump.jsonl"
    path.write_text(json.dumps(GOOD_LINE) + "\n" + bad_line + "\n")
    with pytest.raises(InputError) as info:
        list(ctxselect.read_dump(path))
    message = str(info.value)
    assert message.startswith(str(path)), message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert "\n" not in message


def test_there_are_at_least_twenty_distinct_cases():
    assert len({c[0] for c in CASES}) >= 20


def test_line_number_of_a_bad_value(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("\n".join([json.dumps(GOOD_LINE), "", candidate_with(relevance=3)]) + "\n")
    with pytest.raises(InputError) as info:
        list(ctxselect.read_dump(path))
    err = info.value
    assert (err.line, err.query_id, err.candidate_id, err.field) == (3, "q1", "c1", "relevance")


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot open dump"):
        list(ctxselect.read_dump(tmp_path / "nope.jsonl"))


def test_api_errors_name_candidate_and_field():
    with pytest.raises(InputError, match=r"candidate 'c1', field 'relevance': expected a number in \[0, 1\], found nan"):
        ctxselect.pack([dict(GOOD_CANDIDATE, relevance=float("nan"))], {"token_budget": 10})
    with pytest.raises(InputError, match=r"candidate 'c1', field 'tokens'.*found -3"):
        ctxselect.inspect([dict(GOOD_CANDIDATE, tokens=-3)], {"token_budget": 10})
    with pytest.raises(InputError, match=r"field 'embedding\[0\]': expected a number in \[-1e\+100, 1e\+100\], found inf"):
        ctxselect.pack([dict(GOOD_CANDIDATE, embedding=[float("inf")])], {"token_budget": 10})
    with pytest.raises(InputError, match=r"field 'requirements': expected an object"):
        ctxselect.pack([GOOD_CANDIDATE], 100)
    with pytest.raises(InputError, match=r"candidate #1: expected a candidate object"):
        ctxselect.pack([GOOD_CANDIDATE, "c2"], {"token_budget": 10})


def test_candidate_objects_are_validated_too():
    with pytest.raises(InputError, match=r"candidate 'x', field 'relevance'"):
        ctxselect.Candidate(id="x", source="s", relevance=2.0, tokens=1)
    with pytest.raises(InputError, match=r"field 'gate.max_token_utilization'.*min_token_utilization"):
        ctxselect.GateThresholds(min_token_utilization=0.5, max_token_utilization=0.4)
