"""`ctxselect inspect` through typer's CliRunner."""

import json

from typer.testing import CliRunner

from ctxselect.cli.core import app
from tests.conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


def test_inspect_table_and_exit_code():
    result = runner.invoke(app, ["inspect", EXAMPLE])
    assert result.exit_code == 1, result.output  # two of three example contexts fail on purpose
    assert "support-refund-annual" in result.output and "FAIL" in result.output
    assert "policy_admissibility" in result.output
    assert "2 of 3 queries failed the gate" in result.output


def test_inspect_json_parses_and_matches_library():
    import ctxselect

    result = runner.invoke(app, ["inspect", EXAMPLE, "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["passed"], data["failed"]) == (1, 2)
    by_id = {q["query_id"]: q for q in data["queries"]}
    query = next(iter(ctxselect.read_dump(EXAMPLE)))
    chosen = [c for c in query.candidates if c.id in set(query.selected)]
    expected = ctxselect.inspect(chosen, query.requirements).metrics
    assert by_id[query.query_id]["metrics"] == expected
    assert by_id[query.query_id]["ids"] == query.selected
    assert by_id["support-refund-window"]["ids"] == [c["id"] for c in
                                                    json.loads(open(EXAMPLE).read().splitlines()[2])["candidates"]]


def test_inspect_exit_zero_when_all_pass(tmp_path):
    line = json.loads(open(EXAMPLE).read().splitlines()[1])  # the passing query
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps(line) + "\n")
    result = runner.invoke(app, ["inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert "Every query passed the gate." in result.output


def test_inspect_bad_dump_is_one_line_exit_two(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"query_id": "q", "requirements": {"token_budget": 0}, "candidates": []}\n')
    result = runner.invoke(app, ["inspect", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "line 1" in result.stderr and "token_budget" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_inspect_missing_file_and_empty_dump(tmp_path):
    result = runner.invoke(app, ["inspect", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2 and "cannot open dump" in result.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = runner.invoke(app, ["inspect", str(empty)])
    assert result.exit_code == 2 and "holds no query" in result.stderr


def _strict(text: str):
    """``text`` parsed as strict JSON: NaN, Infinity and -Infinity are refused."""
    def refuse(token):
        raise AssertionError(f"{token} is no JSON")
    return json.loads(text, parse_constant=refuse)


def test_json_output_never_holds_nan(tmp_path, monkeypatch):
    """--json wrote whatever json.dumps wrote, NaN included (invalid JSON); the one writer is strict:
    a NaN (a bug: quality_score is made to return one here) is an error, never a NaN token."""
    monkeypatch.setattr("ctxselect.cli.quality_cmd.quality_score", lambda metrics: float("nan"))
    result = CliRunner().invoke(app, ["inspect", str(EXAMPLES / "support_desk.jsonl"), "--json", "-q"])
    assert "NaN" not in result.stdout
    assert result.exit_code != 0 and isinstance(result.exception, ValueError)


def test_json_output_with_overflowing_aspect_weights_is_strict_json(tmp_path):
    """Aspect weights of 1e308 (their sum is inf) made coverage_weighted NaN in --json."""
    line = {"query_id": "q1", "requirements": {"token_budget": 20, "required_aspects": dict.fromkeys("abc", 1e308)},
            "candidates": [{"id": "c0", "relevance": 0.9, "tokens": 5, "aspects": ["a", "b", "c"]},
                           {"id": "c1", "relevance": 0.5, "tokens": 5}]}
    dump = tmp_path / "d.jsonl"
    dump.write_text(json.dumps(line) + "\n")
    for command in (["inspect"], ["select", "--method", "optimal"], ["bench", "--methods", "greedy"]):
        result = CliRunner().invoke(app, [*command, str(dump), "--json", "-q"])
        assert result.exit_code in (0, 1), result.output
        assert '"coverage_weighted": 1.0' in result.stdout
        _strict(result.stdout)
