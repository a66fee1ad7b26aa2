"""trace(), relevance aggregation (article 001), labelled metrics (003), ablation (004), and the
audit / ablate commands."""

import json

import pytest
from tests.conftest import EXAMPLES
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from ctxselect.evaluate.trace import suffix_prefix_overlap

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


# -- article 001 ---------------------------------------------------------------------------------
def test_article_001_aggregation():
    scores = {0: 0.9, 1: 0.6, 2: 0.2}
    assert round(ctxselect.aggregate_relevance(scores, "mean"), 3) == 0.567
    assert round(ctxselect.aggregate_relevance(scores, "min"), 3) == 0.2
    assert round(ctxselect.aggregate_relevance(scores, "weighted"), 3) == 0.472  # the article prints 0.467
    assert ctxselect.aggregate_relevance([], "mean") == 0.0
    assert [ctxselect.relevance_band(x) for x in (0.85, 0.8, 0.6, 0.45, 0.1)] == \
        ["high", "high", "moderate", "low", "low"]
    with pytest.raises(ctxselect.InputError, match="field 'method': expected one of mean, min, weighted"):
        ctxselect.aggregate_relevance([0.5], "median")
    with pytest.raises(ctxselect.InputError, match=r"field 'scores\[1\]'"):
        ctxselect.aggregate_relevance([0.5, 1.5])


# -- trace -------------------------------------------------------------------------------------
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
    traced = {t.id: t for t in ctxselect.trace(chunks, prompt)}
    assert (traced["a"].match, traced["b"].match, traced["c"].match) == ("exact", "normalised", "none")
    assert traced["d"].match == "fuzzy"
    assert [traced[k].context_position for k in "abcd"] == [1, 0, None, 2]  # order of appearance
    assert traced["c"].score_missing and not traced["a"].score_missing
    assert traced["d"].overlap_with_next == 0.0
    report = ctxselect.audit([t.to_dict() for t in traced.values()])
    assert report.subscores[0].score == 75  # 3 of 4 chunks reached the prompt


def test_trace_bad_input():
    with pytest.raises(ctxselect.InputError, match=r"candidate #0, field 'id'"):
        ctxselect.trace([{"text": "x"}], "x")
    with pytest.raises(ctxselect.InputError, match=r"field 'fuzzy_threshold'"):
        ctxselect.trace([], "x", fuzzy_threshold=120)


# -- article 003 -------------------------------------------------------------------------------
def test_labelled_metrics():
    query = ctxselect.Query.from_dict({
        "query_id": "q", "requirements": {"token_budget": 100}, "gold": ["g1", "g2"],
        "candidates": [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 1 - k / 100, "rank": k + 1}
                       for k in range(30)] +
                      [{"id": "g1", "source": "s", "tokens": 10, "relevance": 0.5, "rank": 31},
                       {"id": "g2", "source": "s", "tokens": 10, "relevance": 0.5, "rank": 5}]})
    m = ctxselect.labelled_metrics(query, ["c0", "g2", "c1"])
    assert m["recall@20"] == 0.5 and m["hit@20"] == 1.0  # g2 has rank 5, g1 rank 31
    assert m["recall@50"] == 1.0 and m["hit@50"] == 1.0
    assert m["recall@selection"] == 0.5 and m["all_gold"] == 0.0 and m["hit@selection"] == 1.0
    assert m["gold_window_ranks"] == [2] and m["gold_token_offsets"] == [10]
    assert m["gold_middle_third_share"] == 1.0 and m["distractors"] == 2
    summary = ctxselect.summarize_labelled([m, ctxselect.labelled_metrics(query, [])])
    assert summary["queries"] == 2 and summary["evidence_free"] == 0.5
    assert ctxselect.self_consistency(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    assert ctxselect.self_consistency([], []) == 1.0


def test_recall_at_depth_counts_ties_by_rank():
    query = ctxselect.Query.from_dict({
        "query_id": "q", "requirements": {"token_budget": 100}, "gold": [["a"], ["b", "c"]],
        "candidates": [{"id": k, "source": "s", "tokens": 10, "relevance": 0.5} for k in "abcd"]})
    m = ctxselect.labelled_metrics(query, ["b"], depths=(1,))
    assert m["recall@1"] == 1.0  # relevance ties keep candidate order: a is first, and {a} suffices
    assert m["recall@selection"] == 0.5


# -- article 004 -------------------------------------------------------------------------------
def test_ablation_variants():
    queries = list(ctxselect.read_dump(EXAMPLE))
    selections = [ctxselect.select(q.candidates, q.requirements, q.query).ids for q in queries]
    rows = list(ctxselect.ablation_variants(queries, selections, seed=3))
    assert len(rows) == 6 * len(queries)
    by = {(r["query_id"], r["variant"]): r for r in rows}
    first = queries[0].query_id
    assert by[(first, "full")]["ids"] == selections[0] and by[(first, "none")]["ids"] == []
    assert by[(first, "shuffled")]["source_query_id"] != first
    tokens = {c.id: c.tokens for c in queries[0].candidates}
    full = sum(tokens[c] for c in selections[0])
    assert sum(tokens[c] for c in by[(first, "truncated_half")]["ids"]) <= full / 2
    assert by[(first, "truncated_half")]["ids"] == selections[0][:len(by[(first, "truncated_half")]["ids"])]
    reordered = by[(first, "reordered")]["ids"]
    rel = {c.id: c.relevance for c in queries[0].candidates}
    assert sorted(reordered) == sorted(selections[0]) and rel[reordered[-1]] == max(rel[c] for c in reordered)
    assert rows == list(ctxselect.ablation_variants(queries, selections, seed=3))  # seeded


def test_ablate_and_audit_commands(tmp_path):
    out = tmp_path / "ablate.jsonl"
    result = runner.invoke(app, ["ablate", EXAMPLE, "--out", str(out), "--seed", "1"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["variant"] for r in rows} == {"full", "none", "shuffled", "truncated_half", "truncated_quarter",
                                             "reordered"}
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"trace_id": "t1", "chunks": [{"id": "a", "text": "alpha beta", "rank": 1},
                                                                {"id": "b", "text": "gamma", "rank": 2}],
                                  "prompts": ["Context: alpha beta"]}) + "\n" +
                      json.dumps({"trace_id": "t2", "chunks": [{"id": "x", "rank_retrieval": 1, "tokens": 5,
                                                                "in_context": True, "context_position": 0}]}) + "\n")
    result = runner.invoke(app, ["audit", str(traces)])
    assert result.exit_code == 0, result.output
    assert "t1" in result.output and "Reduce TOP_K 2→3" in result.output
    data = json.loads(runner.invoke(app, ["audit", str(traces), "--json"]).stdout)
    assert data[1]["label"] == "PASS" and data[0]["subscores"]["precision"]["score"] == 50
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"chunks": [{"id": "a", "tokens": -1}]}\n')
    result = runner.invoke(app, ["audit", str(bad)])
    assert result.exit_code == 2 and "line 1" in result.stderr and "field 'tokens'" in result.stderr
