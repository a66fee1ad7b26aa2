"""The articles' metrics on the command line (issue 16.3-16.5): bench --json / --all-metrics,
--depths, --paraphrases, --relevance-alert; inspect's relevance and weighted score."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from ctxselect.evaluate.labelled import labelled_metrics
from ctxselect.evaluate.relevance import context_relevance
from ctxselect.quality.score import quality_score
from tests.conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


def test_bench_json_carries_the_articles_metrics():
    result = runner.invoke(app, ["bench", EXAMPLE, "--json", "--methods", "greedy,optimal", "--depths", "2,5",
                                 "--paraphrases", "builtin", "--relevance-alert", "0.75"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    queries = {q.query_id: q for q in ctxselect.read_dump(EXAMPLE)}
    for record in data["records"]:
        q = queries[record["query_id"]]
        assert record["labelled"] == labelled_metrics(q, record["ids"], (2, 5))
        assert {"recall@2", "recall@5", "precision@5", "ndcg@2", "ap", "density", "gold_first_rank"} <= \
            set(record["labelled"])
        rel = {c.id: c.relevance for c in q.candidates}
        assert record["relevance"] == context_relevance([rel[c] for c in record["ids"]], 0.75)
        assert record["quality_score"] == quality_score(record["metrics"])
        assert 0.0 <= record["self_consistency"] <= 1.0
    for summary in data["summaries"]:
        rows = [r for r in data["records"] if r["method"] == summary["method"]]
        assert summary["labelled_queries"] == 3
        assert summary["labelled"]["ap"] == pytest.approx(np.mean([r["labelled"]["ap"] for r in rows]))  # MAP
        assert summary["relevance"]["alerts"] == sum(r["relevance"]["alert"] for r in rows)
        assert summary["quality_score"] == pytest.approx(np.mean([r["quality_score"] for r in rows]))
        assert summary["self_consistency_queries"] == 3


def test_bench_tables_stay_concise_unless_asked():
    plain = runner.invoke(app, ["bench", EXAMPLE, "--methods", "greedy"])
    assert plain.exit_code == 0, plain.output
    assert "quality_score (000)" not in plain.output  # the first screen keeps to the summary (issue 17)
    assert "MAP" not in plain.output and "self-consistency" not in plain.output
    full = runner.invoke(app, ["bench", EXAMPLE, "--methods", "greedy", "--all-metrics"])
    assert full.exit_code == 0, full.output
    assert "quality_score (000)" in full.output and "relevance alerts" in full.output
    for label in ("recall@20", "recall@200", "gold first window rank", "density", "precision@50", "ndcg@20",
                  "MAP (mean AP)", "self-consistency", "relevance: min"):
        assert label in full.output


@pytest.mark.parametrize("args, message", [
    (["--depths", "0,20"], "field '--depths'"),
    (["--depths", "twenty"], "field '--depths'"),
    (["--paraphrases", "some"], "--paraphrases"),
    (["--relevance-alert", "1.5"], "--relevance-alert"),
])
def test_bench_bad_metric_options(args, message):
    result = runner.invoke(app, ["bench", EXAMPLE, "--methods", "greedy", *args])
    assert result.exit_code == 2 and message in result.output + result.stderr


def test_inspect_shows_relevance_and_the_weighted_score():
    result = runner.invoke(app, ["inspect", EXAMPLE, "--json", "--relevance-alert", "0.73"])
    assert result.exit_code == 1  # the gate's verdict, unchanged by the relevance alert
    data = json.loads(result.stdout)
    for entry in data["queries"]:
        assert entry["quality_score"] == quality_score(entry["metrics"])
        assert entry["relevance"]["threshold"] == 0.73
        assert set(entry["relevance"]) == {"mean", "min", "weighted", "bands", "threshold", "alert"}
    assert data["relevance_alerts"] == sum(e["relevance"]["alert"] for e in data["queries"]) == 1
    table = runner.invoke(app, ["inspect", EXAMPLE, "--relevance-alert", "0.73"])
    assert "quality_score (000)" in table.output and "relevance (001): mean" in table.output
    assert "alert: weighted below 0.73" in table.output and "1 of 3 contexts" in table.output
    bad = runner.invoke(app, ["inspect", EXAMPLE, "--relevance-alert", "-1"])
    assert bad.exit_code == 2


def test_release_gate_rules_on_the_articles_metrics(tmp_path):
    from ctxselect.evaluate.regression import compare, record_values

    result = runner.invoke(app, ["bench", EXAMPLE, "--methods", "greedy", "--json"])
    data = json.loads(result.stdout)
    assert record_values(data["records"][0], "map") == data["records"][0]["labelled"]["ap"]
    assert record_values(data["records"][0], "self_consistency") is None  # no paraphrases in the dump
    broken = runner.invoke(app, ["bench", EXAMPLE, "--methods", "greedy", "--fail-under", "map=0.99",
                                 "--fail-under", "quality_score=0"])
    assert broken.exit_code == 1 and "--fail-under map=0.99: greedy map = " in broken.stderr
    assert "quality_score" not in broken.stderr
    # a baseline saved before these metrics existed: they are left out of the comparison
    old = json.loads(json.dumps(data))
    for record in old["records"]:
        for key in ("labelled", "relevance", "quality_score", "self_consistency"):
            record.pop(key)
    metrics = {d.metric for d in compare(data, old)}
    assert "objective" in metrics and not metrics & {"map", "quality_score", "relevance_weighted", "recall@20"}
    assert {"map", "quality_score", "relevance_weighted", "recall@20", "density"} <= {d.metric for d in compare(data, data)}


def test_bench_names_the_file_and_query_of_a_bad_paraphrase(tmp_path):
    rows = [json.loads(line) for line in open(EXAMPLE).read().splitlines()]
    rows[1]["paraphrases"] = ["refund window", 3]
    dump = tmp_path / "para.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = runner.invoke(app, ["bench", str(dump), "--methods", "greedy"])
    assert result.exit_code == 2
    assert f"{dump}, query '{rows[1]['query_id']}', field 'paraphrases[1]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    ok = runner.invoke(app, ["bench", str(dump), "--methods", "greedy", "--paraphrases", "none"])
    assert ok.exit_code == 0, ok.output
