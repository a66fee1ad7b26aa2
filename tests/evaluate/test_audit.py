"""audit() against the 109 RAGScope vectors (tests/data/ragscope_vectors.json, copied from the
project's shared folder), and its JavaScript arithmetic (Math.round, left-to-right sums) against
plain-Python twins."""

import json
import math
from functools import reduce
from operator import add

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.evaluate.audit import js_round, js_sum
from tests.conftest import DATA

VECTORS = json.loads((DATA / "ragscope_vectors.json").read_text())["vectors"]


def _tied(vector) -> bool:
    """Whether two in-context chunks of the vector share a context_position."""
    placed = [c["context_position"] for c in vector["chunks"] if c["in_context"] and c["context_position"] is not None]
    return len(set(placed)) < len(placed)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_audit_vector(vector):
    assert ctxselect.audit(vector["chunks"]).to_dict() == vector["expected"]


def test_two_vectors_tie_positions_and_are_scored_as_ragscope_scores_them():
    """Two of the 109 vectors put in-context chunks at one position, and RAGScope scores them (so
    ties are not refused); in "two of four missing scores" the tie is what spares four top-ranked
    chunks the burial penalty: with positions 0-3 two of them are buried mid-context and precision
    is 76, not 100."""
    tied = [v for v in VECTORS if _tied(v)]
    assert [v["name"] for v in tied] == ["two chunks, both in context", "two of four missing scores"]
    assert ctxselect.audit(tied[1]["chunks"]).subscores[0].score == 100
    spread = [dict(c, context_position=k) for k, c in enumerate(tied[1]["chunks"])]
    assert ctxselect.audit(spread).subscores[0].score == 76


def math_round(x: float) -> int:
    """The twin of JavaScript's Math.round (ECMA-262): the integer closest to x, halves towards
    +infinity; x − floor(x) is exact for every double, so no sum rounds on the way."""
    low = math.floor(x)
    return int(low) + 1 if x - low >= 0.5 else int(low)


def test_js_rounding_of_halves():
    halves = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 62.5, 99.5]
    assert [js_round(x) for x in halves] == [1, 2, 3, 0, -1, -2, 63, 100]
    assert [js_round(x) for x in halves] == [math_round(x) for x in halves]


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_js_round_matches_math_round(x):
    assert js_round(x) == math_round(x)


@pytest.mark.parametrize("x", [0.49999999999999994, 2.0 ** 52 + 1])
def test_js_round_where_adding_a_half_rounds(x):
    assert js_round(x) == math_round(x)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=12))
def test_js_sum_adds_left_to_right(values):
    """As a JavaScript loop adds (Python 3.12's sum() compensates rounding; the audit must not)."""
    assert js_sum(values) == reduce(add, values, 0.0)
    assert js_sum([0.1] * 10) == 0.9999999999999999  # left to right: not 1.0


def test_audit_errors_name_the_chunk():
    with pytest.raises(ctxselect.InputError, match=r"candidate 'a', field 'overlap_with_next'"):
        ctxselect.audit([{"id": "a", "overlap_with_next": 2}])
    with pytest.raises(ctxselect.InputError, match=r"candidate #0, field 'id'"):
        ctxselect.audit([{"tokens": 3}])


@pytest.mark.parametrize("chunks, message", [
    # a misspelt field was read as absent: `in_contxt` left the chunk out of context (FAIL, not PASS)
    ([{"id": "a", "tokens": 3, "in_contxt": True, "context_position": 0}],
     r"^candidate 'a', field 'in_contxt': unknown chunk field; expected one of id, rank_retrieval, rank_reranked, "
     r"tokens, in_context, context_position, overlap_with_next, score_missing, match$"),
    ([{"id": "a", "text": "alpha", "in_context": True}],
     r"field 'text': unknown chunk field; .* \(a chunk with text is traced against the trace's prompts first\)$"),
    ([{"id": "a", "in_context": True}, {"id": "a", "in_context": False}],
     r"^candidate 'a', field 'id': chunk #1 repeats the id of chunk #0; expected one record per chunk of a trace$"),
    ([{"id": "a", "in_context": True, "context_position": 0}, {"id": "b", "in_context": False, "context_position": 1}],
     r"^candidate 'b', field 'context_position': a position for a chunk not in context; expected null \(or 0, "
     r"RAGScope's placeholder\) when in_context is false, found 1$"),
    ([{"id": "a", "in_context": True, "match": "none"}], r"field 'match': match 'none' contradicts in_context true"),
    ([{"id": "a", "match": "partial"}], r"field 'match': expected one of exact, normalised, fuzzy, none"),
])
def test_unknown_keys_repeated_chunks_and_contradictory_positions_are_refused(chunks, message):
    with pytest.raises(ctxselect.InputError, match=message):
        ctxselect.audit(chunks)


def test_what_a_real_trace_holds_is_accepted():
    """trace()'s records (with `match`), positions left null, and RAGScope's placeholder 0 on a chunk
    not in context."""
    traced = ctxselect.trace([{"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}], "Context: alpha")
    assert ctxselect.audit([t.to_dict() for t in traced]).subscores[0].finding == "1/2 chunks used"
    chunks = [{"id": "a", "in_context": True}, {"id": "b", "in_context": True, "context_position": None},
              {"id": "c", "in_context": False, "context_position": 0}, {"id": "d", "context_position": None}]
    assert ctxselect.audit(chunks).subscores[0].finding == "2/4 chunks used"


def test_audit_takes_what_trace_returns_as_documented():
    """docs/evaluation.md's `audit(trace(chunks, prompts))` was an InputError ("expected a chunk
    object, found TracedChunk"): only the dicts of to_dict() were taken."""
    traced = ctxselect.trace([{"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}], "Context: alpha")
    assert ctxselect.audit(traced) == ctxselect.audit([t.to_dict() for t in traced])


@pytest.mark.parametrize("tokens", [False, True, "", [], {}], ids=repr)
def test_audit_refuses_a_present_token_count_of_the_wrong_type(tokens):
    from ctxselect.evaluate.audit import AuditChunk

    with pytest.raises(ctxselect.InputError, match="field 'tokens': expected an integer >= 0"):
        AuditChunk.from_dict({"id": "a", "tokens": tokens, "in_context": True})


def test_audit_reads_absent_or_null_tokens_as_0():
    from ctxselect.evaluate.audit import AuditChunk

    assert [AuditChunk.from_dict({"id": "a", **extra}).tokens for extra in ({}, {"tokens": None})] == [0, 0]
