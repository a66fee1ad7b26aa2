"""The command line's conventions (issue 15.7): '-' for standard output, data on stdout and status on
stderr, --quiet / --verbose, progress bars on a terminal only, --requirements / --budget, output
files with the user's umask, --plot checked first, and the bench table at 80 columns."""

from __future__ import annotations

import io
import json
import logging
import os
import stat
import sys

import pytest
from rich.console import Console
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli import output as output_module
from ctxselect.cli.core import app
from tests.conftest import EXAMPLES

runner = CliRunner()
EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


def run(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def one_line_error(result, fragment: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("ctxselect: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert fragment in result.stderr, result.stderr


# -- '-' is standard output ---------------------------------------------------------------------------


def test_gen_to_standard_output_equals_the_file(tmp_path, generated):
    result = run("gen", "-", "--queries", "4", "--candidates", "30", "--seed", "5")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == generated.read_bytes()
    assert result.stderr == "wrote 4 queries to <stdout>\n"
    assert not list(tmp_path.iterdir())


def test_select_out_to_standard_output_is_the_dump_and_the_tables_go_to_stderr(tmp_path):
    to_file = tmp_path / "sel.jsonl"
    assert run("select", EXAMPLE, "--out", to_file, "--json").exit_code == 0
    piped = run("select", EXAMPLE, "--out", "-")
    assert piped.exit_code == 0, piped.output
    assert piped.stdout_bytes == to_file.read_bytes()
    assert "support-refund-annual" in piped.stderr and "gate" in piped.stderr
    both = run("select", EXAMPLE, "--out", "-", "--json")
    one_line_error(both, "--out - and --json both write standard output")


def test_ablate_out_to_standard_output(tmp_path):
    to_file = tmp_path / "v.jsonl"
    assert run("ablate", EXAMPLE, "--out", to_file, "--method", "greedy").exit_code == 0
    piped = run("ablate", EXAMPLE, "--out", "-", "--method", "greedy")
    assert piped.exit_code == 0 and piped.stdout_bytes == to_file.read_bytes()
    assert piped.stderr.startswith("wrote 18 variants of 3 queries to <stdout>")


def test_a_reader_that_leaves_early_is_no_error():
    import subprocess

    from tests.conftest import ROOT

    proc = subprocess.Popen([sys.executable, "-m", "ctxselect", "gen", "-", "--queries", "300"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.read(100).startswith(b'{"query_id": ')
    proc.stdout.close()  # as `| head -c 100` does
    assert proc.wait(timeout=300) == 141  # 128 + SIGPIPE, as a process the signal ended
    assert proc.stderr.read() == b""


def test_a_device_or_stream_is_still_refused_and_a_symlink_written_through(tmp_path):
    one_line_error(run("gen", "/dev/stdout", "--queries", "1"), "not a regular file")
    one_line_error(run("select", EXAMPLE, "--out", "/dev/null"), "/dev/null: not a regular file")
    (tmp_path / "real.jsonl").write_text("old\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to("real.jsonl")
    assert run("gen", link, "--queries", "2", "--candidates", "5").exit_code == 0
    assert link.is_symlink() and len(list(ctxselect.read_dump(tmp_path / "real.jsonl"))) == 2


@pytest.fixture
def umask():
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


@pytest.mark.parametrize("mask,expected", [(0o027, 0o640), (0o002, 0o664)])
def test_every_output_file_gets_the_umask_mode(tmp_path, umask, mask, expected):
    umask(mask)
    outputs = {"gen.jsonl": ["gen", tmp_path / "gen.jsonl", "--queries", "2", "--candidates", "5"],
               "sel.jsonl": ["select", EXAMPLE, "--out", tmp_path / "sel.jsonl", "--method", "greedy"],
               "abl.jsonl": ["ablate", EXAMPLE, "--out", tmp_path / "abl.jsonl", "--method", "greedy"],
               "plot.png": ["bench", EXAMPLE, "--methods", "greedy", "--plot", tmp_path / "plot.png"]}
    pytest.importorskip("matplotlib")
    pytest.importorskip("pyarrow")
    outputs["sel.parquet"] = ["select", EXAMPLE, "--out", tmp_path / "sel.parquet", "--method", "greedy"]
    for name, args in outputs.items():
        assert run(*args).exit_code == 0, name
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == expected, name


# -- data on stdout, status on stderr; --quiet and --verbose -----------------------------------------------


def test_machine_output_leaves_stderr_empty(tmp_path):
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps({"trace_id": "t", "chunks": [{"id": "a", "tokens": 3, "in_context": True}]}) + "\n")
    for args in (["select", EXAMPLE, "--json"], ["inspect", EXAMPLE, "--json"], ["bench", EXAMPLE, "--json",
                 "--methods", "greedy"], ["compare", EXAMPLE, "--query", "support-refund-window", "--json"],
                 ["audit", traces, "--json"]):
        result = run(*args)
        assert result.exit_code in (0, 1) and result.stderr == "", (args, result.stderr)
        json.loads(result.stdout)
    for args in (["gen", tmp_path / "g.jsonl", "--queries", "1"], ["ablate", EXAMPLE, "--out", tmp_path / "a.jsonl"]):
        result = run(*args)
        assert result.exit_code == 0 and result.stdout == "" and result.stderr.startswith("wrote "), args


def test_quiet_drops_the_status_lines_and_cannot_go_with_verbose(tmp_path):
    for flag in ("--quiet", "-q"):
        result = run("gen", tmp_path / "g.jsonl", "--queries", "1", flag)
        assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    one_line_error(run("select", EXAMPLE, "-q", "-v"), "--quiet and --verbose together")


def test_verbose_logs_the_ctxselect_logger_on_stderr_and_removes_its_handler():
    logger = logging.getLogger("ctxselect")
    before = (list(logger.handlers), logger.level)
    info = run("select", EXAMPLE, "--json", "-v", "--budget", "20")  # too small a budget: the gate is relaxed
    assert info.exit_code == 0
    assert "ctxselect: INFO: select(optimal)" in info.stderr and "DEBUG" not in info.stderr
    debug = run("select", EXAMPLE, "--json", "-vv")
    assert debug.stderr.count("ctxselect: DEBUG: select(optimal): ") == 3
    assert json.loads(debug.stdout)["queries"] and (list(logger.handlers), logger.level) == before
    assert run("select", EXAMPLE, "--json").stderr == ""


# -- progress bars ---------------------------------------------------------------------------------------


@pytest.fixture
def terminal(monkeypatch):
    """Progress bars drawn on a terminal-like console whose text the test reads."""
    screen = io.StringIO()
    monkeypatch.setattr(output_module, "progress_console",
                        lambda: Console(file=screen, force_terminal=True, width=100))
    return screen


@pytest.mark.parametrize("command,extra", [("select", ["--method", "greedy"]), ("inspect", []),
                                           ("ablate", ["--method", "greedy", "--out", "{tmp}/a.jsonl"]),
                                           ("bench", ["--methods", "greedy"])])
def test_progress_bars_on_a_terminal_only_and_never_when_quiet(terminal, tmp_path, command, extra):
    extra = [e.replace("{tmp}", str(tmp_path)) for e in extra]
    shown = run(command, EXAMPLE, *extra)
    assert shown.exit_code in (0, 1), shown.output
    drawn = terminal.getvalue()
    assert command in drawn and "3/3" in drawn, drawn
    assert "3/3" not in shown.stdout  # the bar is on stderr's console, never in the data
    terminal.seek(0)
    terminal.truncate()
    assert run(command, EXAMPLE, *extra, "--quiet").exit_code in (0, 1)
    assert terminal.getvalue() == ""


def test_no_progress_bar_when_stderr_is_not_a_terminal_or_for_one_query(tmp_path, terminal, monkeypatch):
    single = tmp_path / "one.jsonl"
    single.write_text(EXAMPLES.joinpath("support_desk.jsonl").read_text().splitlines()[0] + "\n")
    assert run("select", single, "--method", "greedy").exit_code == 0
    assert terminal.getvalue() == ""
    monkeypatch.setattr(output_module, "progress_console", lambda: Console(file=io.StringIO()))  # not a terminal
    result = run("select", EXAMPLE, "--method", "greedy")
    assert result.exit_code == 0 and result.stderr == ""


def test_a_stream_gets_a_running_count(terminal):
    result = run("inspect", "-", input=EXAMPLES.joinpath("support_desk.jsonl").read_text())
    assert result.exit_code in (0, 1)
    assert "3 queries" in terminal.getvalue()


# -- --requirements and --budget ---------------------------------------------------------------------------


def test_select_and_inspect_take_the_requirements_in_order_of_precedence(tmp_path):
    req = tmp_path / "req.toml"
    req.write_text('required_sources = ["policy"]\nallowed_scopes = ["public", "support"]\n'
                   'now = 2026-11-01T00:00:00Z\n')
    out = tmp_path / "sel.jsonl"
    result = run("select", EXAMPLE, "--requirements", req, "--out", out, "--json", "--method", "greedy")
    assert result.exit_code == 0, result.output
    written = list(ctxselect.read_dump(out))
    assert [q.requirements.token_budget for q in written] == [600, 400, 500]  # each query's own budget
    assert all(q.requirements.required_sources == {"policy": 1} and not q.requirements.required_aspects
               for q in written)
    for query, row in zip(written, json.loads(result.stdout)["queries"]):
        assert row["ids"] == ctxselect.select(query.candidates, query.requirements, query.query, "greedy").ids
    budget = run("select", EXAMPLE, "--requirements", req, "--budget", "90", "--out", out, "--json")
    assert budget.exit_code == 0
    assert {q.requirements.token_budget for q in ctxselect.read_dump(out)} == {90}
    assert all(row["report"]["tokens_used"] <= 90 for row in json.loads(budget.stdout)["queries"])
    inspected = json.loads(run("inspect", EXAMPLE, "--budget", "1000000", "--json").stdout)
    plain = json.loads(run("inspect", EXAMPLE, "--json").stdout)
    assert [q["metrics"]["token_utilization"] for q in inspected["queries"]] != \
        [q["metrics"]["token_utilization"] for q in plain["queries"]]
    assert all(q["metrics"]["token_utilization"] < 0.001 for q in inspected["queries"])


def test_bad_requirements_files_are_one_line_before_any_work(tmp_path):
    latin = tmp_path / "req.toml"
    latin.write_bytes(b'token_budget = 5\nnow = "caf\xe9"\n')
    one_line_error(run("select", EXAMPLE, "--requirements", latin),
                   "req.toml, line 2, field '--requirements': not UTF-8 text (byte 0xe9)")
    unknown = tmp_path / "r.json"
    unknown.write_text('{"bogus": 1}')
    one_line_error(run("inspect", EXAMPLE, "--requirements", unknown), "field 'requirements.bogus': unknown requirement")
    one_line_error(run("inspect", EXAMPLE, "--requirements", tmp_path / "no.toml"), "cannot open requirements file")
    one_line_error(run("select", EXAMPLE, "--budget", "0"), "Invalid value for '--budget'")


@pytest.mark.parametrize("command", ["select", "inspect"])
def test_an_unknown_weight_in_a_requirements_file_names_the_file_not_a_query(tmp_path, command):
    # select() checked the weights' names: the error was "support_desk.jsonl, query 'support-refund-annual',
    # field 'weights.bogus'", a file and a query that hold no weights (a helper's hostile hunt)
    path = tmp_path / "req.toml"
    path.write_text("[weights]\nsharpen = 2\nbogus = 1\n")
    result = run(command, EXAMPLE, "--requirements", path)
    one_line_error(result, f"ctxselect: error: {path}, field 'weights.bogus': unknown objective weight; expected "
                           "one of relevance, coverage, redundancy, ")
    assert "query '" not in result.stderr and "support_desk" not in result.stderr


# -- --plot is checked first; the bench table at 80 columns ------------------------------------------------


def test_plot_is_checked_before_the_bench_runs(tmp_path, monkeypatch):
    import ctxselect.cli.bench_cmd as bench_cmd

    monkeypatch.setattr(bench_cmd, "run_bench", lambda *a, **k: pytest.fail("the bench ran"))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    one_line_error(run("bench", EXAMPLE, "--plot", tmp_path / "p.png"),
                   "field '--plot': plotting needs matplotlib; expected pip install 'ctxselect[plot]'")
    monkeypatch.undo()
    monkeypatch.setattr(bench_cmd, "run_bench", lambda *a, **k: pytest.fail("the bench ran"))
    one_line_error(run("bench", EXAMPLE, "--plot", tmp_path / "no" / "p.png"), "cannot write: no folder")
    one_line_error(run("bench", EXAMPLE, "--plot", "-"), "the tables go to standard output")


def test_the_bench_table_fits_80_columns_with_every_number_whole():
    data = json.loads(run("bench", EXAMPLE, "--json").stdout)
    result = runner.invoke(app, ["bench", EXAMPLE], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    cells = {cell.strip() for line in lines for cell in line.split("│")}
    for s in data["summaries"]:
        for shown in (f"{s['objective']:.4f}" + ("*" if s["gate_passed"] < s["queries"] else ""), f"{s['gate_passed']}/{s['queries']}",
                      f"{s['wins']}/{s['ties']}/{s['losses']}", f"{s['gold']['distractors']:.2f}",
                      f"{s['gold']['middle_third']:.3f}"):
            assert shown in cells, (shown, s["method"])
    wide = runner.invoke(app, ["bench", EXAMPLE, "--wide"], env={"COLUMNS": "80"})
    assert max(len(line) for line in wide.stdout.splitlines()) > 80
    assert runner.invoke(app, ["bench", EXAMPLE], env={"COLUMNS": "200"}).stdout.count("┏") == 1  # one summary
    assert wide.stdout.count("┏") == 2  # --wide: the summary and the quality metrics


def test_a_requirements_file_decides_the_inspect_verdict(tmp_path):
    """The example's top-k contexts fail the gate (exit 1); a file whose gate admits anything turns
    every verdict to a pass (exit 0), and --budget over it still applies."""
    assert run("inspect", EXAMPLE).exit_code == 1
    lenient = tmp_path / "lenient.toml"
    lenient.write_text("[gate]\nmin_coverage = 0.0\nmin_token_utilization = 0.0\nmax_token_utilization = 1.0\n"
                       "max_contradiction_density = 1.0\nmin_freshness = 0.0\nmin_policy_admissibility = 0.0\n"
                       "max_source_starvation = 1.0\n")
    passed = run("inspect", EXAMPLE, "--requirements", lenient, "--json")
    assert passed.exit_code == 0, passed.stdout
    assert json.loads(passed.stdout)["failed"] == 0
    tight = run("inspect", EXAMPLE, "--requirements", lenient, "--budget", "10", "--json")
    assert tight.exit_code == 1  # the selected contexts exceed 10 tokens: utilization above 1.0
