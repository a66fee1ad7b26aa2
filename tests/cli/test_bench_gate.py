"""`ctxselect bench` as a release gate (issue 16.1) and grouped by a dump field (16.2), through
CliRunner on the generated dump."""

import json

from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from ctxselect.evaluate.bench import MISSING, run_bench, summarize, summarize_groups

runner = CliRunner()


def test_bench_exits_1_on_a_planted_regression_and_0_without(tmp_path, generated):
    """The issue's Done-when: a greedy run against an optimal baseline breaks the gate; the same
    method against itself does not."""
    base = tmp_path / "optimal.json"
    done = runner.invoke(app, ["bench", str(generated), "--methods", "optimal", "--json"])
    assert done.exit_code == 0, done.output
    base.write_text(done.stdout)
    same = runner.invoke(app, ["bench", str(generated), "--methods", "optimal", "--baseline", str(base),
                               "--max-drop", "objective=0.001", "--max-drop", "recall=0"])
    assert same.exit_code == 0, same.output
    assert "against the baseline" in same.stdout
    planted = runner.invoke(app, ["bench", str(generated), "--methods", "greedy", "--baseline", str(base),
                                  "--max-drop", "gate_pass=0.1", "--json"])
    assert planted.exit_code == 1, planted.output
    gate = json.loads(planted.stdout)["release_gate"]
    assert gate["broken"] and gate["broken"][0].startswith("--max-drop gate_pass=0.1: greedy gate_pass")
    assert "release gate broken: --max-drop gate_pass=0.1" in planted.stderr
    under = runner.invoke(app, ["bench", str(generated), "--methods", "greedy", "--fail-under", "gate_pass=1.01"])
    assert under.exit_code == 1 and "greedy gate_pass" in under.stderr


def test_bad_rules_and_baselines_fail_before_the_bench(generated, tmp_path):
    for args in (["--fail-under", "bogus=1"], ["--max-drop", "recall"], ["--baseline", str(tmp_path / "none.json")]):
        done = runner.invoke(app, ["bench", str(generated), "--methods", "greedy", *args])
        assert done.exit_code == 2 and done.stderr.count("\n") == 1, (args, done.output)


def test_by_groups_every_table_with_counts(generated):
    queries = list(ctxselect.read_dump(generated))
    result = run_bench(queries, ["greedy", "optimal"], by=["query_id", "meta.nothing"])
    groups = summarize_groups(result, "query_id")
    assert sorted(groups) == sorted(q.query_id for q in queries)
    for value, part in groups.items():
        records = [r for r in result.records if r.query_id == value]
        assert part.queries == 1
        assert part.summaries == summarize(records, result.methods, queries=1).summaries
    assert list(summarize_groups(result, "meta.nothing")) == [MISSING]
    data = result.to_dict()
    assert set(data["groups"]) == {"query_id", "meta.nothing"}
    assert sum(g["queries"] for g in data["groups"]["query_id"].values()) == len(queries)
    done = runner.invoke(app, ["bench", str(generated), "--methods", "greedy", "--by", "query_id"])
    assert done.exit_code == 0 and all(f"query_id = {q.query_id}" in done.stdout for q in queries)


def test_review_findings_are_one_line_errors_before_any_work(generated, tmp_path):
    """Query ids repeated across dumps (records pair by id), --by on a field holding chunks or a
    list, a rule naming a method the run lacks, a baseline of other methods, a non-decimal digit:
    each one located line, exit 2."""
    import re

    other = tmp_path / "again.jsonl"
    other.write_bytes(generated.read_bytes())
    dump = str(generated)
    base = tmp_path / "base.json"
    base.write_text(runner.invoke(app, ["bench", dump, "--methods", "topk", "--json"]).stdout)
    cases = [
        (["bench", dump, str(other), "--methods", "greedy"], "the query id is also in"),
        (["bench", dump, "--methods", "greedy", "--by", "candidates"], "holds chunks or ids"),
        (["bench", dump, "--methods", "greedy", "--by", "requirements.required_sources"], "not a group"),
        (["bench", dump, "--methods", "greedy", "--fail-under", "optimal.recall=0.5"], "names optimal"),
        (["bench", dump, "--methods", "greedy,optimal", "--baseline", str(base)], "none of the methods"),
        (["bench", dump, "--methods", "greedy", "--depths", "\u00b2"], "field '--depths'"),
    ]
    for args, fragment in cases:
        done = runner.invoke(app, args)
        assert done.exit_code == 2, (args, done.output)
        assert fragment in done.stderr and done.stderr.count("\n") == 1, (args, done.stderr)
    assert re.search(r"again\.jsonl.*query '\S+', field 'query_id'", runner.invoke(app, cases[0][0]).stderr)
    ok = runner.invoke(app, ["bench", dump, "--methods", "greedy", "--by", "requirements.token_budget"])
    assert ok.exit_code == 0 and "requirements.token_budget = " in ok.stdout
    wide = runner.invoke(app, ["inspect", dump], env={"COLUMNS": "\u00b2", "LINES": "x"})
    assert wide.exit_code in (0, 1) and "Traceback" not in wide.output


def test_a_baseline_method_name_is_never_markup(generated, tmp_path):
    done = runner.invoke(app, ["bench", str(generated), "--methods", "greedy", "--json"])
    data = json.loads(done.stdout)
    data["methods"] = ["[/bold]x"]
    for record in data["records"]:
        record["method"] = "[/bold]x"
    path = tmp_path / "base.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["bench", str(generated), "--methods", "greedy", "--baseline", str(path)])
    assert result.exit_code == 2 and "methods[0]" in result.stderr and result.stderr.count("\n") == 1
