"""`ctxselect bench` through CliRunner: figures equal the library's; the budget scale and the plot."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from ctxselect.evaluate.bench import gold_metrics, run_bench
from tests.conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


def test_bench_json_equals_library(generated):
    result = runner.invoke(app, ["bench", str(generated), EXAMPLE, "--json", "--methods", "greedy,density,optimal"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    queries = list(ctxselect.read_dump(generated)) + list(ctxselect.read_dump(EXAMPLE))
    assert data["queries"] == len(queries) == 7
    for record in data["records"]:
        query = next(q for q in queries if q.query_id == record["query_id"])
        sel = ctxselect.select(query.candidates, query.requirements, query.query, record["method"])
        assert record["ids"] == sel.ids
        assert record["objective"] == sel.objective
        assert record["metrics"] == sel.report.metrics
        assert record["gold"] == gold_metrics(query, sel.ids)
    summary = {s["method"]: s for s in data["summaries"]}
    greedy = [r["objective"] for r in data["records"] if r["method"] == "greedy"]
    assert summary["greedy"]["objective"] == pytest.approx(np.mean(greedy))
    assert summary["greedy"]["ties"] == 7
    optimal = [r for r in data["records"] if r["method"] == "optimal"]
    assert summary["optimal"]["wins"] + summary["optimal"]["ties"] + summary["optimal"]["losses"] == 7
    assert data["queries_that_can_pass"] == sum(r["can_pass"] for r in optimal)


def test_bench_table_budget_and_plot(generated, tmp_path):
    plot = tmp_path / "bench.png"
    result = runner.invoke(app, ["bench", str(generated), "--budget-scale", "0.5", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert "optimal" in result.output and "recall" in result.output
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    queries = list(ctxselect.read_dump(generated))
    fixed = run_bench(queries, ["greedy"], budget=100)
    assert all(r.budget == 100 and r.tokens <= 100 for r in fixed.records)
    scaled = run_bench(queries, ["greedy"], budget_scale=0.5)
    assert [r.budget for r in scaled.records] == [max(1, round(q.requirements.token_budget * 0.5)) for q in queries]


def test_bad_arguments_and_dumps(tmp_path):
    cases = [
        (["bench", EXAMPLE, "--methods", "greedy,best"], "field '--methods': expected one of greedy"),
        (["bench", EXAMPLE, "--methods", "greedy,greedy"], "each method once"),
        (["compare", EXAMPLE, "--query", "nope"], "query 'nope': no such query in the dump"),
        (["bench", str(tmp_path / "missing.jsonl")], "cannot open dump"),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q", "requirements": {"token_budget": 5}, "candidates": [{"id": "a", "source": "s", "tokens": 1, "relevance": 2}]}\n')
    cases.append((["bench", str(bad)], "line 1, query 'q', candidate 'a', field 'relevance'"))
    cases.append((["compare", str(bad), "--query", "q"], "field 'relevance'"))
    for args, fragment in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert fragment in result.stderr, (args, result.stderr)
        assert result.stderr.count("\n") == 1
    assert runner.invoke(app, ["bench", EXAMPLE, "--jobs", "0"]).exit_code == 2
    assert runner.invoke(app, ["gen", str(tmp_path / "g.jsonl"), "--required-sources", "9"]).exit_code == 2


def _paraphrase_dump(tmp_path, paraphrases, requirements=None):
    base = {"query": "why", "requirements": requirements or {"token_budget": 10},
            "candidates": [{"id": "c", "relevance": 0.5, "tokens": 1, "text": "a b", "source": "s"}]}
    path = tmp_path / "para.jsonl"
    lines = [dict(base, query_id="q0"), dict(base, query_id="q1", paraphrases=paraphrases)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bench_names_the_dump_query_and_paraphrase_of_a_paraphrase_too_long(tmp_path, jobs):
    path = _paraphrase_dump(tmp_path, ["x " * 1_100_000])
    result = runner.invoke(app, ["bench", "--methods", "greedy", "--jobs", jobs, str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"ctxselect: error: {path}, query 'q1', field 'paraphrases[0]': expected at most")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_bench_names_the_dump_query_and_paraphrase_of_a_paraphrase_candidate(tmp_path, jobs):
    """A paraphrase's own candidates meet the source rule only when the bench selects them."""
    own = {"query": "a", "candidates": [{"id": "z", "relevance": 0.2, "tokens": 3, "text": "zz"}]}
    path = _paraphrase_dump(tmp_path, ["ok", own], {"token_budget": 10, "required_sources": ["s"]})
    result = runner.invoke(app, ["bench", "--methods", "greedy", "--jobs", jobs, str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"ctxselect: error: {path}, query 'q1 (paraphrases[1])', candidate 'z', "
                                    "field 'source': missing required field")

