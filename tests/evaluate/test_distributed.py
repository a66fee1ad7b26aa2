"""The bench on Dask (issue 16.6): partitions read by the workers give the local run's records
(latencies apart) and the local run's first error, on a 2-worker LocalCluster that is closed with
no process left; without dask, one line naming the extra; the core never imports dask.

The merge is tested first without a cluster (run_partition called in this process, the results
taken in a shuffled order), the cluster then with the command line."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from ctxselect.cli.core import app
from ctxselect.errors import InputError
from ctxselect.evaluate.bench import run_bench
from ctxselect.evaluate.distributed import _Merger, _split, run_bench_dask, run_partition
from ctxselect.model.io import read_dump
from tests.conftest import EXAMPLES, ROOT

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")
METHODS = ["greedy", "mmr", "optimal"]
GOOD = {"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "gen.jsonl"
    result = runner.invoke(app, ["gen", str(path), "--queries", "6", "--candidates", "30", "--seed", "7"])
    assert result.exit_code == 0, result.output
    return str(path)


def _line(qid, **candidate):
    return json.dumps({"query_id": qid, "requirements": {"token_budget": 5}, "candidates": [{**GOOD, **candidate}]})


def _strip(records):
    return [dataclasses.replace(r, latency=0.0) for r in records]


def local(dumps, methods=METHODS, **options):
    """The local run as the command line makes it: every dump read, then the bench."""
    try:
        return run_bench([q for d in dumps for q in read_dump(d)], methods, **options)
    except InputError as err:
        return str(err)


def merged(dumps, target, methods=METHODS, seed=0, budget=None, budget_scale=None):
    """The Dask client's merge of every partition's result, taken in a shuffled order."""
    parts = _split(dumps, target, 2)
    merger = _Merger(parts)
    order = [k for k, p in enumerate(parts) if not isinstance(p, InputError)]
    random.Random(seed).shuffle(order)
    try:
        merger.flush()
        for k in order:
            merger.add(k, run_partition(parts[k], methods, {}, [], budget, budget_scale))
        if merger.budget_error is not None:
            raise merger.budget_error
        return merger
    except InputError as err:
        return str(err)


def test_the_merge_in_any_order_is_the_local_run(generated):
    want = local([generated, EXAMPLE])
    size = sum(len(open(d, "rb").read()) for d in (generated, EXAMPLE))
    for target, seed in ((size, 0), (4000, 1), (1000, 2), (50, 3)):
        got = merged([generated, EXAMPLE], target, seed=seed)
        assert _strip(got.records) == _strip(want.records), target
        assert got.queries == want.queries == 9


def test_errors_are_the_local_runs(tmp_path, generated):
    lines = [_line(f"q{k}") for k in range(6)]
    cases = {
        "bad_field": lines[:3] + [_line("q9", relevance=2)] + lines[3:],
        "duplicate_across_partitions": lines + ["", _line("q1")],
        "duplicate_then_bad_json": lines[:2] + [_line("q0"), "{oops"],
        "bad_json_then_duplicate": lines[:2] + ["{oops", _line("q0")],
        "blank_lines": ["", "  "] + lines[:2] + ["", "[1]"],
    }
    for name, content in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(content) + "\n")
        want = local([generated, str(path)], ["greedy"])
        assert isinstance(want, str) and path.name in want, (name, want)
        for target in (60, 200, 10_000):
            assert merged([generated, str(path)], target, ["greedy"], seed=target) == want, (name, target)
    # a dump that cannot be opened after one with a bad line: the bad line first, as read in order
    bad = tmp_path / "bad_field.jsonl"
    missing = str(tmp_path / "missing.jsonl")
    assert merged([str(bad), missing], 100, ["greedy"]) == local([str(bad), missing], ["greedy"])
    assert "missing.jsonl: cannot open dump" in merged([generated, missing], 100, ["greedy"])
    # a budget overflow is raised only when every dump read cleanly (a later read error wins)
    scale = {"budget_scale": 1e308}
    assert merged([generated], 1000, ["greedy"], **scale) == local([generated], ["greedy"], **scale)
    assert "field 'budget_scale'" in local([generated], ["greedy"], **scale)
    assert merged([generated, str(bad)], 1000, ["greedy"], **scale) == local([generated, str(bad)], ["greedy"], **scale)


def test_without_dask_one_line_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    result = runner.invoke(app, ["bench", EXAMPLE, "--engine", "dask"])
    assert result.exit_code == 2
    assert result.stderr == ("ctxselect: error: field '--engine': the dask engine needs dask.distributed; "
                             "expected pip install 'ctxselect[dask]'\n")


def test_engine_options_that_do_not_go_together():
    cases = [(["--engine", "dask", "--jobs", "2"], "field '--jobs': --jobs sets the local engine's processes"),
             (["--engine", "dask", "--workers", "2", "--scheduler", "tcp://h:1"], "field '--workers': the cluster"),
             (["--scheduler", "tcp://h:1"], "field '--scheduler': this option is for --engine dask"),
             (["--workers", "2"], "field '--workers': this option is for --engine dask"),
             (["--engine", "spark"], "'spark' is not one of")]
    for args, fragment in cases:
        result = runner.invoke(app, ["bench", EXAMPLE, *args])
        assert result.exit_code == 2 and fragment in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_a_scheduler_that_is_no_address_is_one_line_before_any_client(monkeypatch):
    """--scheduler '' was Dask's ValueError after a client had started: one line, then at exit a
    40 s wait and a TimeoutError traceback from the half-made client's __del__."""
    made = []

    class NoClient:
        def Client(self, *args, **kwargs):  # noqa: N802 - distributed.Client's name
            made.append(args)
            raise AssertionError("a client was made")

    monkeypatch.setattr("ctxselect.evaluate.distributed._dask", NoClient)
    for address in ("", " ", " tcp://h:8786", "tcp://h", "scheduler", "tcp://h:0", "tcp://h:99999", "tcp://h:1x",
                    "tcp://h:8786/path", "tcp://a b:8786", "foo://h:8786", "inproc://h:8786", "tcp://h:８７８６"):
        result = runner.invoke(app, ["bench", EXAMPLE, "--engine", "dask", "--scheduler", address])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, (address, result.output)
        assert result.stderr.startswith("ctxselect: error: field '--scheduler': not a Dask scheduler address; "
                                        "expected [SCHEME://]HOST:PORT with a port from 1 to 65535"), result.stderr
    assert made == []
    from ctxselect.evaluate.distributed import check_scheduler

    for address in ("tcp://scheduler:8786", "scheduler:8786", "tcp://10.0.0.2:1", "tcp://[::1]:65535", "tls://h:8786"):
        assert check_scheduler(address) == address
    with pytest.raises(InputError, match="field 'scheduler': not a Dask scheduler address"):
        run_bench_dask([EXAMPLE], ["greedy"], scheduler="")
    assert made == []


@pytest.mark.parametrize("address", ["", "tls://127.0.0.1:1"])
def test_a_bad_scheduler_leaves_no_traceback_at_exit(address):
    """The whole process: one line and exit 2, at once. '' is refused before any client; tls://
    without a TLS configuration fails in the client's constructor (a TypeError), whose half-made
    client is closed (before: the TypeError's traceback, then 40 s and a second one at exit)."""
    pytest.importorskip("distributed")
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ctxselect", "bench", EXAMPLE, "--methods", "greedy", "--engine",
                          "dask", "--scheduler", address], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("ctxselect: error: field '--scheduler': "), out.stderr
    assert time.monotonic() - started < 20


def test_workers_beyond_twice_the_cpus_are_refused_before_any_cluster(monkeypatch):
    """--workers had no upper bound: 64 local workers on 2 cores started 64 processes, and their
    shutdown printed 36 tracebacks on a run that exited 0. Now at most twice the CPU count."""
    made = []

    def no_cluster(workers):
        made.append(workers)
        raise AssertionError("a cluster was made")

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr("ctxselect.evaluate.distributed.local_cluster", no_cluster)
    for value in ("5", "64", "1000000"):
        result = runner.invoke(app, ["bench", EXAMPLE, "--engine", "dask", "--workers", value])
        assert result.exit_code == 2, result.output
        assert result.stderr == ("ctxselect: error: field '--workers': a local cluster runs at most 4 worker processes "
                                 f"here (twice the 2 CPUs); expected an integer from 1 to 4, found {value}\n")
    with pytest.raises(InputError, match="field 'workers': a local cluster runs at most 4"):
        run_bench_dask([EXAMPLE], ["greedy"], workers=5)
    assert made == []
    from ctxselect.evaluate.distributed import check_workers, max_local_workers

    assert max_local_workers() == 4 and [check_workers(n) for n in (1, 4)] == [1, 4]
    result = runner.invoke(app, ["bench", EXAMPLE, "--engine", "dask", "--workers", "0"])
    assert result.exit_code == 2 and "Invalid value for '--workers'" in result.stderr


def test_the_core_never_imports_dask():
    probe = ("import sys, ctxselect, ctxselect.cli, ctxselect.evaluate.distributed, ctxselect.model.partitions\n"
             "from ctxselect.model.io import read_dump\n"
             f"q = next(iter(read_dump({EXAMPLE!r})))\n"
             "ctxselect.select(q.candidates, q.requirements, q.query, 'optimal')\n"
             "print([m for m in ('dask', 'distributed') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- on a LocalCluster ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("distributed")
    psutil = pytest.importorskip("psutil")
    from ctxselect.evaluate.distributed import local_cluster

    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    cluster = local_cluster(2)
    yield cluster
    cluster.close()
    left = [p for p in me.children(recursive=True) if p.pid not in before and p.is_running()
            and "resource_tracker" not in " ".join(p.cmdline())]
    assert left == [], [p.cmdline() for p in left]


def _json(args):
    result = runner.invoke(app, ["bench", *args, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for record in data["records"]:
        record.pop("latency")
    for summary in data["summaries"]:
        summary.pop("latency_p50"), summary.pop("latency_p95")
    return data


def test_the_cluster_gives_the_local_records(cluster, generated):
    args = [generated, EXAMPLE, "--methods", ",".join(METHODS)]
    on_dask = _json([*args, "--engine", "dask", "--scheduler", cluster.scheduler_address])
    assert on_dask == _json(args)
    assert on_dask["queries"] == 9
    from ctxselect.evaluate.distributed import run_bench_dask

    seen = []
    small = run_bench_dask([generated, EXAMPLE], METHODS, scheduler=cluster.scheduler_address, partition_bytes=3000,
                           budget_scale=0.5, by=["query_id"], progress=lambda done, total, n: seen.append((done, total, n)))
    want = local([generated, EXAMPLE], budget_scale=0.5, by=["query_id"])
    assert _strip(small.records) == _strip(want.records)
    assert small.records[0].group == {"query_id": small.records[0].query_id}
    assert len(seen) > 4 and seen[-1][0] == seen[-1][1] and seen[-1][2] == 9  # several partitions, all done


def test_an_error_in_a_partition_is_the_local_line(cluster, tmp_path, generated):
    path = tmp_path / "bad.jsonl"
    path.write_text(open(generated).read() + _line("qx", relevance=2) + "\n")
    on_dask = runner.invoke(app, ["bench", str(path), "--engine", "dask", "--scheduler", cluster.scheduler_address])
    here = runner.invoke(app, ["bench", str(path)])
    assert on_dask.exit_code == here.exit_code == 2
    assert on_dask.stderr == here.stderr
    assert f"{path}, line 7, query 'qx', candidate 'a', field 'relevance'" in here.stderr


def test_the_default_local_cluster_starts_and_closes(tmp_path):
    pytest.importorskip("distributed")
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    result = runner.invoke(app, ["bench", EXAMPLE, "--methods", "greedy", "--engine", "dask", "--workers", "1",
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["queries"] == 3
    left = [p for p in me.children(recursive=True) if p.pid not in before and p.is_running()
            and "resource_tracker" not in " ".join(p.cmdline())]
    assert left == []


def test_a_query_id_in_two_dumps_is_the_command_lines_error(tmp_path, generated):
    """Records pair by query id: the local command refuses an id repeated across dumps, naming
    both files, and the Dask merge gives the same line."""
    again = tmp_path / "again.jsonl"
    again.write_bytes(open(generated, "rb").read())
    cli = runner.invoke(app, ["bench", generated, str(again), "--methods", "greedy"])
    assert cli.exit_code == 2 and "the query id is also in" in cli.stderr
    for target in (60, 10_000):
        got = merged([generated, str(again)], target, ["greedy"], seed=target)
        assert isinstance(got, str) and cli.stderr == f"ctxselect: error: {got}\n", (target, got)


def test_a_parquet_dump_is_read_in_row_group_partitions_as_the_local_run(tmp_path, generated, monkeypatch):
    """Parquet partitions are row groups (the client reads the footer only): the merged records
    equal the local run's whatever the partition size and the order, and a bad cell is the local
    run's line, naming the row of the file."""
    pytest.importorskip("pyarrow")
    from ctxselect.model import parquet
    from ctxselect.model.io import write_dump
    from ctxselect.model.partitions import split_file

    monkeypatch.setattr(parquet, "BATCH_ROWS", 2)  # row groups of two queries
    queries = list(read_dump(generated)) + list(read_dump(EXAMPLE))
    path = tmp_path / "dump.parquet"
    write_dump(path, queries)
    groups = parquet.parquet_row_groups(path)
    assert len(groups) >= 4 and sum(rows for rows, _ in groups) == len(queries)
    assert len(split_file(path, 1)) == len(groups) and len(split_file(path, 10**9)) == 1
    want = local([str(path)], ["greedy", "optimal"])
    for target, seed in ((1, 0), (1, 5), (10**9, 0)):
        got = merged([str(path)], target, ["greedy", "optimal"], seed=seed)
        assert _strip(got.records) == _strip(want.records) and got.queries == want.queries == len(queries)

    rows = [q.to_dict() for q in queries]
    rows[4]["candidates"] = "not a list"
    bad = tmp_path / "bad.parquet"
    parquet.write_parquet_rows(bad, rows)
    expected = local([str(bad)], ["greedy"])
    assert isinstance(expected, str) and "row 5" in expected
    for target in (1, 10**9):
        assert merged([str(bad)], target, ["greedy"]) == expected
