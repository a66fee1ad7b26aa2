"""Parquet dumps through every command (issue 15.6): chosen by the .parquet extension, the same
results as JSONL, errors naming the row, and one line naming the extra without pyarrow."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app

pytest.importorskip("pyarrow")
runner = CliRunner()


def run(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def without_timings(stdout: str) -> list:
    return [{k: v for k, v in q.items() if k != "timings"} for q in json.loads(stdout)["queries"]]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """The same generated dump as JSONL and as Parquet, both written by `gen`."""
    folder = tmp_path_factory.mktemp("parquet")
    knobs = ["--queries", "3", "--candidates", "20", "--seed", "2", "--embedding-dim", "4"]
    for name in ("g.jsonl", "g.parquet"):
        assert run("gen", folder / name, *knobs).exit_code == 0
    return folder / "g.jsonl", folder / "g.parquet"


def test_gen_writes_parquet_that_reads_as_the_jsonl(pair):
    jsonl, parquet = pair
    assert parquet.read_bytes()[:4] == b"PAR1"
    assert [q.to_dict() for q in ctxselect.read_dump(parquet)] == [q.to_dict() for q in ctxselect.read_dump(jsonl)]


@pytest.mark.parametrize("args", [["select", "--method", "greedy", "--json"], ["inspect", "--json"]])
def test_select_and_inspect_read_parquet_as_jsonl(pair, args):
    jsonl, parquet = pair
    a, b = run(args[0], jsonl, *args[1:]), run(args[0], parquet, *args[1:])
    assert a.exit_code == b.exit_code and a.exit_code in (0, 1)
    assert without_timings(a.stdout) == without_timings(b.stdout)


def test_bench_and_compare_read_parquet(pair):
    jsonl, parquet = pair
    strip = lambda out: [{k: v for k, v in r.items() if k != "latency"} for r in json.loads(out)["records"]]  # noqa: E731
    a = run("bench", jsonl, "--methods", "greedy,density", "--json")
    b = run("bench", parquet, "--methods", "greedy,density", "--json")
    assert a.exit_code == b.exit_code == 0 and strip(a.stdout) == strip(b.stdout)
    qid = next(ctxselect.read_dump(parquet)).query_id
    assert run("compare", parquet, "--query", qid).exit_code == 0


def test_select_out_parquet_and_inspect_it(pair, tmp_path):
    _, parquet = pair
    out = tmp_path / "sel.parquet"
    result = run("select", parquet, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    chosen = {row["query_id"]: row["ids"] for row in json.loads(result.stdout)["queries"]}
    assert {q.query_id: q.selected for q in ctxselect.read_dump(out)} == chosen
    assert run("inspect", out).exit_code in (0, 1)


def test_a_bad_row_is_one_located_line(tmp_path):
    line = {"query_id": "q", "requirements": {"token_budget": 5},
            "candidates": [{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}]}
    bad = dict(line, query_id="r", candidates=[{"id": "b", "source": "s", "tokens": -1, "relevance": 0.5}])
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text(json.dumps(line) + "\n" + json.dumps(bad) + "\n")
    pyarrow, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    table = pyarrow.table({"query_id": ["q", "r"], "requirements": [json.dumps(x["requirements"]) for x in (line, bad)],
                           "candidates": [json.dumps(x["candidates"]) for x in (line, bad)]})
    pq.write_table(table, tmp_path / "bad.parquet")
    for name, where in (("bad.jsonl", "line 2"), ("bad.parquet", "row 2")):
        result = run("select", tmp_path / name)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1
        assert f"{name}, {where}, query 'r', candidate 'b', field 'tokens'" in result.stderr, result.stderr


def test_ablation_variants_are_not_a_parquet_dump(pair, tmp_path):
    result = run("ablate", pair[1], "--out", tmp_path / "v.parquet")
    assert result.exit_code == 2 and "ablation variants are written as JSON lines" in result.stderr
    assert not list(tmp_path.iterdir())


def test_without_pyarrow_every_command_says_which_extra(pair, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    for args in (["inspect", pair[1]], ["select", pair[0], "--out", tmp_path / "s.parquet"],
                 ["gen", tmp_path / "g.parquet", "--queries", "1"], ["bench", pair[1]]):
        result = run(*args)
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, args
        assert "Parquet dumps need pyarrow; expected pip install 'ctxselect[parquet]'" in result.stderr, args
    assert not list(tmp_path.iterdir())
    assert run("select", pair[0], "--method", "greedy").exit_code == 0  # JSONL needs no pyarrow
