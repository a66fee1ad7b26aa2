"""``ctxselect bench``: replay dumps through the selectors and compare them side by side."""

from __future__ import annotations

import json
import sys
from enum import Enum
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
    EXIT_GATE_FAILED,
    EXIT_OK,
    JsonFlag,
    _check_output,
    _console,
    _finite,
    _guarded,
    app,
    terminal_text,
)
from ctxselect.cli.terminal import _data
from ctxselect.errors import InputError
from ctxselect.evaluate.bench import (
    SHORT_HEADERS,
    BenchResult,
    run_bench,
    summarize_groups,
    summary_table,
    to_markdown,
)
from ctxselect.evaluate.regression import Delta, check, compare, load_result, parse_rule
from ctxselect.evaluate.plot import plot_bench
from ctxselect.model.io import read_dump
from ctxselect.model.validation import parse_choice
from ctxselect.quality.vector import METRIC_NAMES
from ctxselect.selection.corroboration import OnUnresolved
from ctxselect.selection.solvers.registry import Method


class Engine(str, Enum):
    """Where ``bench`` runs: this machine's processes (``--jobs``) or a Dask cluster."""

    LOCAL = "local"
    DASK = "dask"


def _bench_dask(dumps, names, budget, budget_scale, jobs, options, by, scheduler, workers, quiet) -> BenchResult:
    """The bench on Dask (ctxselect.evaluate.distributed): partitions read by the workers."""
    if jobs != 1:
        raise InputError(field="--jobs", message="--jobs sets the local engine's processes",
                         expected="--workers N (a local cluster) or --scheduler ADDRESS with --engine dask")
    if scheduler is not None and workers is not None:
        raise InputError(field="--workers", message="the cluster at --scheduler has its own workers",
                         expected="--workers or --scheduler, not both")
    from ctxselect.evaluate.distributed import run_bench_dask

    console = Console(stderr=True)
    with Progress(TextColumn("bench (dask)"), BarColumn(), TextColumn("{task.fields[queries]} queries"),
                  TimeElapsedColumn(), console=console, disable=quiet or not console.is_terminal) as bar:
        task = bar.add_task("bench", total=None, queries=0)
        return run_bench_dask(dumps, names, budget=budget, budget_scale=budget_scale, select_options=options,
                              by=by, scheduler=scheduler, workers=workers,
                              progress=lambda done, total, n: bar.update(task, completed=done, total=total, queries=n))


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


def _delta_table(deltas: list[Delta], baseline: Path) -> Table:
    table = Table(title=f"against the baseline {_data(str(baseline))} (mean change, 95 % CI: paired "
                        "bootstrap over queries; * = the whole interval on the worse side)", title_justify="left")
    for column in ("method", "metric", "queries", "baseline", "new", "change", "95 % CI"):
        table.add_column(column, justify="left" if column in ("method", "metric") else "right")
    for d in deltas:
        method = d.method if d.method == d.baseline_method else f"{d.method} vs {d.baseline_method}"
        table.add_row(method, d.metric + (" *" if d.significantly_worse else ""), str(d.queries), f"{d.baseline:.4g}",
                      f"{d.new:.4g}", f"{d.change:+.4g}", f"[{d.low:+.3g}, {d.high:+.3g}]")
    return table


def _release_gate(result: BenchResult, baseline: Path | None, fail_under: list[str], max_drop: list[str]):
    """The comparison with a saved result and the rules it breaks (issue 16's release gate)."""
    rules = [parse_rule(r, "under") for r in fail_under] + [parse_rule(r, "drop") for r in max_drop]
    data = result.to_dict()
    deltas = None
    if baseline is not None:
        deltas = compare(data, load_result(baseline))
    return deltas, check(data, rules, deltas)


def _bench(dumps: list[Path], methods: str, budget: int | None, budget_scale: float | None, jobs: int,
           time_limit: float, as_json: bool, plot: Path | None, markdown: bool,
           on_unresolved: OnUnresolved = OnUnresolved.DROP_BOTH, baseline: Path | None = None,
           fail_under: list[str] = (), max_drop: list[str] = (), by: list[str] = (),
           engine: Engine = Engine.LOCAL, scheduler: str | None = None, workers: int | None = None) -> int:
    names = _methods(methods)
    _check_output(plot, dumps, "--plot")
    for r in fail_under:  # rules checked before any work
        parse_rule(r, "under")
    for r in max_drop:
        parse_rule(r, "drop")
    if baseline is not None:
        load_result(baseline)
    options = {"time_limit": time_limit, "on_unresolved": on_unresolved.value}
    if engine is Engine.DASK:
        result = _bench_dask(dumps, names, budget, budget_scale, jobs, options, by, scheduler, workers, as_json)
    elif scheduler is not None or workers is not None:
        raise InputError(field="--scheduler" if scheduler is not None else "--workers",
                         message="this option is for --engine dask", expected="--engine dask, or no such option")
    else:
        queries = [q for dump in dumps for q in read_dump(dump)]
        console = Console(stderr=True)
        with Progress(TextColumn("bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, disable=as_json or not console.is_terminal) as bar:
            task = bar.add_task("bench", total=len(queries))
            result = run_bench(queries, names, budget=budget, budget_scale=budget_scale, jobs=jobs,
                               progress=lambda k: bar.update(task, completed=k), select_options=options, by=by)
    result.dumps = [str(d) for d in dumps]
    deltas, broken = _release_gate(result, baseline, list(fail_under), list(max_drop))
    if plot is not None:
        plot_bench(result, plot)
    if as_json:
        data = result.to_dict()
        if deltas is not None or broken:
            data["release_gate"] = {"baseline": None if baseline is None else str(baseline),
                                    "deltas": [d.to_dict() for d in deltas or []], "broken": broken}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif markdown:
        sys.stdout.write(to_markdown(result) + "\n")
    else:
        out = _console()
        for table in _bench_tables(result):
            out.print(table)
        out.print("W/T/L: wins, ties and losses on the objective against greedy; gate: selections that pass; "
                  "recall ... mid-third: over queries with gold (mid-third: share of selected gold in the "
                  "middle third of the window).", highlight=False)
        for path in by:
            for value, part in summarize_groups(result, path).items():
                table = _bench_tables(part)[0]
                table.title = f"{_data(path)} = {_data(value)}: {table.title}"
                out.print(table)
        if deltas is not None:
            out.print(_delta_table(deltas, baseline))
    if broken:
        err = _console(stderr=True)
        for line in broken:
            err.print(f"release gate broken: {terminal_text(line)}", markup=False, highlight=False)
        return EXIT_GATE_FAILED
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
    baseline: Annotated[Path | None, typer.Option(
        help="A saved `bench --json` result: print each metric's change with a 95 % CI (paired bootstrap over "
             "queries); without --max-drop, exit 1 on a significant drop of objective, gate pass or gold recall.")] = None,
    fail_under: Annotated[list[str] | None, typer.Option(
        help="[METHOD.]METRIC=VALUE: exit 1 when the mean is below VALUE (repeatable).")] = None,
    max_drop: Annotated[list[str] | None, typer.Option(
        help="[METHOD.]METRIC=DELTA: exit 1 when the mean moved the worse way by more than DELTA against "
             "--baseline (repeatable).")] = None,
    by: Annotated[list[str] | None, typer.Option(
        help="Group every table by this dump field (e.g. meta.question_type; repeatable).")] = None,
    engine: Annotated[Engine, typer.Option(
        help="local: this process (or --jobs processes); dask: Dask distributed workers read the dumps in "
             "partitions (the dask extra; docs/dask.md).")] = Engine.LOCAL,
    scheduler: Annotated[str | None, typer.Option(
        help="With --engine dask: a running scheduler's address (default: a local cluster).", show_default=False)] = None,
    workers: Annotated[int | None, typer.Option(
        min=1, help="With --engine dask: worker processes of the local cluster (one thread each; default: the CPU "
                    "count).", show_default=False)] = None,
) -> None:
    """Replay dumps through the selectors and compare them side by side.

    Exit 0, or 1 when a release-gate rule (--fail-under, --max-drop, or --baseline's default) is
    broken, naming each; 2 on bad input."""
    _guarded(lambda: _bench(dumps, methods, budget, budget_scale, jobs, time_limit, as_json, plot, markdown,
                            on_unresolved, baseline, fail_under or [], max_drop or [], by or [], engine, scheduler,
                            workers))
