"""trace(): where each retrieved chunk landed in the prompt, and the overlap of neighbours."""

import pytest

import ctxselect
from ctxselect.evaluate.trace import suffix_prefix_overlap


def test_suffix_prefix_overlap():
    assert suffix_prefix_overlap("abcdef", "defghi") == 0.5
    assert suffix_prefix_overlap("abc", "xyz") == 0.0
    assert suffix_prefix_overlap("", "abc") == 0.0
    long_a, long_b = "x" * 1000 + "y" * 600, "y" * 600 + "z"
    assert suffix_prefix_overlap(long_a, long_b) == pytest.approx(500 / 601)  # capped at 500 characters


def test_trace_exact_fuzzy_positions_and_overlap():
    chunks = [
        {"id": "a", "text": "Refunds are possible within 30 days.", "rank": 1, "relevance": 0.9},
        {"id": "b", "text": "**Steps:** open the console,\n  then click Refund.", "rank": 2, "relevance": 0.8},
        {"id": "c", "text": "The console was down on Tuesday.", "rank": 3},
        {"id": "d", "text": "Annual plans renew each year in March and cost less per month.", "rank": 4,
         "relevance": 0.1},
    ]
    prompt = ("Context:\n- steps: open the console, then click refund.\n"
              "- Refunds are possible within 30 days.\n- Annual plans renew each year in March and cost less "
              "per month!\nQuestion: how?")
    exact = {t.id: t for t in ctxselect.trace(chunks, prompt)}  # RAGScope's rule by default
    assert [exact[k].match for k in "abcd"] == ["exact", "none", "none", "none"]
    assert [exact[k].context_position for k in "abcd"] == [0, None, None, None]
    traced = {t.id: t for t in ctxselect.trace(chunks, prompt, match="fuzzy")}
    assert (traced["a"].match, traced["b"].match, traced["c"].match) == ("exact", "normalised", "none")
    assert traced["d"].match == "fuzzy"
    assert [traced[k].context_position for k in "abcd"] == [0, 1, None, 2]  # retrieval order, as RAGScope
    assert traced["c"].score_missing and not traced["a"].score_missing
    assert traced["d"].overlap_with_next == 0.0
    report = ctxselect.audit([t.to_dict() for t in traced.values()])
    assert report.subscores[0].score == 75  # 3 of 4 chunks reached the prompt


def test_trace_bad_input():
    with pytest.raises(ctxselect.InputError, match=r"candidate #0, field 'id'"):
        ctxselect.trace([{"text": "x"}], "x")
    with pytest.raises(ctxselect.InputError, match=r"field 'fuzzy_threshold'"):
        ctxselect.trace([], "x", match="fuzzy", fuzzy_threshold=120)
    with pytest.raises(ctxselect.InputError, match=r"^field 'fuzzy_threshold': applies only to fuzzy matching"):
        ctxselect.trace([], "x", fuzzy_threshold=80)  # a threshold is no silent no-op
    with pytest.raises(ctxselect.InputError, match=r"^field 'match': expected 'exact' or 'fuzzy', found 'partial'"):
        ctxselect.trace([], "x", match="partial")




def test_claimed_share_counts_overlapping_claims_once():
    """Two identical chunks quoted once claim one stretch: a fuzzy match over half of it is not
    refused for a share of 2 × 50 %."""
    from ctxselect.evaluate.trace import _claimed_share

    assert _claimed_share([(0, 10), (0, 10)], 5, 15) == 0.5
    assert _claimed_share([(0, 3), (2, 6), (20, 30)], 0, 10) == 0.6
    assert _claimed_share([], 0, 5) == 0.0


@pytest.mark.parametrize("chunks, message", [
    # a misspelt rank was read as absent: the chunk moved to the end of the retrieval order
    ([{"id": "a", "text": "x", "rnak": 2}],
     r"^candidate 'a', field 'rnak': unknown chunk field; expected one of id, text, rank, "
     r"rank_retrieval, rank_reranked, tokens, relevance, score$"),
    ([{"id": "a", "text": "x", "in_context": True}], r"field 'in_context': unknown chunk field"),
    ([{"id": "a", "text": "x", "rank": 1, "rank_retrieval": 2}],
     r"field 'rank_retrieval': `rank` and `rank_retrieval` both given; they name one rank"),
    ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
     r"^candidate 'a', field 'id': chunk #1 repeats the id of chunk #0; expected one record per chunk of a trace"),
])
def test_unknown_keys_two_ranks_and_a_repeated_id_are_refused(chunks, message):
    with pytest.raises(ctxselect.InputError, match=message):
        ctxselect.trace(chunks, "x y")


@pytest.mark.parametrize("tokens", [False, True, "", [], {}, "3"], ids=repr)
def test_a_present_token_count_of_the_wrong_type_is_refused_not_read_as_0(tokens):
    with pytest.raises(ctxselect.InputError, match="candidate 'a', field 'tokens': expected an integer >= 0"):
        ctxselect.trace([{"id": "a", "text": "alpha", "tokens": tokens}], "alpha")


def test_absent_or_null_tokens_are_counted_and_0_stays_0():
    traced = ctxselect.trace([{"id": "a", "text": "alpha beta"}, {"id": "b", "text": "x", "tokens": None},
                              {"id": "c", "text": "y", "tokens": 0}, {"id": "d", "tokens": None}], "alpha beta")
    assert [t.tokens > 0 for t in traced] == [True, True, False, False]


def _raises(text):
    raise RuntimeError("tokenizer not loaded")


@pytest.mark.parametrize("counter, message", [
    (_raises, r"candidate 'a', field 'token_counter': token_counter raised RuntimeError: tokenizer not loaded"),
    (lambda text: -1, r"candidate 'a', field 'tokens': expected an integer >= 0"),
    (lambda text: "3", r"candidate 'a', field 'tokens': expected an integer >= 0"),
])
def test_the_process_token_counter_failing_in_trace_is_a_located_input_error(counter, message):
    """trace() counts a chunk without a count with the process-wide counter: what it raises was a raw
    RuntimeError, and a count of -1 or "3" was taken as given."""
    ctxselect.set_token_counter(counter)
    try:
        with pytest.raises(ctxselect.InputError, match=message):
            ctxselect.trace([{"id": "a", "text": "alpha beta"}], "alpha beta")
    finally:
        ctxselect.set_token_counter(None)


@pytest.mark.parametrize("chunks", [None, 5, "abc", b"abc", {"id": "a", "text": "x"}], ids=repr)
def test_chunks_that_are_no_iterable_of_chunks_are_refused(chunks):
    with pytest.raises(ctxselect.InputError, match="field 'chunks': expected an iterable of chunk objects"):
        ctxselect.trace(chunks, "x")


@pytest.mark.parametrize("match", [["exact"], None, 1])
def test_a_match_mode_that_is_no_string_is_refused(match):
    with pytest.raises(ctxselect.InputError, match="field 'match'"):
        ctxselect.trace([{"id": "a", "text": "x"}], "x", match=match)
