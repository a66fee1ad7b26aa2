"""Bad input gets a clear error naming where (file, line, query, candidate, field) and what."""

import json
import re

import pytest

import ctxselect
from ctxselect import InputError
from ctxselect.model.candidate import RESERVED_KEYS
from ctxselect.model.requirements import GATE_PARAMETERS, REQUIREMENT_PARAMETERS

GOOD_CANDIDATE = {"id": "c1", "source": "wiki", "tokens": 10, "relevance": 0.5, "text": "hello"}
GOOD_LINE = {"query_id": "q1", "query": "why?", "requirements": {"token_budget": 100},
             "candidates": [GOOD_CANDIDATE]}


def line_with(**changes):
    line = json.loads(json.dumps(GOOD_LINE))
    for key, value in changes.items():
        line[key] = value
    return json.dumps(line)


DROP = object()


def _cand(**changes):
    cand = dict(GOOD_CANDIDATE)
    for key, value in changes.items():
        if value is DROP:
            cand.pop(key)
        else:
            cand[key] = value
    return cand


def candidate_with(**changes):
    return line_with(candidates=[_cand(**changes)])


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
    with pytest.raises(InputError, match=r"candidate 'c1', field 'relevance': expected a number in \[0, 1\] \(raw scores: "
                                         r"relevance='minmax', 'sigmoid' or 'rank'\), found nan"):
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


# -- the API corpus of hostile inputs (issue 11) ------------------------------------------------
# Each case is (name, call, fragments): the call must raise InputError whose one-line message holds
# every fragment. Every case here ended in a traceback, a non-InputError exception, or a silently
# wrong result before issue 11.

def _select(cands=None, reqs=None, **kwargs):
    return lambda: ctxselect.select([_cand()] if cands is None else cands,
                                    {"token_budget": 100} if reqs is None else reqs, **kwargs)


def _inspect(cands=None, reqs=None):
    return lambda: ctxselect.inspect([_cand()] if cands is None else cands,
                                     {"token_budget": 100} if reqs is None else reqs)


def _reqs(**extra):
    return {"token_budget": 100, **extra}


BIG = 2**70
API_CASES = [
    # integers beyond what the solver's 64-bit arithmetic holds
    ("tokens beyond int64", _select([_cand(tokens=BIG)]), ["candidate 'c1'", "field 'tokens'", "up to 1,000,000,000,000"]),
    ("tokens just above the cap", _select([_cand(tokens=10**12 + 1)]), ["field 'tokens'", "up to 1,000,000,000,000"]),
    ("rank beyond int64", _select([_cand(rank=BIG)]), ["field 'rank'", "up to"]),
    ("budget beyond int64", _select(reqs={"token_budget": BIG}), ["field 'token_budget'", "up to"]),
    ("budget 2**62", _select(reqs={"token_budget": 2**62}), ["field 'token_budget'", "up to"]),
    ("budget as float inf", _select(reqs={"token_budget": float("inf")}), ["field 'token_budget'", "found inf"]),
    ("source minimum beyond int64", _select(reqs=_reqs(required_sources={"wiki": BIG})), ["field 'required_sources.wiki'"]),
    ("source maximum beyond int64", _select(reqs=_reqs(max_per_source={"wiki": BIG})), ["field 'max_per_source.wiki'"]),
    ("per-source maximum beyond int64", _select(reqs=_reqs(max_per_source=BIG)), ["field 'max_per_source'"]),
    ("chunk cap beyond int64", _select(reqs=_reqs(max_chunks=BIG)), ["field 'max_chunks'"]),
    ("article-000 minimum beyond int64", _select(reqs=_reqs(required_sources=["wiki"], min_chunks_by_source={"wiki": BIG})),
     ["field 'min_chunks_by_source.wiki'"]),
    ("integer id beyond the cap", _select([_cand(id=BIG)]), ["field 'id'", "at most 1,000,000,000,000"]),
    ("token counter returns 10**30", lambda: ctxselect.select([_cand(tokens=DROP)], _reqs(), token_counter=lambda t: 10**30),
     ["candidate 'c1'", "field 'tokens'", "up to"]),
    ("token counter returns text", lambda: ctxselect.select([_cand(tokens=DROP)], _reqs(), token_counter=lambda t: "5"),
     ["field 'tokens'", "found '5'"]),
    ("token counter returns None", lambda: ctxselect.select([_cand(tokens=DROP)], _reqs(), token_counter=lambda t: None),
     ["field 'tokens'", "found null"]),
    ("core_size beyond int64", _select(core_size=BIG), ["field 'core_size'"]),
    # weights and scales the solver cannot hold
    ("weight 1e13", _select(weights={"relevance": 1e13}), ["field 'weights.relevance'", "[0, 1e+06]"]),
    ("weight 1e300", _select(weights={"coverage": 1e300}), ["field 'weights.coverage'"]),
    ("weight in requirements 1e13", _select(reqs=_reqs(weights={"redundancy": 1e13})), ["field 'weights.redundancy'"]),
    ("weight negative", _select(weights={"tokens": -1}), ["field 'weights.tokens'", "found -1"]),
    ("relevance beyond any float", _select([_cand(relevance=10**400)]), ["field 'relevance'", "expected a number in [0, 1]"]),
    ("weight beyond any float", _select(weights={"tokens": 10**400}), ["field 'weights.tokens'"]),
    ("weight NaN", _select(weights={"tokens": float("nan")}), ["field 'weights.tokens'", "found nan"]),
    ("weights as a list", _select(weights=[1, 2]), ["field 'weights'", "expected an object of objective weights"]),
    ("weights as text", _select(weights="relevance"), ["field 'weights'"]),
    ("weights with a typo", _select(weights={"relevanse": 1}), ["field 'weights.relevanse'", "unknown objective weight", "relevance"]),
    ("half-life 5e-324", _select(reqs=_reqs(half_life_days=5e-324)), ["field 'half_life_days'", "found 5e-324"]),
    ("half-life zero", _select(reqs=_reqs(half_life_days=0)), ["field 'half_life_days'"]),
    ("decay infinite", _select(reqs=_reqs(decay_lambda=float("inf"))), ["field 'decay_lambda'", "found inf"]),
    ("source decay negative", _select(reqs=_reqs(source_decay={"wiki": -1})), ["field 'source_decay.wiki'"]),
    ("embedding component 1e308", _select([_cand(embedding=[1e308, 1.0])]), ["field 'embedding[0]'", "[-1e+100, 1e+100]"]),
    ("embedding empty", _select([_cand(embedding=[])]), ["field 'embedding'", "non-empty list of numbers"]),
    ("embedding as text", _select([_cand(embedding="0.1 0.2")]), ["field 'embedding'"]),
    ("embedding of booleans", _select([_cand(embedding=[True, False])]), ["field 'embedding[0]'"]),
    # times
    ("epoch milliseconds", _select([_cand(timestamp=1_730_000_000_000)]), ["field 'timestamp'", "looks like epoch milliseconds"]),
    ("epoch microseconds", _select([_cand(timestamp=1_730_000_000_000_000)]), ["looks like epoch microseconds"]),
    ("epoch nanoseconds", _select([_cand(timestamp=1_730_000_000_000_000_000)]), ["looks like epoch nanoseconds"]),
    ("epoch before the year 1", _select([_cand(timestamp=-1e12)]), ["field 'timestamp'", "from the year 1 on"]),
    ("now in milliseconds", _select(reqs=_reqs(now=1_730_000_000_000)), ["field 'now'", "milliseconds"]),
    ("valid_to in milliseconds", _select([_cand(valid_to=1_730_000_000_000)]), ["field 'valid_to'", "milliseconds"]),
    ("ISO time pushed before year 1 by its offset", _select([_cand(timestamp="0001-01-01T00:00:00+01:00")]),
     ["field 'timestamp'", "years 1 to 9999"]),
    ("ISO time pushed past 9999 by its offset", _select([_cand(timestamp="9999-12-31T23:59:59-05:00")]),
     ["field 'timestamp'", "years 1 to 9999"]),
    ("timestamp as a boolean", _select([_cand(timestamp=True)]), ["field 'timestamp'", "found true"]),
    ("timestamp as a list", _select([_cand(timestamp=[2024, 1, 1])]), ["field 'timestamp'"]),
    ("timestamp infinite", _select([_cand(timestamp=float("inf"))]), ["field 'timestamp'"]),
    # text that is not valid Unicode, or too long
    ("lone surrogate in text", _select([_cand(text="a\ud800b")]), ["candidate 'c1'", "field 'text'", "lone surrogate"]),
    ("lone surrogate in id", _select([_cand(id="c\udfff")]), ["field 'id'", "lone surrogate"]),
    ("lone surrogate in source", _select([_cand(source="\ud800")]), ["field 'source'", "lone surrogate"]),
    ("lone surrogate in an aspect", _select([_cand(aspects=["\ud800"])]), ["field 'aspects[0]'", "lone surrogate"]),
    ("lone surrogate in a scope", _select(reqs=_reqs(allowed_scopes=["\ud800"])), ["field 'allowed_scopes[0]'"]),
    ("lone surrogate in the query", _select(query="why\ud800"), ["field 'query'", "lone surrogate"]),
    ("text over the length cap", _select([_cand(text="x" * 2_000_001)]), ["field 'text'", "at most 2,000,000 characters"]),
    ("id over the length cap", _select([_cand(id="i" * 5000)]), ["field 'id'", "at most 4,096 characters", "..."]),
    ("source over the length cap", _select([_cand(source="s" * 5000)]), ["field 'source'", "at most 4,096"]),
    ("empty id", _select([_cand(id="")]), ["field 'id'", "non-empty string"]),
    ("blank source", _select([_cand(source="   ")]), ["field 'source'", "non-empty string"]),
    # wrong types where lists, mappings and text belong
    ("candidates None", lambda: ctxselect.select(None, _reqs()), ["field 'candidates'", "found null"]),
    ("candidates an integer", lambda: ctxselect.select(5, _reqs()), ["field 'candidates'", "found 5"]),
    ("candidates a dict", lambda: ctxselect.select({"id": "c1"}, _reqs()), ["field 'candidates'"]),
    ("candidates bytes", lambda: ctxselect.select(b"[]", _reqs()), ["field 'candidates'"]),
    ("inspect of None", lambda: ctxselect.inspect(None, _reqs()), ["field 'candidates'", "found null"]),
    ("pack of None", lambda: ctxselect.pack(None, _reqs()), ["field 'candidates'"]),
    ("a candidate None", _select([None]), ["candidate #0", "expected a candidate object"]),
    ("a candidate a list", _select([[1, 2]]), ["candidate #0"]),
    ("requirements None", lambda: ctxselect.select([_cand()], None), ["field 'requirements'"]),
    ("requirements a list", lambda: ctxselect.select([_cand()], [100]), ["field 'requirements'", "expected an object"]),
    ("query an integer", _select(query=123), ["field 'query'", "expected a string", "found 123"]),
    ("query bytes", _select(query=b"why"), ["field 'query'", "found bytes"]),
    ("query a list", _select(query=["why"]), ["field 'query'"]),
    ("method an integer", _select(method=3), ["field 'method'", "one of greedy"]),
    ("order unknown", _select(order="random"), ["field 'order'", "one of edges"]),
    ("time limit NaN", _select(time_limit=float("nan")), ["field 'time_limit'"]),
    ("time limit zero", _select(time_limit=0), ["field 'time_limit'"]),
    ("enforce_gate as text", _select(enforce_gate="yes"), ["field 'enforce_gate'", "true or false"]),
    ("hard conflict severity 5", _select(hard_conflict_severity=5), ["field 'hard_conflict_severity'"]),
    ("mmr lambda 2", _select(method="mmr", mmr_lambda=2), ["field 'mmr_lambda'"]),
    ("signal option with a typo", _select(signal_options={"treshold": 0.5}), ["field 'signal_options.treshold'",
                                                                              "unknown signals option", "redundancy_threshold"]),
    ("signal options a list", _select(signal_options=["similarity"]), ["field 'signal_options'"]),
    ("fields with a non-text key", _select([_cand(fields={1: 2})]), ["field 'fields'", "non-empty string keys"]),
    ("a candidate key that is not text", _select([{**_cand(), 5: 1}]), ["non-empty string keys"]),
    # silently wrong before
    ("budget and token_budget both", _select(reqs={"token_budget": 100, "budget": 5}),
     ["field 'requirements.budget'", "both given"]),
    ("gate key flat and nested", _select(reqs=_reqs(min_coverage=0.1, gate={"min_coverage": 0.9})),
     ["field 'requirements.min_coverage'", "both at the top level and in `gate`"]),
    ("conflict field named after a candidate key", _select(reqs=_reqs(conflict_fields=["source"])),
     ["field 'conflict_fields.source'", "is a candidate key, not a claim"]),
    ("conflict field named version", _inspect(reqs=_reqs(conflict_fields={"version": 0.5})),
     ["field 'conflict_fields.version'"]),
    ("conflict field holding an object", _inspect([_cand(refund={"days": 30}), _cand(id="c2", refund={"days": 14})],
                                                  _reqs(conflict_fields=["refund"])),
     ["candidate 'c1'", "field 'refund'", "expected a string, number, boolean or null"]),
    ("conflict field holding a list", _inspect([_cand(refund=[30])], _reqs(conflict_fields=["refund"])),
     ["field 'refund'"]),
    ("unknown gate threshold", _select(reqs=_reqs(gate={"min_coverag": 0.5})), ["field 'gate.min_coverag'", "unknown gate threshold"]),
    ("gate not an object", _select(reqs=_reqs(gate=[0.5])), ["field 'gate'"]),
    ("scopes as text", _select(reqs=_reqs(allowed_scopes="public")), ["field 'allowed_scopes'", "a list of strings"]),
    ("a scope null", _select(reqs=_reqs(allowed_scopes=["public", None])), ["field 'allowed_scopes[1]'"]),
    ("aspect weight zero", _select(reqs=_reqs(required_aspects={"a": 0})), ["field 'required_aspects.a'"]),
    ("aspect weight infinite", _select(reqs=_reqs(required_aspects={"a": float("inf")})), ["field 'required_aspects.a'"]),
    # every other key of the requirement, gate and candidate tables
    ("version conflicts as text", _select(reqs=_reqs(version_conflicts="yes")),
     ["field 'version_conflicts'", "expected true or false", "found 'yes'"]),
    ("version conflict severity zero", _select(reqs=_reqs(version_conflict_severity=0)),
     ["field 'version_conflict_severity'", "(0, 1]"]),
    ("freshness fallback unknown", _select(reqs=_reqs(freshness_fallback="keep")),
     ["field 'freshness_fallback'", "expected one of drop, closest", "found 'keep'"]),
    ("contradictions unknown", _select(reqs=_reqs(contradictions="claims")),
     ["field 'contradictions'", "expected one of fields, all", "found 'claims'"]),
    ("source precedence trust negative", _select(reqs=_reqs(source_precedence={"wiki": -1})),
     ["field 'source_precedence.wiki'", "found -1.0"]),
    ("source precedence as text", _select(reqs=_reqs(source_precedence="wiki")),
     ["field 'source_precedence'", "a list of strings"]),
    ("gate density above one", _select(reqs=_reqs(gate={"max_contradiction_density": 2})),
     ["field 'gate.max_contradiction_density'", "[0, 1]", "found 2.0"]),
    ("gate starvation negative", _select(reqs=_reqs(gate={"max_source_starvation": -1})),
     ["field 'gate.max_source_starvation'", "found -1.0"]),
    ("gate stale risk as text", _select(reqs=_reqs(gate={"max_stale_risk": "x"})), ["field 'gate.max_stale_risk'", "found 'x'"]),
    ("gate utilization ceiling above one", _select(reqs=_reqs(gate={"max_token_utilization": 1.5})),
     ["field 'gate.max_token_utilization'", "found 1.5"]),
    ("gate coverage NaN", _select(reqs=_reqs(gate={"min_coverage": float("nan")})), ["field 'gate.min_coverage'", "found nan"]),
    ("gate admissibility above one", _select(reqs=_reqs(gate={"min_policy_admissibility": 2})),
     ["field 'gate.min_policy_admissibility'", "found 2.0"]),
    ("gate utilization floor negative", _select(reqs=_reqs(gate={"min_token_utilization": -0.1})),
     ["field 'gate.min_token_utilization'", "found -0.1"]),
    ("doc_id an object", _select([_cand(doc_id={"a": 1})]), ["candidate 'c1'", "field 'doc_id'", "a non-empty string"]),
    ("scope a list", _select([_cand(scope=["public"])]), ["candidate 'c1'", "field 'scope'", "a non-empty string"]),
    ("valid_from not a time", _select([_cand(valid_from="not a date")]), ["candidate 'c1'", "field 'valid_from'", "ISO-8601"]),
    ("version an object", _select([_cand(version={})]), ["candidate 'c1'", "field 'version'", "a non-empty string"]),
]


@pytest.mark.parametrize("name,call,fragments", API_CASES, ids=[c[0] for c in API_CASES])
def test_hostile_api_input(name, call, fragments):
    with pytest.raises(InputError) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert "\n" not in message and len(message) < 600, message


def _named_fields(cases) -> set:
    """Every field a case's expected message names, without a leading ``requirements.``."""
    named = {m for _, _, fragments in cases for f in fragments for m in re.findall(r"field '([^']+)'", f)}
    return {name.removeprefix("requirements.") for name in named}


def test_every_key_of_the_library_tables_has_a_bad_value_case():
    """The library's own tables of accepted keys, not a count of this file's cases: a requirement,
    gate threshold or candidate key added to ctxselect without a case here fails this test."""
    named = _named_fields(CASES) | _named_fields(API_CASES)
    roots = {re.split(r"[.\[]", name)[0] for name in named}
    gates = {".".join(name.split(".")[:2]) for name in named if name.startswith("gate.")}
    missing = ((set(REQUIREMENT_PARAMETERS) | set(RESERVED_KEYS)) - roots) | ({f"gate.{k}" for k in GATE_PARAMETERS} - gates)
    assert not missing, f"no bad-value case names: {sorted(missing)}"


def test_true_and_one_are_different_claim_values():
    chunks = [_cand(fields={"f": True}), _cand(id="c2", fields={"f": 1}), _cand(id="c3", fields={"f": 1.0})]
    report = ctxselect.inspect(chunks, _reqs(conflict_fields=["f"]))
    pairs = {(p.a, p.b) for p in report.conflicting_pairs}
    assert pairs == {("c1", "c2"), ("c1", "c3")}  # 1 and 1.0 are one number; true is not 1


def test_epoch_seconds_in_range_still_read():
    sel = ctxselect.select([_cand(timestamp=1_730_000_000)], _reqs(now=1_730_000_000 + 86400))
    assert sel.ids == ["c1"]


def test_tiny_relevance_keeps_the_freshness_gate():
    """Relevance of 1e-7 rounded the gate's freshness row to zeros: the solver picked the stale
    chunk, the exact check failed, and the gate was reported infeasible with [] returned."""
    chunks = [{"id": "fresh", "source": "s", "tokens": 50, "relevance": 1e-7, "timestamp": "2026-01-01"},
              {"id": "old", "source": "s", "tokens": 10, "relevance": 1e-7, "timestamp": "2000-01-01"}]
    sel = ctxselect.select(chunks, {"token_budget": 100, "now": "2026-01-02", "min_coverage": 0})
    assert sel.ids == ["fresh"] and sel.relaxed == [] and sel.infeasible == []
    assert sel.report.passed


def test_a_long_location_keeps_both_ends():
    """A path longer than the quoted limit is cut in the middle: its file name stays readable
    (a deep temp folder once cut ``.../nowhere/out.jsonl`` to ``.../nowhere/out.j...``)."""
    from ctxselect.errors import LOCATION_LIMIT, format_error

    path = "/" + "/".join(f"folder{k}" for k in range(30)) + "/out.jsonl"
    message = format_error(file=path, message="cannot write: no folder")
    shown = message.split(": cannot write")[0]
    assert shown.endswith("/out.jsonl") and shown.startswith("/folder0/")
    assert "..." in shown and len(shown) <= LOCATION_LIMIT
