"""`ctxselect select` and `compare` through typer's CliRunner: tables, JSON equal to the library, --out."""

import json

from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from tests.conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


def test_select_table():
    result = runner.invoke(app, ["select", EXAMPLE, "--excluded"])
    assert result.exit_code == 0, result.output
    assert "support-refund-annual" in result.output and "optimal" in result.output
    assert "internal-fraud-notes: inadmissible" in result.output


def test_select_json_equals_library():
    result = runner.invoke(app, ["select", EXAMPLE, "--json", "--method", "density", "--order", "rank"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)["queries"]
    for query, row in zip(ctxselect.read_dump(EXAMPLE), data):
        sel = ctxselect.select(query.candidates, query.requirements, query.query, "density", order="rank")
        assert row["ids"] == sel.ids and row["objective"] == sel.objective
        assert row["excluded"] == sel.excluded and row["report"]["metrics"] == sel.report.metrics


def test_select_out_writes_selected(tmp_path):
    out = tmp_path / "selected.jsonl"
    result = runner.invoke(app, ["select", EXAMPLE, "--out", str(out), "--json"])
    assert result.exit_code == 0
    written = list(ctxselect.read_dump(out))
    chosen = {row["query_id"]: row["ids"] for row in json.loads(result.stdout)["queries"]}
    assert [q.selected for q in written] == [chosen[q.query_id] for q in written]
    inspected = runner.invoke(app, ["inspect", str(out)])
    assert inspected.exit_code == 0, inspected.output  # the optimizer's contexts pass the gate


def test_select_bad_arguments_and_input(tmp_path):
    result = runner.invoke(app, ["select", EXAMPLE, "--method", "best"])
    assert result.exit_code == 2 and "best" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q", "requirements": {"token_budget": 10}, "candidates": [{"id": "a"}]}\n')
    out = tmp_path / "never.jsonl"
    result = runner.invoke(app, ["select", str(bad), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.startswith("ctxselect: error: ") and result.stderr.count("\n") == 1
    assert "candidate 'a', field 'relevance'" in result.stderr  # source is optional (issue 15.3)
    assert not out.exists()


def test_compare():
    query_id = next(ctxselect.read_dump(EXAMPLE)).query_id
    result = runner.invoke(app, ["compare", EXAMPLE, "--query", query_id, "--a", "greedy", "--b", "optimal"])
    assert result.exit_code == 0, result.output
    assert "Left out by both (3), by B's reason: stale (1); inadmissible (1); conflicts (1)" in " ".join(
        result.stdout.split()) and "B - A" in result.output
    data = json.loads(runner.invoke(app, ["compare", EXAMPLE, "--query", query_id, "--json"]).stdout)
    assert data["a"]["method"] == "greedy" and data["b"]["method"] == "optimal"


def test_select_lists_unresolved_conflicts_and_takes_the_outcome(tmp_path):
    fact = "Officials said the storm power outage in the northern district affected {n} people last week."
    line = {"query_id": "q", "query": "how many people", "requirements": {"token_budget": 200},
            "candidates": [{"id": "a[b]", "source": "news", "tokens": 30, "relevance": 0.8, "text": fact.format(n="3,559")},
                           {"id": "b", "source": "wire", "tokens": 30, "relevance": 0.8, "text": fact.format(n="10,000")}]}
    dump = tmp_path / "even.jsonl"
    dump.write_text(json.dumps(line) + "\n")
    shown = runner.invoke(app, ["select", str(dump), "--on-unresolved", "keep_both"])
    assert shown.exit_code == 0, shown.output
    assert "sources disagree: `a[b]` states '3,559 people', `b` states '10,000 people' (both eligible)" in shown.stdout
    data = json.loads(runner.invoke(app, ["select", str(dump), "--json"]).stdout)["queries"][0]  # drop_both
    assert data["status"] == "empty" and data["unresolved"][0]["outcome"] == "both left out"
    bad = runner.invoke(app, ["select", str(dump), "--on-unresolved", "keep"])
    assert bad.exit_code == 2 and "keep_stronger" in bad.output


def test_version_and_short_help():
    from importlib.metadata import version

    shown = runner.invoke(app, ["--version"])
    assert shown.exit_code == 0 and shown.stdout.strip() == f"ctxselect {version('ctxselect')}"
    for args in (["-h"], ["select", "-h"], ["bench", "-h"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Usage: ctxselect" in result.stdout, args


def test_a_dump_from_standard_input():
    from pathlib import Path

    text = Path(EXAMPLE).read_text()
    piped = runner.invoke(app, ["select", "-", "--json"], input=text)
    from_file = runner.invoke(app, ["select", EXAMPLE, "--json"])
    assert piped.exit_code == 0, piped.output
    strip = lambda out: [{k: v for k, v in q.items() if k != "timings"} for q in json.loads(out)["queries"]]  # noqa: E731
    assert strip(piped.stdout) == strip(from_file.stdout)
    bad = runner.invoke(app, ["inspect", "-"], input="{not json\n")
    assert bad.exit_code == 2 and "<stdin>, line 1:" in bad.output


def test_compare_shows_what_differs_and_why_within_80_columns():
    """Issue 17.5: the chunks in both, those only one side holds — each with the other side's
    reason — and a tally of the rest, every line within 80 columns."""
    query_id = "support-refund-annual"
    result = runner.invoke(app, ["compare", EXAMPLE, "--query", query_id], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    query = next(q for q in ctxselect.read_dump(EXAMPLE) if q.query_id == query_id)
    a = ctxselect.select(query.candidates, query.requirements, query.query, "greedy")
    b = ctxselect.select(query.candidates, query.requirements, query.query, "optimal")
    text = " ".join(result.stdout.split())
    for cid in set(a.ids) - set(b.ids):
        assert f"{cid} (" in text and " ".join(f"B left it out: {b.excluded[cid]}".split()) in text
    for cid in set(b.ids) - set(a.ids):
        assert " ".join(f"A left it out: {a.excluded[cid]}".split()) in text
    assert f"In both ({len(set(a.ids) & set(b.ids))})" in text
    assert ("FAILS the gate" in text) == (not a.report.passed)


def _compare_dump(tmp_path, *lines: str) -> str:
    path = tmp_path / "dump.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


_LINE = json.dumps({"query_id": "q1", "requirements": {"token_budget": 10},
                    "candidates": [{"id": "c", "relevance": 0.5, "tokens": 1, "text": "a"}]})


def test_compare_refuses_a_duplicate_query_id_as_select_does(tmp_path):
    dump = _compare_dump(tmp_path, _LINE, _LINE)
    for args in (["select", dump], ["compare", dump, "--query", "q1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert f"{dump}, line 2, query 'q1'" in result.stderr and "duplicate query id" in result.stderr


def test_compare_refuses_a_malformed_line_after_the_query(tmp_path):
    dump = _compare_dump(tmp_path, _LINE, "{bad json")
    result = runner.invoke(app, ["compare", dump, "--query", "q1"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"ctxselect: error: {dump}, line 2: malformed JSON")
