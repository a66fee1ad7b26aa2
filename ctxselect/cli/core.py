"""The ``ctxselect`` command line: thin commands over library functions.

Exit codes: 0 success (and, for ``inspect``, every query passes the gate), 1 some query fails the
gate, 2 bad input or arguments — a bad option included — (a one-line message on stderr
``ctxselect: error: ...``, no traceback).

User strings (ids, query ids, sources, trace ids, file names, and messages that quote them) reach
the terminal as data: never as rich markup or emoji codes, and with every non-printable character
(control characters such as newline, tab and ESC, DEL, C1 controls, bidirectional overrides and
isolates, lone surrogates) shown as its escape (``\\n``, ``\\x1b``, ``\\u202e``) — see
:func:`terminal_text`. ``--json`` output is JSON (ASCII, every such character escaped by JSON).
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from pathlib import Path
from typing import Annotated, Any, Callable, Sequence

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from typer.core import TyperGroup

from ctxselect.evaluate.ablation import ablation_variants
from ctxselect.evaluate.audit import audit
from ctxselect.evaluate.bench import SHORT_HEADERS, BenchResult, run_bench, summary_table, to_markdown
from ctxselect.model.io import Query, output_target, read_dump, read_jsonl, write_dump, write_jsonl
from ctxselect.errors import CtxSelectError, InputError
from ctxselect.evaluate.generate import GeneratorConfig, generate_queries
from ctxselect.quality.report import QualityReport, report_for
from ctxselect.packing import pack
from ctxselect.evaluate.plot import plot_bench
from ctxselect.quality.vector import METRIC_NAMES
from ctxselect.selection.api import Selection, select
from ctxselect.selection.solvers.registry import Method, Order, parse_choice
from ctxselect.evaluate.trace import trace

EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT = 0, 1, 2

_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(ch: str) -> str:
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_text(value: object) -> str:
    """A user string made safe to print: one line, no control sequence.

    Every character that is not printable (``str.isprintable``: C0 and C1 control characters
    including newline, tab and ESC, DEL, format characters such as the bidirectional overrides
    U+202A–U+202E and isolates U+2066–U+2069, line and paragraph separators, lone surrogates) is
    replaced by its Python escape (``\\n``, ``\\x1b``, ``\\u202e``). Rich markup is left alone: wrap
    the result in :func:`rich.markup.escape` (as :func:`_data` does) before a rich console prints it.

    Parameters
    ----------
    value : object
        Converted with ``str``.

    Returns
    -------
    str
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _data(value: object) -> str:
    """A user string for rich markup: escaped characters, markup shown literally."""
    return escape(terminal_text(value))


def _error_line(message: object) -> str:
    return f"ctxselect: error: {terminal_text(message)}"


_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _OneLineErrors(TyperGroup):
    """The command group, with every usage or option error as one line on stderr (exit 2)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            code = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=False, **extra)
        except _CLICK_ERROR as err:
            if type(err).__name__ == "NoArgsIsHelpError":
                code = EXIT_BAD_INPUT  # the help was printed (no command given)
            else:
                ctx = getattr(err, "ctx", None)
                hint = ""
                if ctx is not None:
                    command = "ctxselect" + (f" {ctx.info_name}" if ctx.parent is not None else "")
                    hint = f" (see '{command} --help')"
                typer.echo(_error_line(err.format_message()) + hint, err=True)
                code = err.exit_code
        except typer.Abort:
            typer.echo(_error_line("aborted"), err=True)
            code = EXIT_GATE_FAILED
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else EXIT_OK)


app = typer.Typer(
    name="ctxselect",
    cls=_OneLineErrors,
    help="Choose and inspect the retrieved chunks that go into an LLM's context window.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

DumpPath = Annotated[Path, typer.Argument(help="A JSONL candidate dump (one query per line).",
                                          show_default=False)]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of tables.")]


def _finite(value: float | None) -> float | None:
    """Option callback: a float option must be a finite number (checked before any work)."""
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"expected a finite number, found {value}")
    return value


def _console(stderr: bool = False) -> Console:
    """A console as wide as the terminal, or 200 columns when the output is not a terminal; emoji
    codes (``:smile:``) are never replaced."""
    console = Console(stderr=stderr, emoji=False)
    return console if console.is_terminal else Console(stderr=stderr, width=200, emoji=False)


def _guarded(work: Callable[[], int]) -> None:
    """Run a command body: library errors become one line on stderr and exit code 2."""
    try:
        code = work()
    except CtxSelectError as err:
        typer.echo(_error_line(err), err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except OSError as err:
        message = f"{err.filename}: {err.strerror}" if err.filename and err.strerror else err
        typer.echo(_error_line(message), err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    raise typer.Exit(code)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def _check_output(out: Path | None, inputs: Sequence[Path], option: str) -> None:
    """Refuse, before any work, an output that is not a regular file or is one of the inputs."""
    if out is None:
        return
    output_target(out)
    for source in inputs:
        if _same_file(out, source):
            raise InputError(file=str(out), field=option, message="this is an input file; writing it would "
                             "destroy the input", expected="another path")


def _threshold_of(report: QualityReport) -> dict[str, str]:
    return {f.metric: f.condition for f in report.failures}


def _report_table(query_id: str, report: QualityReport) -> Table:
    verdict = "[green]PASS[/green]" if report.passed else "[red]FAIL[/red]"
    table = Table(title=f"{_data(query_id)}  {verdict}  ({len(report.ids)} chunks, {report.tokens_used} tokens)",
                  title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("gate")
    failed = _threshold_of(report)
    for name in METRIC_NAMES:
        mark = f"[red]fails {failed[name]}[/red]" if name in failed else ""
        table.add_row(name, f"{report.metrics[name]:.3f}", mark)
    return table


def _inspect_dump(dump: Path, as_json: bool) -> int:
    console = _console()
    results: list[dict[str, Any]] = []
    n_failed = n_total = 0
    for query in read_dump(dump):
        n_total += 1
        packed = pack(query.candidates, query.requirements)
        mask = packed.mask_of(query.selected) if query.selected is not None else np.ones(packed.n, bool)
        order = packed.index_of(query.selected) if query.selected is not None else None
        report = report_for(packed, mask, order)
        n_failed += not report.passed
        if as_json:
            results.append({"query_id": query.query_id, **report.to_dict()})
        else:
            console.print(_report_table(query.query_id, report))
            for failure in report.failures:
                console.print(f"  [red]x[/red] {_data(failure.message)}", highlight=False)
            console.print()
    if n_total == 0:
        raise InputError(file=str(dump), message="the dump holds no query")
    if as_json:
        sys.stdout.write(json.dumps({"queries": results, "passed": n_total - n_failed,
                                     "failed": n_failed}, indent=2) + "\n")
    else:
        console.print(f"{n_failed} of {n_total} queries failed the gate." if n_failed
                      else "Every query passed the gate.")
    return EXIT_GATE_FAILED if n_failed else EXIT_OK


@app.command("inspect")
def inspect_command(dump: DumpPath, as_json: JsonFlag = False) -> None:
    """Score each query's context (its `selected` ids, else all candidates) with the quality
    vector and the gate. Exit 0 when every query passes, 1 when some fail, 2 on bad input."""
    _guarded(lambda: _inspect_dump(dump, as_json))


def _selection_table(query: Query, selection: Selection) -> Table:
    verdict = "[green]PASS[/green]" if selection.report.passed else "[red]FAIL[/red]"
    gap = "" if selection.gap is None else f", gap {selection.gap:.2%}"
    table = Table(title=(f"{_data(query.query_id)}  {selection.method}: {selection.status}{gap}, objective "
                         f"{selection.objective:.4f}, {selection.tokens}/{query.requirements.token_budget} "
                         f"tokens, gate {verdict}"), title_justify="left")
    for column in ("#", "id", "source", "tokens", "relevance"):
        table.add_column(column, justify="right" if column in ("#", "tokens", "relevance") else "left")
    by_id = {c.id: c for c in query.candidates}
    for k, cid in enumerate(selection.ids, start=1):
        c = by_id[cid]
        table.add_row(str(k), _data(cid), _data(c.source), str(c.tokens), f"{c.relevance:.3f}")
    return table


def _select_dump(dump: Path, method: Method, order: Order, enforce_gate: bool, time_limit: float,
                 as_json: bool, out: Path | None, show_excluded: bool) -> int:
    _check_output(out, [dump], "--out")
    console = _console()
    results: list[dict[str, Any]] = []
    chosen: list[Query] = []
    n_queries = 0
    for query in read_dump(dump):
        selection = select(query.candidates, query.requirements, query.query, method, order=order,
                           enforce_gate=enforce_gate, time_limit=time_limit)
        if out is not None:
            chosen.append(Query(query.query_id, query.query, query.requirements, query.candidates,
                                query.gold, list(selection.ids), query.extra))
        if as_json:
            results.append({"query_id": query.query_id, **selection.to_dict()})
            n_queries += 1
            continue
        console.print(_selection_table(query, selection))
        for failure in selection.report.failures:
            console.print(f"  [red]x[/red] {_data(failure.message)}", highlight=False)
        for line in selection.infeasible:
            console.print(f"  [yellow]![/yellow] cannot pass: {_data(line)}", highlight=False)
        if show_excluded:
            for cid, reason in selection.excluded.items():
                console.print(f"  - {_data(cid)}: {_data(reason)}", highlight=False)
        console.print()
        n_queries += 1
    if not n_queries:
        raise InputError(file=str(dump), message="the dump holds no query")
    if out is not None:
        write_dump(out, chosen)
    if as_json:
        sys.stdout.write(json.dumps({"queries": results}, indent=2) + "\n")
    return EXIT_OK


@app.command("select")
def select_command(
    dump: DumpPath,
    method: Annotated[Method, typer.Option(help="Selection method.")] = Method.OPTIMAL,
    order: Annotated[Order, typer.Option(help="Assembly order of the selected chunks.")] = Order.EDGES,
    gate: Annotated[bool, typer.Option("--gate/--no-gate", help="Enforce the quality gate (optimal).")] = True,
    time_limit: Annotated[float, typer.Option(min=0.001, callback=_finite,
                                               help="Seconds per query for the optimizer.")] = 1.0,
    as_json: JsonFlag = False,
    out: Annotated[Path | None, typer.Option(help="Write the dump back with `selected` filled "
                                                  "(whole or not at all).")] = None,
    excluded: Annotated[bool, typer.Option("--excluded", help="List every left-out chunk with its reason.")] = False,
) -> None:
    """Select each query's context and print it in assembly order, with the gate's verdict."""
    _guarded(lambda: _select_dump(dump, method, order, gate, time_limit, as_json, out, excluded))


def _methods(value: str) -> list[str]:
    return [parse_choice(Method, m.strip(), "--methods").value for m in value.split(",") if m.strip()]


def _bench_tables(result: BenchResult) -> list[Table]:
    head, rows, caption = summary_table(result)
    main = Table(title=caption, title_justify="left")
    for column in head:
        main.add_column(SHORT_HEADERS.get(column, column), justify="left" if column == "method" else "right")
    for row in rows:
        main.add_row(*row)
    metrics = Table(title="quality metrics (mean)", title_justify="left")
    metrics.add_column("metric")
    for s in result.summaries:
        metrics.add_column(s.method, justify="right")
    for name in METRIC_NAMES:
        metrics.add_row(name, *[f"{s.metrics[name]:.3f}" for s in result.summaries])
    return [main, metrics]


def _bench(dumps: list[Path], methods: str, budget: int | None, budget_scale: float | None, jobs: int,
           time_limit: float, as_json: bool, plot: Path | None, markdown: bool) -> int:
    names = _methods(methods)
    _check_output(plot, dumps, "--plot")
    queries = [q for dump in dumps for q in read_dump(dump)]
    console = Console(stderr=True)
    with Progress(TextColumn("bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=as_json or not console.is_terminal) as bar:
        task = bar.add_task("bench", total=len(queries))
        result = run_bench(queries, names, budget=budget, budget_scale=budget_scale, jobs=jobs,
                           progress=lambda k: bar.update(task, completed=k),
                           select_options={"time_limit": time_limit})
    result.dumps = [str(d) for d in dumps]
    if plot is not None:
        plot_bench(result, plot)
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
    elif markdown:
        sys.stdout.write(to_markdown(result) + "\n")
    else:
        out = _console()
        for table in _bench_tables(result):
            out.print(table)
        out.print("W/T/L: wins, ties and losses on the objective against greedy; gate: selections that pass; "
                  "recall ... mid-third: over queries with gold (mid-third: share of selected gold in the "
                  "middle third of the window).", highlight=False)
    return EXIT_OK


@app.command("bench")
def bench_command(
    dumps: Annotated[list[Path], typer.Argument(help="One or more JSONL candidate dumps.", show_default=False)],
    methods: Annotated[str, typer.Option(help="Comma-separated methods to compare.")] = "greedy,topk,density,mmr,optimal",
    budget: Annotated[int | None, typer.Option(min=1, help="Use this token budget for every query.")] = None,
    budget_scale: Annotated[float | None, typer.Option(min=0.0, callback=_finite,
                                                       help="Scale every query's budget.")] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    time_limit: Annotated[float, typer.Option(min=0.001, callback=_finite,
                                               help="Seconds per query for the optimizer.")] = 1.0,
    as_json: JsonFlag = False,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG: quality against latency, metric bars.")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the summary as a markdown table.")] = False,
) -> None:
    """Replay dumps through the selectors and compare them side by side."""
    _guarded(lambda: _bench(dumps, methods, budget, budget_scale, jobs, time_limit, as_json, plot, markdown))


def _compare(dump: Path, query_id: str, a: Method, b: Method, time_limit: float, as_json: bool) -> int:
    query = next((q for q in read_dump(dump) if q.query_id == query_id), None)
    if query is None:
        raise InputError(file=str(dump), query_id=query_id, message="no such query in the dump")
    sel = {side: select(query.candidates, query.requirements, query.query, m, time_limit=time_limit)
           for side, m in (("a", a), ("b", b))}
    if as_json:
        sys.stdout.write(json.dumps({"query_id": query_id, "a": sel["a"].to_dict(), "b": sel["b"].to_dict(),
                                     "metric_delta": {k: sel["b"].report.metrics[k] - sel["a"].report.metrics[k]
                                                      for k in METRIC_NAMES}}, indent=2) + "\n")
        return EXIT_OK
    console = _console()
    pos = {side: {cid: k for k, cid in enumerate(s.ids, start=1)} for side, s in sel.items()}
    table = Table(title=f"{_data(query_id)}: {a.value} (A) vs {b.value} (B)", title_justify="left")
    for column in ("id", "source", "tokens", "relevance", "A", "B", "left out because"):
        table.add_column(column, justify="right" if column in ("tokens", "relevance", "A", "B") else "left")
    for c in sorted(query.candidates, key=lambda c: -c.relevance):
        in_a, in_b = pos["a"].get(c.id), pos["b"].get(c.id)
        why_a, why_b = sel["a"].excluded.get(c.id), sel["b"].excluded.get(c.id)
        if why_a is not None and why_a == why_b:
            why = [f"both: {why_a}"]
        else:
            why = [f"{side}: {text}" for side, text in (("A", why_a), ("B", why_b)) if text is not None]
        source = c.source if query.requirements.admits(c.scope) else "(not admitted)"  # the no-echo rule
        table.add_row(_data(c.id), _data(source), str(c.tokens), f"{c.relevance:.3f}", str(in_a or "-"),
                      str(in_b or "-"), _data("; ".join(why)))
    console.print(table)
    deltas = Table(title="metrics", title_justify="left")
    for column in ("", "A", "B", "B - A"):
        deltas.add_column(column, justify="left" if not column else "right")
    ra, rb = sel["a"].report, sel["b"].report
    deltas.add_row("objective", f"{sel['a'].objective:.4f}", f"{sel['b'].objective:.4f}",
                   f"{sel['b'].objective - sel['a'].objective:+.4f}")
    deltas.add_row("tokens", str(ra.tokens_used), str(rb.tokens_used), f"{rb.tokens_used - ra.tokens_used:+d}")
    deltas.add_row("gate", "pass" if ra.passed else "fail", "pass" if rb.passed else "fail", "")
    for name in METRIC_NAMES:
        deltas.add_row(name, f"{ra.metrics[name]:.3f}", f"{rb.metrics[name]:.3f}",
                       f"{rb.metrics[name] - ra.metrics[name]:+.3f}")
    console.print(deltas)
    return EXIT_OK


@app.command("compare")
def compare_command(
    dump: DumpPath,
    query: Annotated[str, typer.Option("--query", help="The query id.", show_default=False)],
    a: Annotated[Method, typer.Option("--a", help="First method.")] = Method.GREEDY,
    b: Annotated[Method, typer.Option("--b", help="Second method.")] = Method.OPTIMAL,
    time_limit: Annotated[float, typer.Option(min=0.001, callback=_finite, help="Seconds for the optimizer.")] = 1.0,
    as_json: JsonFlag = False,
) -> None:
    """Two selections of one query side by side: what each took and left out, and why."""
    _guarded(lambda: _compare(dump, query, a, b, time_limit, as_json))


@app.command("gen")
def gen_command(
    out: Annotated[Path, typer.Argument(help="The dump to write (whole or not at all).", show_default=False)],
    queries: Annotated[int, typer.Option(min=1)] = 20,
    candidates: Annotated[int, typer.Option(min=1, help="Candidates per query.")] = 50,
    words_mean: Annotated[int, typer.Option(min=1, help="Mean words per chunk.")] = 80,
    words_spread: Annotated[float, typer.Option(min=0, max=1, help="Std of words / mean.")] = 0.5,
    sources: Annotated[int, typer.Option(min=1)] = 4,
    source_skew: Annotated[float, typer.Option(min=0, callback=_finite, help="Zipf exponent of source shares.")] = 1.0,
    required_sources: Annotated[int, typer.Option(min=0)] = 2,
    aspects: Annotated[int, typer.Option(min=0, help="Required aspects per query.")] = 4,
    gold_share: Annotated[float, typer.Option(min=0, max=1, help="Share of candidates that are gold.")] = 0.15,
    duplicate_rate: Annotated[float, typer.Option(min=0, max=1)] = 0.08,
    conflict_rate: Annotated[float, typer.Option(min=0, max=1, help="Chunks with a conflict field.")] = 0.08,
    version_rate: Annotated[float, typer.Option(min=0, max=1, help="Chunks that are versions of a doc.")] = 0.08,
    stale_rate: Annotated[float, typer.Option(min=0, max=1, help="Chunks past their validity window.")] = 0.1,
    inadmissible_rate: Annotated[float, typer.Option(min=0, max=1)] = 0.05,
    budget_factor: Annotated[float, typer.Option(min=0.01, callback=_finite,
                                                 help="Budget = factor x gold tokens.")] = 1.5,
    embedding_dim: Annotated[int, typer.Option(min=0, help="0: no embeddings.")] = 0,
    planted_rate: Annotated[float, typer.Option(min=0, max=1, help="Queries with a planted conflicting fact.")] = 0.0,
    planted_majority_rate: Annotated[float, typer.Option(min=0, max=1, help="Share of plants where the false "
                                                                           "value is the majority.")] = 0.0,
    planted_true_copies: Annotated[int, typer.Option(min=1, help="Chunks stating the true value.")] = 2,
    planted_favour_false: Annotated[float, typer.Option(min=0, max=1, help="Share of plants whose false "
                                                                          "side is more relevant.")] = 0.5,
    seed: Annotated[int, typer.Option(min=0)] = 0,
) -> None:
    """Write a synthetic candidate dump, deterministic from the seed, with gold labels."""
    knobs = {k: v for k, v in locals().items() if k != "out"}

    def work() -> int:
        _check_output(out, [], "OUT")
        count = write_dump(out, generate_queries(GeneratorConfig(**knobs)))
        typer.echo(f"wrote {count} queries to {terminal_text(out)}")
        return EXIT_OK

    _guarded(work)


def _read_traces(path: Path):
    """Lines of a trace file: ``{"trace_id"?, "chunks": [...], "prompts"?: [...]}``."""
    for line_no, data in read_jsonl(path, what="trace file"):
        if not isinstance(data, dict) or not isinstance(data.get("chunks"), list):
            raise InputError(file=str(path), line=line_no, field="chunks",
                             expected="an object with a list of chunks")
        name = str(data.get("trace_id", data.get("name", f"line {line_no}")))
        try:
            chunks = data["chunks"]
            if "prompts" in data:
                chunks = [c.to_dict() for c in trace(chunks, data["prompts"])]
            yield name, audit(chunks)
        except InputError as err:
            raise err.located(file=str(path), line=line_no, query_id=name) from None


def _audit(path: Path, as_json: bool) -> int:
    results = list(_read_traces(path))
    if not results:
        raise InputError(file=str(path), message="the trace file holds no trace")
    if as_json:
        sys.stdout.write(json.dumps([{"trace_id": n, **r.to_dict()} for n, r in results], indent=2) + "\n")
        return EXIT_OK
    console = _console()
    colour = {"PASS": "green", "WARN": "yellow", "FAIL": "red"}
    for name, report in results:
        console.print(f"[bold]{_data(name)}[/bold]  overall {report.overall}/100  "
                      f"[{colour[report.label]}]{report.label}[/{colour[report.label]}]")
        for sub in report.subscores:
            console.print(f"   {sub.name:12s} {sub.score:3d}/100  {_data(sub.finding)}", highlight=False)
        for line in report.recommendations:
            console.print(f"   -> {_data(line)}", highlight=False)
        console.print()
    return EXIT_OK


@app.command("audit")
def audit_command(
    traces: Annotated[Path, typer.Argument(help="JSONL: one trace per line, its chunks (observed fields, or "
                                                 "texts with the trace's `prompts`).", show_default=False)],
    as_json: JsonFlag = False,
) -> None:
    """Audit traces the way RAGScope does: precision, efficiency, uniqueness, coverage, rerank gain."""
    _guarded(lambda: _audit(traces, as_json))


def _ablate(dump: Path, out: Path, method: Method, seed: int, time_limit: float) -> int:
    _check_output(out, [dump], "--out")
    queries = list(read_dump(dump))
    if not queries:
        raise InputError(file=str(dump), message="the dump holds no query")
    selections = [select(q.candidates, q.requirements, q.query, method, time_limit=time_limit).ids for q in queries]
    rows = list(ablation_variants(queries, selections, seed=seed))
    write_jsonl(out, rows)
    typer.echo(f"wrote {len(rows)} variants of {len(queries)} queries to {terminal_text(out)}")
    return EXIT_OK


@app.command("ablate")
def ablate_command(
    dump: DumpPath,
    out: Annotated[Path, typer.Option("--out", help="JSONL to write (whole or not at all).", show_default=False)],
    method: Annotated[Method, typer.Option(help="Selection method for the full context.")] = Method.OPTIMAL,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the shuffled variant.")] = 0,
    time_limit: Annotated[float, typer.Option(min=0.001, callback=_finite,
                                               help="Seconds per query for the optimizer.")] = 1.0,
) -> None:
    """Write the ablation variants (full, none, shuffled, truncated half / quarter, reordered) of
    each query's selection, for your harness to run and diff."""
    _guarded(lambda: _ablate(dump, out, method, seed, time_limit))


@app.callback()
def _root() -> None:
    """Choose and inspect the retrieved chunks that go into an LLM's context window."""


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds: temporary files are removed


def main() -> None:
    """Console-script entry point.

    Output that the terminal's encoding cannot show is written as backslash escapes (never a
    UnicodeEncodeError), and SIGTERM exits through Python's cleanup (a partly written output file
    is removed).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass
    try:
        signal.signal(signal.SIGTERM, _terminate)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    app()
