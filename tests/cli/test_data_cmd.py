"""`ctxselect gen`, `ablate` and `audit` through CliRunner."""

import json

import pytest
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from tests.conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


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


def test_gen_is_deterministic_and_labelled(generated, tmp_path):
    again = tmp_path / "again.jsonl"
    assert runner.invoke(app, ["gen", str(again), "--queries", "4", "--candidates", "30", "--seed", "5"]).exit_code == 0
    assert again.read_text() == generated.read_text()
    queries = list(ctxselect.read_dump(generated))
    assert len(queries) == 4 and all(len(q.candidates) == 30 and q.gold for q in queries)
    other = tmp_path / "other.jsonl"
    runner.invoke(app, ["gen", str(other), "--queries", "4", "--candidates", "30", "--seed", "6",
                        "--embedding-dim", "8"])
    assert other.read_text() != generated.read_text()
    assert len(next(ctxselect.read_dump(other)).candidates[0].embedding) == 8


def test_gen_example_writes_the_packaged_example(tmp_path):
    from ctxselect.evaluate.examples import example_path

    assert example_path("support_desk").read_bytes() == (EXAMPLES / "support_desk.jsonl").read_bytes()
    out = tmp_path / "support_desk.jsonl"
    result = runner.invoke(app, ["gen", "--example", "support_desk", str(out)])
    assert result.exit_code == 0 and result.stderr == f"wrote 3 queries to {out}\n"
    assert [q.to_dict() for q in ctxselect.read_dump(out)] == [q.to_dict() for q in ctxselect.read_dump(EXAMPLE)]
    piped = runner.invoke(app, ["gen", "--example", "support_desk", "-"])
    assert piped.exit_code == 0 and piped.stdout_bytes == out.read_bytes()
    for args, fragment in ((["gen", "--example", "nope", str(out)], "field '--example': no example 'nope'"),
                           (["gen", "--example", "support_desk", str(out), "--queries", "3"], "takes no generator knobs")):
        bad = runner.invoke(app, args)
        assert bad.exit_code == 2 and fragment in bad.stderr and bad.stderr.count("\n") == 1


def test_ablate_the_dumps_own_selected_context(tmp_path):
    lines = open(EXAMPLE).read().splitlines()
    dump = tmp_path / "selected.jsonl"
    rows = [json.loads(line) for line in lines]
    for row in rows:
        row["selected"] = [c["id"] for c in row["candidates"] if c.get("scope", "public") in
                           row["requirements"].get("allowed_scopes", ["public"])][:2]
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "variants.jsonl"
    result = runner.invoke(app, ["ablate", str(dump), "--out", str(out), "--context", "selected"])
    assert result.exit_code == 0, result.output
    variants = [json.loads(line) for line in out.read_text().splitlines()]
    full = {v["query_id"]: v["ids"] for v in variants if v["variant"] == "full"}
    assert full == {r["query_id"]: r["selected"] for r in rows}
    assert all(v["ids"] and v["context"] for v in variants if v["variant"].startswith("truncated_"))
    # a selector by --context equals --method
    by_context, by_method = tmp_path / "c.jsonl", tmp_path / "m.jsonl"
    assert runner.invoke(app, ["ablate", EXAMPLE, "--out", str(by_context), "--context", "greedy"]).exit_code == 0
    assert runner.invoke(app, ["ablate", EXAMPLE, "--out", str(by_method), "--method", "greedy"]).exit_code == 0
    assert by_context.read_text() == by_method.read_text()
    result = runner.invoke(app, ["ablate", EXAMPLE, "--out", str(tmp_path / "x.jsonl"), "--context", "selected"])
    assert result.exit_code == 2 and "query 'support-refund-window', field 'selected'" in result.stderr
    result = runner.invoke(app, ["ablate", str(dump), "--out", str(tmp_path / "y.jsonl"), "--context", "selected",
                                 "--method", "greedy"])
    assert result.exit_code == 2 and "field '--method'" in result.stderr


@pytest.mark.parametrize("option, value, most", [("--embedding-dim", "1000000000", "16384"),
                                                 ("--sources", "1000000000", "100000"),
                                                 ("--aspects", "100000000", "1000"),
                                                 ("--words-mean", "100000000", "100000"),
                                                 ("--queries", "100000000", "1000000"),
                                                 ("--candidates", "100000000", "1000000")])
def test_gen_sizes_beyond_memory_are_refused_before_any_work(tmp_path, option, value, most):
    # a helper's third hostile hunt: --embedding-dim 1e9 tried to allocate 60 GiB (a MemoryError traceback)
    out = tmp_path / "g.jsonl"
    result = runner.invoke(app, ["gen", str(out), option, value])
    assert result.exit_code == 2 and f"Input should be less than or equal to {most}" in result.output
    assert "Traceback" not in result.output and not out.exists()
