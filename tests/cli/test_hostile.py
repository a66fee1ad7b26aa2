"""Hostile input through every command of the CLI (issue 11): each case states its exact outcome.

Every case asserts the exit code, a fragment of the one-line ``ctxselect: error: ...`` message (or
the escaped text in the output), that no exception escaped (no traceback) and that no raw control
character (ESC, a bidirectional override, a forged newline inside a line ...) reached the output.
A few subprocess runs check what CliRunner cannot: an ASCII-only terminal encoding.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
import typer.main
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from tests.conftest import EXAMPLES, ROOT

runner = CliRunner()
EXAMPLE = EXAMPLES / "support_desk.jsonl"

ESC = "\x1b"
RLO = "\u202e"
ANSI_RED = "\x1b[31mred\x1b[0m"


# -- dump builders ------------------------------------------------------------------------------


def cand(cid: str = "c1", **changes) -> dict:
    return {"id": cid, "source": "wiki", "tokens": 5, "relevance": 0.5, "text": f"words about {cid}", **changes}


def query_line(qid: str = "q1", cands: list | None = None, **changes) -> dict:
    return {"query_id": qid, "query": "why?", "requirements": {"token_budget": 100},
            "candidates": cands if cands is not None else [cand()], **changes}


def write(tmp: Path, *lines, name: str = "dump.jsonl") -> str:
    """Write JSON lines (dicts, or str taken as is, or bytes for the whole file)."""
    path = tmp / name
    if len(lines) == 1 and isinstance(lines[0], bytes):
        path.write_bytes(lines[0])
    else:
        path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
                        encoding="utf-8")
    return str(path)


def one_id_dump(tmp: Path, cid: str) -> str:
    return write(tmp, query_line(cands=[cand(cid)]))


def trace_file(tmp: Path, *lines) -> str:
    return write(tmp, *lines, name="traces.jsonl")


def trace(trace_id, **extra) -> dict:
    return {"trace_id": trace_id, "chunks": [{"id": "a", "tokens": 3, "in_context": True}], **extra}


def example_copy(tmp: Path) -> str:
    path = tmp / "dump.jsonl"
    path.write_bytes(EXAMPLE.read_bytes())
    return str(path)


def made(tmp: Path, kind: str, name: str) -> str:
    """A path in ``tmp`` made as a symlink to dump.jsonl, a hard link of it, a folder or a FIFO."""
    path = tmp / name
    if kind in ("symlink", "hardlink"):
        example_copy(tmp)
        (os.symlink if kind == "symlink" else os.link)("dump.jsonl" if kind == "symlink" else tmp / "dump.jsonl", path)
    elif kind == "folder":
        path.mkdir()
    else:
        os.mkfifo(path)
    return str(path)


# -- the cases ----------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    build: Callable[[Path], list[str]]
    code: int
    out: tuple[str, ...] = ()  # fragments of stdout
    err: tuple[str, ...] = ()  # fragments of the one stderr line (exit 2)
    absent: tuple[str, ...] = ()  # must appear nowhere in the output
    check: Callable[[Path], None] | None = None  # the files afterwards
    line_cap: int | None = None  # a smaller MAX_LINE_BYTES for speed
    unsafe_before: bool = field(default=False)  # would damage the machine with the old code


def unchanged(name: str, original: bytes | None = None) -> Callable[[Path], None]:
    def check(tmp: Path) -> None:
        assert (tmp / name).read_bytes() == (original if original is not None else EXAMPLE.read_bytes())
    return check


def no_temporary_left(tmp: Path) -> None:
    assert not [p for p in tmp.rglob("*") if p.name.endswith(".tmp")]


def not_created(name: str) -> Callable[[Path], None]:
    def check(tmp: Path) -> None:
        assert not (tmp / name).exists()
    return check


def still_a_fifo(tmp: Path) -> None:
    no_temporary_left(tmp)
    assert not os.path.isfile(tmp / "fifo") and os.path.exists(tmp / "fifo")


MARKUP_CLOSE = "[/x]"
MARKUP_RED = "[red]c1[/red]"

CASES: list[Case] = [
    # --- terminal injection: select --------------------------------------------------------------
    Case("select: id closing an unopened markup tag", lambda t: ["select", one_id_dump(t, MARKUP_CLOSE)], 0,
         out=("│ " + MARKUP_CLOSE,)),
    Case("select: id that is rich markup", lambda t: ["select", one_id_dump(t, MARKUP_RED)], 0, out=(MARKUP_RED,)),
    Case("select: id with ANSI escapes", lambda t: ["select", one_id_dump(t, ANSI_RED)], 0,
         out=("\\x1b[31mred\\x1b[0m",)),
    Case("select: id with an RTL override", lambda t: ["select", one_id_dump(t, RLO + "evil")], 0,
         out=("\\u202eevil",)),
    Case("select: id with an emoji code", lambda t: ["select", one_id_dump(t, ":thumbs_up:")], 0,
         out=(":thumbs_up:",), absent=("\N{THUMBS UP SIGN}",)),
    Case("select: id with a tab", lambda t: ["select", one_id_dump(t, "a\tb")], 0, out=("a\\tb",)),
    Case("select: id with DEL and a C1 control", lambda t: ["select", one_id_dump(t, "a\x7fb\x9bc")], 0,
         out=("a\\x7fb\\x9bc",)),
    Case("select: query id closing a markup tag",
         lambda t: ["select", write(t, query_line(qid="[/q]"))], 0, out=("[/q]  optimal",)),
    Case("select: query id clearing the screen",
         lambda t: ["select", write(t, query_line(qid="q\x1b[2J\x1b[H"))], 0, out=("q\\x1b[2J\\x1b[H",)),
    Case("select: source closing a markup tag",
         lambda t: ["select", write(t, query_line(cands=[cand(source="[/src]")]))], 0, out=("[/src]",)),
    Case("select --excluded: a newline in an id forges no line",
         lambda t: ["select", write(t, query_line(cands=[cand("keep", relevance=0.9, scope="public"),
                                                         cand("x\nforged: line", scope="secret")],
                                                  requirements={"token_budget": 100, "allowed_scopes": ["public"]})),
                    "--excluded"], 0,
         out=("- x\\nforged: line: ",), absent=("\nforged",)),
    Case("select --excluded: markup in a reason's quoted id",
         lambda t: ["select", write(t, query_line(cands=[cand("keep", relevance=0.9, scope="public"),
                                                         cand("[/y]", scope="secret")],
                                                  requirements={"token_budget": 100, "allowed_scopes": ["public"]})),
                    "--excluded"], 0, out=("- [/y]: ",)),
    # --- terminal injection: inspect ---------------------------------------------------------------
    Case("inspect: query id closing a markup tag", lambda t: ["inspect", write(t, query_line(qid="[/q]"))], 1,
         out=("[/q]  FAIL",)),
    Case("inspect: query id that is rich markup",
         lambda t: ["inspect", write(t, query_line(qid="[bold]q[/bold]"))], 1, out=("[bold]q[/bold]  FAIL",)),
    Case("inspect: query id with ANSI escapes", lambda t: ["inspect", write(t, query_line(qid=ANSI_RED))], 1,
         out=("\\x1b[31mred\\x1b[0m  FAIL",)),
    Case("inspect: query id with a newline", lambda t: ["inspect", write(t, query_line(qid="q\nPASS"))], 1,
         out=("q\\nPASS  FAIL",)),
    Case("inspect: query id with bidi isolates",
         lambda t: ["inspect", write(t, query_line(qid="q\u2066x\u2069"))], 1, out=("q\\u2066x\\u2069",)),
    Case("inspect: a required source in a failure message closes a tag",
         lambda t: ["inspect", write(t, query_line(requirements={"token_budget": 100,
                                                                 "required_sources": ["need[/s]"]}))], 1,
         out=("`need[/s]` (0 of 1)",)),
    Case("inspect: a required aspect in a failure message has ANSI",
         lambda t: ["inspect", write(t, query_line(requirements={"token_budget": 100,
                                                                 "required_aspects": ["a\x1b[5mblink"]}))], 1,
         out=("a\\x1b[5mblink",)),
    # --- terminal injection: compare ---------------------------------------------------------------
    Case("compare: id closing a markup tag",
         lambda t: ["compare", one_id_dump(t, MARKUP_CLOSE), "--query", "q1"], 0, out=("  " + MARKUP_CLOSE + " (",)),
    Case("compare: query id with markup in the title",
         lambda t: ["compare", write(t, query_line(qid="[/q]")), "--query", "[/q]"], 0,
         out=("[/q]: greedy (A) vs optimal (B)",)),
    Case("compare: source with ANSI escapes",
         lambda t: ["compare", write(t, query_line(cands=[cand(source=ANSI_RED)])), "--query", "q1"], 0,
         out=("\\x1b[31mred\\x1b[0m",)),
    Case("compare: id with an RTL override",
         lambda t: ["compare", one_id_dump(t, "c" + RLO + "1"), "--query", "q1"], 0, out=("c\\u202e1",)),
    Case("compare: id with a newline",
         lambda t: ["compare", one_id_dump(t, "c\n1"), "--query", "q1"], 0, out=("c\\n1",)),
    # --- terminal injection: audit -----------------------------------------------------------------
    Case("audit: trace id closing a markup tag", lambda t: ["audit", trace_file(t, trace("[/t]"))], 0,
         out=("[/t]  overall",)),
    Case("audit: trace id that is rich markup", lambda t: ["audit", trace_file(t, trace("[red]t[/red]"))], 0,
         out=("[red]t[/red]  overall",)),
    Case("audit: trace id with a newline", lambda t: ["audit", trace_file(t, trace("t\nforged"))], 0,
         out=("t\\nforged  overall",), absent=("\nforged",)),
    Case("audit: trace id with ANSI escapes", lambda t: ["audit", trace_file(t, trace(ANSI_RED))], 0,
         out=("\\x1b[31mred\\x1b[0m  overall",)),
    Case("audit: trace id with an RTL override", lambda t: ["audit", trace_file(t, trace(RLO + "t"))], 0,
         out=("\\u202et  overall",)),
    Case("audit: trace id with an emoji code", lambda t: ["audit", trace_file(t, trace(":fire:"))], 0,
         out=(":fire:  overall",)),
    # --- terminal injection: file names in one-line messages ----------------------------------------
    Case("inspect: a missing file whose name has a newline",
         lambda t: ["inspect", str(t / "no\nsuch.jsonl")], 2, err=("no\\nsuch.jsonl: cannot open dump",)),
    Case("bench: a missing file whose name has ANSI escapes",
         lambda t: ["bench", str(t / "x\x1b[2J.jsonl")], 2, err=("x\\x1b[2J.jsonl: cannot open dump",)),
    Case("audit: a missing file whose name has an RTL override",
         lambda t: ["audit", str(t / ("t" + RLO + ".jsonl"))], 2, err=("t\\u202e.jsonl: cannot open trace file",)),
    Case("gen: an output name with a newline is shown escaped",
         lambda t: ["gen", str(t / "a\nb.jsonl"), "--queries", "1", "--candidates", "5"], 0,
         err=("a\\nb.jsonl",)),  # a status line: on stderr
    Case("ablate: an output name with ANSI escapes is shown escaped",
         lambda t: ["ablate", example_copy(t), "--out", str(t / "v\x1b[1m.jsonl"), "--method", "greedy"], 0,
         err=("v\\x1b[1m.jsonl",)),
    # --- option errors: one line, exit 2 -------------------------------------------------------------
    Case("select --method best", lambda t: ["select", str(EXAMPLE), "--method", "best"], 2,
         err=("Invalid value for '--method'", "'best'", "(see 'ctxselect select --help')")),
    Case("select --time-limit 0", lambda t: ["select", str(EXAMPLE), "--time-limit", "0"], 2,
         err=("Invalid value for '--time-limit'",)),
    Case("select --time-limit nan", lambda t: ["select", str(EXAMPLE), "--time-limit", "nan"], 2,
         err=("Invalid value for '--time-limit'",)),
    Case("select --time-limit inf", lambda t: ["select", str(EXAMPLE), "--time-limit", "inf"], 2,
         err=("Invalid value for '--time-limit': expected a finite number >= 0.001, found inf",)),
    Case("select with an unknown option", lambda t: ["select", str(EXAMPLE), "--fast"], 2,
         err=("No such option: --fast",)),
    Case("select without its dump", lambda t: ["select"], 2, err=("Missing argument",)),
    Case("inspect with an extra argument", lambda t: ["inspect", str(EXAMPLE), "more"], 2,
         err=("unexpected extra argument",)),
    Case("an unknown command", lambda t: ["selec", str(EXAMPLE)], 2, err=("No such command 'selec'",)),
    Case("bench --budget-scale 1e308", lambda t: ["bench", str(EXAMPLE), "--budget-scale", "1e308"], 2,
         err=("field 'budget_scale'", "token budget finite")),
    Case("bench --budget-scale inf", lambda t: ["bench", str(EXAMPLE), "--budget-scale", "inf"], 2,
         err=("Invalid value for '--budget-scale': expected a finite number",)),
    Case("bench --budget-scale nan", lambda t: ["bench", str(EXAMPLE), "--budget-scale", "nan"], 2,
         err=("Invalid value for '--budget-scale'",)),
    Case("bench --jobs 0", lambda t: ["bench", str(EXAMPLE), "--jobs", "0"], 2, err=("Invalid value for '--jobs'",)),
    Case("bench --budget ten", lambda t: ["bench", str(EXAMPLE), "--budget", "ten"], 2,
         err=("Invalid value for '--budget'",)),
    Case("compare without --query", lambda t: ["compare", str(EXAMPLE)], 2, err=("Missing option '--query'",)),
    Case("compare --a best", lambda t: ["compare", str(EXAMPLE), "--query", "q", "--a", "best"], 2,
         err=("Invalid value for '--a'",)),
    Case("gen --queries 0", lambda t: ["gen", str(t / "g.jsonl"), "--queries", "0"], 2,
         err=("Invalid value for '--queries'",), check=not_created("g.jsonl")),
    Case("gen --gold-share 2", lambda t: ["gen", str(t / "g.jsonl"), "--gold-share", "2"], 2,
         err=("Invalid value for '--gold-share'",)),
    Case("gen --source-skew inf", lambda t: ["gen", str(t / "g.jsonl"), "--source-skew", "inf"], 2,
         err=("Invalid value for '--source-skew': expected a finite number",)),
    Case("gen --budget-factor 1e300", lambda t: ["gen", str(t / "g.jsonl"), "--budget-factor", "1e300"], 2,
         err=("field 'budget_factor'", "(0, 1e+06]")),
    Case("audit with an unknown option", lambda t: ["audit", str(EXAMPLE), "--deep"], 2,
         err=("No such option: --deep",)),
    Case("ablate without --out", lambda t: ["ablate", str(EXAMPLE)], 2, err=("Missing option '--out'",)),
    Case("ablate --seed -1", lambda t: ["ablate", str(EXAMPLE), "--out", str(t / "v.jsonl"), "--seed", "-1"], 2,
         err=("Invalid value for '--seed'",)),
    Case("an option value with a newline", lambda t: ["select", str(EXAMPLE), "--order", "a\nb"], 2,
         err=("Invalid value for '--order'", "a\\nb")),
    # --- bytes that are not UTF-8 text ---------------------------------------------------------------
    Case("inspect: a gzip file", lambda t: ["inspect", write(t, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")], 2,
         err=("line 1: not UTF-8 text", "gzip-compressed")),
    Case("select: UTF-16 with a byte-order mark",
         lambda t: ["select", write(t, (json.dumps(query_line()) + "\n").encode("utf-16"))], 2,
         err=("line 1: not UTF-8 text", "UTF-16 byte-order mark")),
    Case("bench: a stray latin-1 byte on line 2",
         lambda t: ["bench", write(t, json.dumps(query_line()).encode() + b"\n"
                                   + json.dumps(query_line(qid="q2", query="caf_")).encode().replace(b"caf_", b"caf\xe9")
                                   + b"\n")], 2,
         err=("line 2: not UTF-8 text (byte 0xe9",)),
    Case("compare: a latin-1 byte in a query id",
         lambda t: ["compare", write(t, json.dumps(query_line(qid="q_")).encode().replace(b"q_", b"q\xff")),
                    "--query", "q"], 2, err=("line 1: not UTF-8 text (byte 0xff",)),
    Case("ablate: a gzip file", lambda t: ["ablate", write(t, b"\x1f\x8b\x08\x00"), "--out", str(t / "v.jsonl")], 2,
         err=("not UTF-8 text",), check=not_created("v.jsonl")),
    Case("audit: a UTF-16 trace file",
         lambda t: ["audit", trace_file(t, (json.dumps(trace("t")) + "\n").encode("utf-16"))], 2,
         err=("traces.jsonl, line 1: not UTF-8 text",)),
    Case("inspect: a UTF-8 byte-order mark is accepted",
         lambda t: ["inspect", write(t, b"\xef\xbb\xbf" + EXAMPLE.read_bytes())], 1,
         out=("2 of 3 queries failed the gate",)),
    # --- JSON that parses into something wrong ------------------------------------------------------
    Case("compare: JSON nested 100,000 deep",
         lambda t: ["compare", write(t, '{"query_id": "q", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}"),
                    "--query", "q"], 2, err=("line 1: JSON nested too deeply",)),
    Case("inspect: objects nested 100,000 deep",
         lambda t: ["inspect", write(t, '{"a": ' * 100_000 + "1" + "}" * 100_000)], 2,
         err=("line 1: JSON nested too deeply",)),
    Case("inspect: a duplicate key at the top",
         lambda t: ["inspect", write(t, json.dumps(query_line())[:-1] + ', "query_id": "other"}')], 2,
         err=("line 1: duplicate key 'query_id' in a JSON object",)),
    Case("select: a duplicate key in a candidate",
         lambda t: ["select", write(t, json.dumps(query_line()).replace('"relevance": 0.5', '"relevance": 0.5, "relevance": 0.9'))],
         2, err=("duplicate key 'relevance'",)),
    Case("bench: a duplicate budget in requirements",
         lambda t: ["bench", write(t, json.dumps(query_line()).replace('"token_budget": 100', '"token_budget": 100, "token_budget": 5'))],
         2, err=("duplicate key 'token_budget'",)),
    Case("audit: a duplicate key in a trace",
         lambda t: ["audit", trace_file(t, json.dumps(trace("t"))[:-1] + ', "trace_id": "u"}')], 2,
         err=("traces.jsonl, line 1: duplicate key 'trace_id'",)),
    Case("inspect: a lone surrogate in an extra key",
         lambda t: ["inspect", write(t, json.dumps(query_line(meta="\ud800")))], 2,
         err=("line 1: a JSON string holds a lone surrogate (\\ud800)",)),
    Case("audit: a lone surrogate in a trace id", lambda t: ["audit", trace_file(t, json.dumps(trace("t\udfff")))], 2,
         err=("line 1: a JSON string holds a lone surrogate (\\udfff)",)),
    Case("select: a lone surrogate in an object key",
         lambda t: ["select", write(t, json.dumps(query_line(labels={"\udc80": 1})))], 2,
         err=("lone surrogate (\\udc80)",)),
    Case("inspect: a line over the length cap",
         lambda t: ["inspect", write(t, query_line(cands=[cand(text="word " * 1000)]))], 2,
         err=("line 1: line longer than 4,096 bytes",), line_cap=4096),
    Case("select: the third line over the length cap",
         lambda t: ["select", write(t, query_line(), "", query_line(qid="q2", cands=[cand(text="x" * 5000)]))], 2,
         err=("line 3: line longer than 4,096 bytes",), line_cap=4096),
    Case("inspect: query 0", lambda t: ["inspect", write(t, query_line(query=0))], 2,
         err=("query 'q1', field 'query': expected a string, found 0",)),
    Case("select: query []", lambda t: ["select", write(t, query_line(query=[]))], 2,
         err=("field 'query': expected a string",)),
    Case("bench: query false", lambda t: ["bench", write(t, query_line(query=False))], 2,
         err=("field 'query': expected a string, found false",)),
    Case("inspect: the same id three times in selected",
         lambda t: ["inspect", write(t, query_line(selected=["c1", "c1", "c1"]))], 2,
         err=("candidate 'c1', field 'selected': duplicate id in selected",)),
    Case("audit: prompts that are an object",
         lambda t: ["audit", trace_file(t, {"trace_id": "t", "chunks": [{"id": "a", "text": "x"}],
                                            "prompts": {"x": 1}})], 2,
         err=("line 1, query 't', field 'prompts': expected a string or a list of strings",)),
    Case("audit: prompts that are a number",
         lambda t: ["audit", trace_file(t, {"chunks": [{"id": "a", "text": "x"}], "prompts": 5})], 2,
         err=("field 'prompts'",)),
    Case("audit: prompts that are null",
         lambda t: ["audit", trace_file(t, {"chunks": [{"id": "a", "text": "x"}], "prompts": None})], 2,
         err=("field 'prompts'", "found null")),
    # --- empty input ----------------------------------------------------------------------------------
    Case("select: an empty dump", lambda t: ["select", write(t, "")], 2, err=("the dump holds no query",)),
    Case("select: a dump of blank lines", lambda t: ["select", write(t, "", "  ", "\t")], 2,
         err=("the dump holds no query",)),
    # --- output files -------------------------------------------------------------------------------
    Case("select --out onto its own dump",
         lambda t: ["select", example_copy(t), "--out", str(t / "dump.jsonl")], 2,
         err=("field '--out': this is an input file",), check=unchanged("dump.jsonl")),
    Case("ablate --out onto its own dump",
         lambda t: ["ablate", example_copy(t), "--out", str(t / "dump.jsonl")], 2,
         err=("field '--out': this is an input file",), check=unchanged("dump.jsonl")),
    Case("ablate --out onto a symlink to its dump",
         lambda t: ["ablate", str(t / "dump.jsonl"), "--out", made(t, "symlink", "link.jsonl")], 2,
         err=("this is an input file",), check=unchanged("dump.jsonl")),
    Case("select --out onto a hard link of its dump",
         lambda t: ["select", str(t / "dump.jsonl"), "--out", made(t, "hardlink", "hard.jsonl")], 2,
         err=("this is an input file",), check=unchanged("hard.jsonl")),
    Case("select --out through another spelling of its dump",
         lambda t: ["select", example_copy(t), "--out", str(t / "." / ".." / t.name / "dump.jsonl")], 2,
         err=("this is an input file",), check=unchanged("dump.jsonl")),
    Case("bench --plot onto its own dump",
         lambda t: ["bench", example_copy(t), "--plot", str(t / "dump.jsonl")], 2,
         err=("field '--plot': this is an input file",), check=unchanged("dump.jsonl")),
    Case("select --out onto a directory",
         lambda t: ["select", str(EXAMPLE), "--out", made(t, "folder", "folder")], 2,
         err=("folder: not a regular file",), check=no_temporary_left),
    Case("ablate --out onto a FIFO",
         lambda t: ["ablate", str(EXAMPLE), "--out", made(t, "fifo", "fifo")], 2,
         err=("fifo: not a regular file",), check=still_a_fifo),
    Case("gen onto a FIFO", lambda t: ["gen", made(t, "fifo", "fifo"), "--queries", "1"], 2,
         err=("not a regular file",), check=still_a_fifo),
    Case("bench --plot onto a directory",
         lambda t: ["bench", str(EXAMPLE), "--methods", "greedy", "--plot", made(t, "folder", "plots")], 2,
         err=("plots: not a regular file",), check=no_temporary_left),
    Case("gen onto /dev/stdout", lambda t: ["gen", "/dev/stdout", "--queries", "1"], 2,
         err=("/dev/stdout: not a regular file",), unsafe_before=True),
    Case("gen onto /dev/null", lambda t: ["gen", "/dev/null", "--queries", "1"], 2,
         err=("/dev/null: not a regular file",), unsafe_before=True),
    Case("select --out into a missing folder",
         lambda t: ["select", str(EXAMPLE), "--out", str(t / "nowhere" / "out.jsonl")], 2,
         err=("out.jsonl: cannot write: no folder",), absent=(".tmp",)),
    Case("gen into a missing folder", lambda t: ["gen", str(t / "nowhere" / "g.jsonl"), "--queries", "1"], 2,
         err=("g.jsonl: cannot write: no folder",), absent=(".tmp",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_cli_case(case: Case, tmp_path, monkeypatch):
    if case.unsafe_before and os.environ.get("CTXSELECT_OLD_CODE"):
        pytest.skip("would replace a device file with the old code")
    if case.line_cap is not None:
        monkeypatch.setattr("ctxselect.model.io.MAX_LINE_BYTES", case.line_cap, raising=False)
    monkeypatch.chdir(tmp_path)
    args = case.build(tmp_path)
    result = runner.invoke(app, args)
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in output
    assert result.exit_code == case.code, (result.exit_code, output)
    if case.code == 2:
        assert result.stderr.startswith("ctxselect: error: ") and result.stderr.count("\n") == 1, result.stderr
    for fragment in case.err:
        assert fragment in result.stderr, (fragment, result.stderr)
    for fragment in case.out:
        assert fragment in result.stdout, (fragment, result.stdout)
    for fragment in case.absent:
        assert fragment not in output, (fragment, output)
    raw = {ch for ch in output if ch != "\n" and not ch.isprintable()}
    assert not raw, f"raw control characters reached the terminal: {sorted(map(hex, map(ord, raw)))}"
    if case.check is not None:
        case.check(tmp_path)


def test_every_command_of_the_app_meets_hostile_input(tmp_path):
    """The app's registered commands, not a count of this file's cases: a command added to the CLI
    without a hostile case here fails this test."""
    registered = set(typer.main.get_command(app).commands)
    invoked = set()
    for k, case in enumerate(CASES):
        folder = tmp_path / str(k)
        folder.mkdir()
        invoked.add(case.build(folder)[0])
    assert registered - invoked == set()


# -- what the cases rely on ------------------------------------------------------------------------


def test_json_output_stays_json_with_hostile_ids(tmp_path):
    hostile = ["[/x]", "a\nb", ANSI_RED, RLO + "x", "é"]
    dump = write(tmp_path, query_line(qid="q\x1b", cands=[cand(h, text=f"text number {k}")
                                                          for k, h in enumerate(hostile)]))
    for args in (["select", dump, "--json"], ["inspect", dump, "--json"], ["compare", dump, "--query", "q\x1b", "--json"]):
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1), result.output
        assert ESC not in result.stdout and RLO not in result.stdout and result.stdout.isascii()
        data = json.loads(result.stdout)
        assert (data["query_id"] if "query_id" in data else data["queries"][0]["query_id"]) == "q\x1b"


def test_help_and_no_arguments_still_print_help():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "select" in result.stdout and "Usage" in result.stdout
    result = runner.invoke(app, ["select", "--help"])
    assert result.exit_code == 0 and "--time-limit" in result.stdout
    result = runner.invoke(app, [])
    assert result.exit_code == 2 and "Usage" in result.output and "ctxselect: error" not in result.output


def test_a_directory_as_dump_is_one_line(tmp_path):
    for command in (["inspect"], ["select"], ["bench"], ["audit"], ["compare", "--query", "q"]):
        result = runner.invoke(app, [command[0], str(tmp_path), *command[1:]])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1
        assert "cannot open" in result.stderr and "Is a directory" in result.stderr


def test_dev_zero_is_a_line_cap_error(monkeypatch):
    monkeypatch.setattr("ctxselect.model.io.MAX_LINE_BYTES", 1 << 16)
    result = runner.invoke(app, ["inspect", "/dev/zero"])
    assert result.exit_code == 2 and "line 1: line longer than 65,536 bytes" in result.stderr


def test_ablate_shuffled_never_borrows_text_this_query_may_not_see(tmp_path):
    secret = "SECRET-TEXT-42"
    public = query_line(qid="public-only", cands=[cand("p1", scope="public", text="public words one")],
                        requirements={"token_budget": 100, "allowed_scopes": ["public", "public"]})
    internal = query_line(qid="internal", cands=[cand("i1", scope="internal", text=secret),
                                                 cand("i2", scope="public", text="shared public words")],
                          requirements={"token_budget": 100, "allowed_scopes": ["internal", "public"]})
    dump = write(tmp_path, public, internal)
    out = tmp_path / "variants.jsonl"
    result = runner.invoke(app, ["ablate", dump, "--out", str(out), "--method", "greedy"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    shuffled = {r["query_id"]: r for r in rows if r["variant"] == "shuffled"}
    assert shuffled["public-only"]["source_query_id"] == "internal"
    assert shuffled["public-only"]["ids"] == ["i2"] and shuffled["public-only"]["context"] == ["shared public words"]
    assert shuffled["internal"]["ids"] == ["p1"]  # public is allowed there
    assert all(secret not in json.dumps(r) for r in rows if r["query_id"] == "public-only")


def test_ablation_refuses_unknown_or_inadmissible_ids_in_a_given_selection():
    queries = list(ctxselect.read_dump(EXAMPLE))
    inadmissible = next(c.id for c in queries[0].candidates if c.scope == "internal")
    with pytest.raises(ctxselect.InputError, match="unknown candidate id"):
        list(ctxselect.ablation_variants(queries, [["nope"], [], []]))
    with pytest.raises(ctxselect.InputError, match=f"candidate '{inadmissible}'.*do not admit") as info:
        list(ctxselect.ablation_variants(queries, [[inadmissible], [], []]))
    assert next(c.text for c in queries[0].candidates if c.id == inadmissible) not in str(info.value)


def test_gen_with_embeddings_and_plants_reads_back(tmp_path):
    out = tmp_path / "planted.jsonl"
    result = runner.invoke(app, ["gen", str(out), "--queries", "3", "--candidates", "10", "--embedding-dim", "4",
                                 "--planted-rate", "1"])
    assert result.exit_code == 0, result.output
    queries = list(ctxselect.read_dump(out))
    assert all(q.extra["meta"]["planted"] for q in queries)
    assert all(c.embedding is not None and len(c.embedding) == 4 for q in queries for c in q.candidates)
    assert runner.invoke(app, ["inspect", str(out)]).exit_code in (0, 1)


@pytest.mark.parametrize("prompts", [{"a": "x"}, {"x"}, b"x", None, 3, iter(["x"])],
                         ids=["dict", "set", "bytes", "None", "int", "iterator"])
def test_trace_prompts_must_be_text_or_a_list_of_text(prompts):
    with pytest.raises(ctxselect.InputError, match="field 'prompts': expected a string or a list of strings"):
        ctxselect.trace([{"id": "a", "text": "x"}], prompts)


def test_trace_accepts_a_string_a_list_and_a_tuple():
    for prompts in ("x", ["x"], ("x",)):
        assert ctxselect.trace([{"id": "a", "text": "x"}], prompts)[0].in_context


# -- a real process: an ASCII terminal, no terminal at all ----------------------------------------


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-m", "ctxselect", *args], capture_output=True, env=environment,
                          timeout=120)


def test_an_ascii_terminal_gets_escapes_not_a_unicode_error(tmp_path):
    dump = write(tmp_path, query_line(qid="qé", cands=[cand("café"), cand("naïve[/x]\x1b", text="other words")]))
    done = _run(["select", dump, "--excluded"], PYTHONIOENCODING="ascii")
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    assert b"Traceback" not in done.stderr and b"UnicodeEncodeError" not in done.stderr
    out = done.stdout.decode("ascii")  # nothing but ASCII was written
    assert "q\\xe9" in out and "caf\\xe9" in out and "\x1b" not in out


def test_an_ascii_terminal_audit_and_error_line(tmp_path):
    traces = trace_file(tmp_path, trace("tré"))
    done = _run(["audit", traces], PYTHONIOENCODING="ascii")
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert "tr\\xe9" in done.stdout.decode("ascii")
    done = _run(["inspect", str(tmp_path / "absent\x1b.jsonl")], PYTHONIOENCODING="ascii")
    assert done.returncode == 2
    assert done.stderr.decode("ascii").count("\n") == 1 and b"absent\\x1b.jsonl" in done.stderr


@pytest.mark.parametrize("command", [["select"], ["inspect"], ["bench"], ["ablate", "--out", "{out}"],
                                     ["compare", "--query", "q2"]])
def test_a_check_made_after_reading_names_the_dump_and_the_query(tmp_path, command):
    # a source rule is checked when the query's candidates are packed, after the dump is read: its
    # error named the candidate and the field, not which query (a helper's hostile hunt)
    rule = {"token_budget": 50, "required_sources": {"policy": 1}}
    good = [cand("c1", source="policy"), cand("c2", source="faq")]
    bad = [cand("c1", source="policy"), {k: v for k, v in cand("c2").items() if k != "source"}]
    dump = tmp_path / "d.jsonl"
    dump.write_text("".join(json.dumps({"query_id": q, "query": "refunds", "requirements": rule,
                                        "candidates": c}) + "\n" for q, c in (("q1", good), ("q2", bad))))
    args = [part.format(out=tmp_path / "v.jsonl") for part in command]
    result = runner.invoke(app, [args[0], str(dump), *args[1:]])
    assert result.exit_code == 2 and result.exception is None or isinstance(result.exception, SystemExit)
    assert (f"{dump}, query 'q2', candidate 'c2', field 'source': missing required field; expected a source "
            "name, since the requirements set required_sources") in result.output


_RATE, _NOT_FINITE = "a finite number in [0, 1]", ("nan", "inf", "-inf")
FLOAT_OPTIONS = [  # (command and its arguments, option, what is expected): every float option of the CLI
    (["bench", str(EXAMPLE)], "--budget-scale", "a finite number >= 0"),
    (["bench", str(EXAMPLE)], "--time-limit", "a finite number >= 0.001"),
    (["bench", str(EXAMPLE)], "--relevance-alert", _RATE),
    (["inspect", str(EXAMPLE)], "--relevance-alert", _RATE),
    (["select", str(EXAMPLE)], "--time-limit", "a finite number >= 0.001"),
    (["compare", str(EXAMPLE), "--query", "q"], "--time-limit", "a finite number >= 0.001"),
    (["ablate", str(EXAMPLE), "--out", "{tmp}/v.jsonl"], "--time-limit", "a finite number >= 0.001"),
    (["audit", str(EXAMPLE)], "--fuzzy-threshold", "a finite number in [0, 100]"),
    (["gen", "{tmp}/g.jsonl"], "--source-skew", "a finite number >= 0"),
    (["gen", "{tmp}/g.jsonl"], "--budget-factor", "a finite number >= 0.01"),
    *[(["gen", "{tmp}/g.jsonl"], f"--{name}", _RATE)
      for name in ("words-spread", "gold-share", "duplicate-rate", "conflict-rate", "version-rate", "stale-rate",
                   "inadmissible-rate", "planted-rate", "planted-majority-rate", "planted-favour-false")],
]


@pytest.mark.parametrize("command, option, expected", FLOAT_OPTIONS, ids=[f"{c[0]} {o}" for c, o, _ in FLOAT_OPTIONS])
def test_a_float_option_that_is_not_finite_says_a_finite_number_is_expected(tmp_path, command, option, expected):
    # typer's min/max ran first: --budget-scale nan was "Input should be greater than or equal to 0",
    # --relevance-alert inf "less than or equal to 1" (a helper's hostile hunt)
    args = [part.format(tmp=tmp_path) for part in command]
    name = args[0]
    for value in _NOT_FINITE:
        result = runner.invoke(app, [*args, option, value])
        assert result.exit_code == 2, (value, result.output)
        assert result.stderr == (f"ctxselect: error: Invalid value for '{option}': expected {expected}, found {value} "
                                 f"(see 'ctxselect {name} --help')\n"), result.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_bench_json_names_a_dump_whose_file_name_is_not_utf8_as_text(tmp_path):
    # the name's byte 0xff reached --json as a lone surrogate ("\udcff"): JSON no strict reader takes
    # as Unicode text (a helper's hostile hunt); now the byte's escape, and --baseline reads it back
    dump = os.path.join(os.fsencode(tmp_path), b"d\xff.jsonl")
    with open(dump, "wb") as f:
        f.write(EXAMPLE.read_bytes())
    done = _run(["bench", os.fsdecode(dump), "--json", "--methods", "greedy"])
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"\\ud" not in done.stdout
    data = json.loads(done.stdout.decode("utf-8"))
    assert data["dumps"] == [str(tmp_path) + "/d\\xff.jsonl"]
    saved = tmp_path / "base.json"
    saved.write_bytes(done.stdout)
    again = _run(["bench", os.fsdecode(dump), "--json", "--methods", "greedy", "--baseline", str(saved)])
    assert again.returncode == 0, again.stderr.decode("utf-8", "replace")
    assert json.loads(again.stdout)["release_gate"]["baseline"] == str(saved)
