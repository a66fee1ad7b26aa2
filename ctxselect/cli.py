"""The ``ctxselect`` command line: thin commands over library functions.

Exit codes: 0 success (and, for ``inspect``, every query passes the gate), 1 some query fails the
gate, 2 bad input or arguments (a one-line message on stderr, no traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Callable

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from .dump import Query, read_dump, write_dump
from .errors import CtxSelectError, InputError
from .inspection import QualityReport, report_for
from .packing import pack
from .quality import METRIC_NAMES
from .selection import Selection, select
from .selectors.registry import Method, Order

app = typer.Typer(
    name="ctxselect",
    help="Choose and inspect the retrieved chunks that go into an LLM's context window.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT = 0, 1, 2

DumpPath = Annotated[Path, typer.Argument(help="A JSONL candidate dump (one query per line).",
                                          show_default=False)]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of tables.")]


def _guarded(work: Callable[[], int]) -> None:
    """Run a command body: library errors become one line on stderr and exit code 2."""
    try:
        code = work()
    except CtxSelectError as err:
        typer.echo(f"ctxselect: error: {err}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except OSError as err:
        typer.echo(f"ctxselect: error: {err}", err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    raise typer.Exit(code)


def _threshold_of(report: QualityReport) -> dict[str, str]:
    return {f.metric: f.condition for f in report.failures}


def _report_table(query_id: str, report: QualityReport) -> Table:
    verdict = "[green]PASS[/green]" if report.passed else "[red]FAIL[/red]"
    table = Table(title=f"{query_id}  {verdict}  ({len(report.ids)} chunks, {report.tokens_used} tokens)",
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
    console = Console()
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
                console.print(f"  [red]x[/red] {failure.message}", highlight=False)
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
    table = Table(title=(f"{query.query_id}  {selection.method}: {selection.status}{gap}, objective "
                         f"{selection.objective:.4f}, {selection.tokens}/{query.requirements.token_budget} "
                         f"tokens, gate {verdict}"), title_justify="left")
    for column in ("#", "id", "source", "tokens", "relevance"):
        table.add_column(column, justify="right" if column in ("#", "tokens", "relevance") else "left")
    by_id = {c.id: c for c in query.candidates}
    for k, cid in enumerate(selection.ids, start=1):
        c = by_id[cid]
        table.add_row(str(k), cid, c.source, str(c.tokens), f"{c.relevance:.3f}")
    return table


def _select_dump(dump: Path, method: Method, order: Order, enforce_gate: bool, time_limit: float,
                 as_json: bool, out: Path | None, show_excluded: bool) -> int:
    console = Console()
    results: list[dict[str, Any]] = []
    chosen: list[Query] = []
    for query in read_dump(dump):
        selection = select(query.candidates, query.requirements, query.query, method, order=order,
                           enforce_gate=enforce_gate, time_limit=time_limit)
        if out is not None:
            chosen.append(Query(query.query_id, query.query, query.requirements, query.candidates,
                                query.gold, list(selection.ids), query.extra))
        if as_json:
            results.append({"query_id": query.query_id, **selection.to_dict()})
            continue
        console.print(_selection_table(query, selection))
        for failure in selection.report.failures:
            console.print(f"  [red]x[/red] {failure.message}", highlight=False)
        for line in selection.infeasible:
            console.print(f"  [yellow]![/yellow] cannot pass: {line}", highlight=False)
        if show_excluded:
            for cid, reason in selection.excluded.items():
                console.print(f"  - {cid}: {reason}", highlight=False)
        console.print()
    if not results and not chosen and as_json:
        raise InputError(file=str(dump), message="the dump holds no query")
    if out is not None:
        if not chosen:
            raise InputError(file=str(dump), message="the dump holds no query")
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
    time_limit: Annotated[float, typer.Option(min=0.001, help="Seconds per query for the optimizer.")] = 1.0,
    as_json: JsonFlag = False,
    out: Annotated[Path | None, typer.Option(help="Write the dump back with `selected` filled "
                                                  "(whole or not at all).")] = None,
    excluded: Annotated[bool, typer.Option("--excluded", help="List every left-out chunk with its reason.")] = False,
) -> None:
    """Select each query's context and print it in assembly order, with the gate's verdict."""
    _guarded(lambda: _select_dump(dump, method, order, gate, time_limit, as_json, out, excluded))


@app.callback()
def _root() -> None:
    """Choose and inspect the retrieved chunks that go into an LLM's context window."""


def main() -> None:
    """Console-script entry point."""
    app()
