"""``ctxselect bench``: replay dumps through the selectors and compare them side by side."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from ctxselect.cli.core import (
    EXIT_OK,
    JsonFlag,
    _check_output,
    _console,
    _finite,
    _guarded,
    app,
)
from ctxselect.evaluate.bench import (
    SHORT_HEADERS,
    BenchResult,
    run_bench,
    summary_table,
    to_markdown,
)
from ctxselect.evaluate.plot import plot_bench
from ctxselect.model.io import read_dump
from ctxselect.model.validation import parse_choice
from ctxselect.quality.vector import METRIC_NAMES
from ctxselect.selection.corroboration import OnUnresolved
from ctxselect.selection.solvers.registry import Method


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
           time_limit: float, as_json: bool, plot: Path | None, markdown: bool,
           on_unresolved: OnUnresolved = OnUnresolved.DROP_BOTH) -> int:
    names = _methods(methods)
    _check_output(plot, dumps, "--plot")
    queries = [q for dump in dumps for q in read_dump(dump)]
    console = Console(stderr=True)
    with Progress(TextColumn("bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, disable=as_json or not console.is_terminal) as bar:
        task = bar.add_task("bench", total=len(queries))
        result = run_bench(queries, names, budget=budget, budget_scale=budget_scale, jobs=jobs,
                           progress=lambda k: bar.update(task, completed=k),
                           select_options={"time_limit": time_limit, "on_unresolved": on_unresolved.value})
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
                                               help="Seconds per query for the optimizer's whole call (packing, signals, solve, report).")] = 1.0,
    as_json: JsonFlag = False,
    plot: Annotated[Path | None, typer.Option(help="Write a PNG: quality against latency, metric bars.")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the summary as a markdown table.")] = False,
    on_unresolved: Annotated[OnUnresolved, typer.Option(
        help="What a conflict the evidence cannot decide becomes.")] = OnUnresolved.DROP_BOTH,
) -> None:
    """Replay dumps through the selectors and compare them side by side."""
    _guarded(lambda: _bench(dumps, methods, budget, budget_scale, jobs, time_limit, as_json, plot, markdown,
                            on_unresolved))
