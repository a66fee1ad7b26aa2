"""``ctxselect bench``: replay dumps through the selectors and compare them side by side."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ctxselect.cli.core import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    JsonFlag,
    _check_output,
    _console,
    _finite,
    _run,
    app,
    terminal_text,
)
from ctxselect.cli.terminal import _data
from ctxselect.cli.output import Output, QuietFlag, VerboseFlag, write_json
from ctxselect.evaluate.bench import BenchResult, group_value, run_bench, summarize_groups, with_budget
from ctxselect.evaluate.bench_table import LEGEND, SHORT_HEADERS, summary_table, to_markdown
from ctxselect.errors import InputError
from ctxselect.evaluate.bench_metrics import extra_markdown, extra_table
from ctxselect.evaluate.paraphrase import Paraphrases, paraphrases_of
from ctxselect.evaluate.plot import check_plot, plot_bench
from ctxselect.evaluate.regression import Delta, check, compare, load_result, pairs, parse_rule
from ctxselect.evaluate.relevance import ALERT_THRESHOLD
from ctxselect.evaluate.takeaway import selected_takeaway, takeaway
from ctxselect.model.files import is_stdout, path_text
from ctxselect.model.io import read_dump
from ctxselect.model.validation import parse_choice
from ctxselect.quality.vector import METRIC_NAMES
from ctxselect.selection.corroboration import OnUnresolved
from ctxselect.selection.solvers.registry import Method


class Engine(str, Enum):
    """Where ``bench`` runs: this machine's processes (``--jobs``) or a Dask cluster."""

    LOCAL = "local"
    DASK = "dask"


def _bench_dask(dumps, names, budget, budget_scale, jobs, options, by, scheduler, workers, quiet, depths,
                paraphrases, relevance_alert) -> BenchResult:
    """The bench on Dask (ctxselect.evaluate.distributed): partitions read by the workers."""
    if jobs != 1:
        raise InputError(field="--jobs", message="--jobs sets the local engine's processes",
                         expected="--workers N (a local cluster) or --scheduler ADDRESS with --engine dask")
    if scheduler is not None and workers is not None:
        raise InputError(field="--workers", message="the cluster at --scheduler has its own workers",
                         expected="--workers or --scheduler, not both")
    from ctxselect.evaluate.distributed import check_scheduler, check_workers, run_bench_dask

    if scheduler is not None:
        check_scheduler(scheduler, "--scheduler")  # before dask is imported or any client made
    if workers is not None:
        check_workers(workers, "--workers")  # before any cluster: at most twice the CPU count

    console = Console(stderr=True)
    with Progress(TextColumn("bench (dask)"), BarColumn(), TextColumn("{task.fields[queries]} queries"),
                  TimeElapsedColumn(), console=console, disable=quiet or not console.is_terminal) as bar:
        task = bar.add_task("bench", total=None, queries=0)
        return run_bench_dask(dumps, names, budget=budget, budget_scale=budget_scale, select_options=options,
                              by=by, scheduler=scheduler, workers=workers, depths=depths, paraphrases=paraphrases,
                              relevance_alert=relevance_alert,
                              progress=lambda done, total, n: bar.update(task, completed=done, total=total, queries=n))


def _methods(value: str) -> list[str]:
    return [parse_choice(Method, m.strip(), "--methods").value for m in value.split(",") if m.strip()]


def _depths(value: str) -> list[int]:
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not parts or not all(p.isascii() and p.isdecimal() and int(p) >= 1 for p in parts):
        raise InputError(field="--depths", expected="comma-separated positive integers (e.g. 20,50,200)", found=value)
    return [int(p) for p in parts]


def _extra_table(result: BenchResult) -> Table:
    head, rows, caption = extra_table(result.summaries)
    table = Table(title=caption, title_justify="left")
    for column in head:
        table.add_column(column, justify="left" if column == "metric" else "right", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


#: The first columns of the summary; in a narrow terminal the rest (p95 and the gold metrics)
#: follow in a second table with the method again, so every number is shown in full.
_NARROW_FIRST = 7


def _table(title: str | None, head: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in head:
        table.add_column(SHORT_HEADERS.get(column, column), justify="left" if column == "method" else "right",
                         overflow="fold")  # a number too wide for its column folds; it is never cut
    for row in rows:
        table.add_row(*row)
    return table


def _width(head: list[str], rows: list[list[str]]) -> int:
    """The width of a rich table of these cells in the default box (a border and a one-space
    padding each side of every cell)."""
    cells = [[SHORT_HEADERS.get(h, h) for h in head], *rows]
    return 1 + sum(max(len(row[k]) for row in cells) + 3 for k in range(len(head)))


def _bench_tables(result: BenchResult, console: Console, wide: bool = False) -> list[Table]:
    head, rows, caption = summary_table(result)
    tables = [_table(caption, head, rows)]
    if not wide and _width(head, rows) > console.width and len(head) > _NARROW_FIRST + 1:
        cut = _NARROW_FIRST
        tables = [_table(caption, head[:cut], [r[:cut] for r in rows]),
                  _table(None, head[:1] + head[cut:], [r[:1] + r[cut:] for r in rows])]
    metrics = Table(title="quality metrics (mean)", title_justify="left")
    metrics.add_column("metric", overflow="fold")
    for s in result.summaries:
        metrics.add_column(s.method, justify="right", overflow="fold")
    for name in METRIC_NAMES:
        metrics.add_row(name, *[f"{s.metrics[name]:.3f}" for s in result.summaries])
    metrics.add_row("quality_score (000)", *[f"{s.quality_score:.3f}" for s in result.summaries])
    metrics.add_row("relevance weighted (001)", *[f"{s.relevance.get('weighted', 0):.3f}" for s in result.summaries])
    metrics.add_row("relevance alerts", *[f"{s.relevance.get('alerts', 0)}/{s.queries}" for s in result.summaries])
    return [*tables, metrics]


def _delta_table(deltas: list[Delta], baseline: Path) -> Table:
    table = Table(title=f"against the baseline {_data(str(baseline))} (mean change, 95 % CI: paired "
                        "bootstrap over queries; * = the whole interval on the worse side)", title_justify="left")
    for column in ("method", "metric", "queries", "baseline", "new", "change", "95 % CI"):
        table.add_column(column, justify="left" if column in ("method", "metric") else "right")
    for d in deltas:
        method = _data(d.method if d.method == d.baseline_method else f"{d.method} vs {d.baseline_method}")
        table.add_row(method, d.metric + (" *" if d.significantly_worse else ""), str(d.queries), f"{d.baseline:.4g}",
                      f"{d.new:.4g}", f"{d.change:+.4g}", f"[{d.low:+.3g}, {d.high:+.3g}]")
    return table


def _bench(dumps: list[Path], methods: str, budget: int | None, budget_scale: float | None, jobs: int,
           time_limit: float, as_json: bool, plot: Path | None, markdown: bool,
           on_unresolved: OnUnresolved = OnUnresolved.DROP_BOTH, wide: bool = False,
           output: Output | None = None, baseline: Path | None = None,
           fail_under: list[str] = (), max_drop: list[str] = (), by: list[str] = (), depths: str = "20,50,200",
           paraphrases: Paraphrases = Paraphrases.DUMP, relevance_alert: float = ALERT_THRESHOLD,
           all_metrics: bool = False, engine: Engine = Engine.LOCAL, scheduler: str | None = None,
           workers: int | None = None) -> int:
    output = output or Output()
    names = _methods(methods)
    depth_list = _depths(depths)
    if plot is not None:
        if is_stdout(plot):
            raise InputError(field="--plot", message="the tables go to standard output", expected="a .png file")
        check_plot(plot)  # matplotlib and the target, before the bench runs
    _check_output(plot, dumps, "--plot")
    rules = [parse_rule(r, "under") for r in fail_under] + [parse_rule(r, "drop") for r in max_drop]
    for rule in rules:  # every rule, the baseline and its pairing checked before any work
        if rule.method is not None and rule.method not in names:
            raise InputError(field="--fail-under" if rule.kind == "under" else "--max-drop",
                             message=f"{rule} names {rule.method}, which this run does not select with",
                             expected="a method of --methods")
    saved = None
    if baseline is not None:
        saved = load_result(baseline)
        if not pairs(names, saved["methods"]):
            raise InputError(file=str(baseline), field="--baseline", message="the baseline holds none of the "
                             "methods of this run", expected="a bench result of " + ", ".join(names))
    options = {"time_limit": time_limit, "on_unresolved": on_unresolved.value}
    queries = None  # the local run holds them (the selected takeaway reads them); Dask's workers do
    if engine is Engine.DASK:
        result = _bench_dask(dumps, names, budget, budget_scale, jobs, options, by, scheduler, workers,
                             as_json or output.quiet, depth_list, paraphrases, relevance_alert)
    elif scheduler is not None or workers is not None:
        raise InputError(field="--scheduler" if scheduler is not None else "--workers",
                         message="this option is for --engine dask", expected="--engine dask, or no such option")
    else:
        queries, first_seen = [], {}
        for dump in dumps:
            for q in read_dump(dump):
                try:  # the dump's paraphrases and --by fields checked here, where the file is known
                    paraphrases_of(q, paraphrases)
                    for path in by:
                        group_value(q, path)
                except InputError as err:
                    raise err.located(file=str(dump)) from None
                if q.query_id in first_seen:
                    raise InputError(file=str(dump), query_id=q.query_id, field="query_id",
                                     message=f"the query id is also in {first_seen[q.query_id]}",
                                     expected="query ids unique across the dumps of one bench (records pair by id)")
                first_seen[q.query_id] = str(dump)
                queries.append(q)
        with output.progress("bench", total=len(queries)) as done:
            try:
                result = run_bench(queries, names, budget=budget, budget_scale=budget_scale, jobs=jobs, progress=done,
                                   select_options=options, by=by, depths=depth_list, paraphrases=paraphrases,
                                   relevance_alert=relevance_alert)
            except InputError as err:  # a query's own error, or its paraphrase's ('q1 (paraphrases[0])'): its dump too
                qid = err.query_id or ""
                raise err.located(file=first_seen.get(qid) or first_seen.get(qid.rsplit(" (", 1)[0])) from None
    result.dumps = [path_text(d) for d in dumps]
    data = result.to_dict()
    deltas = None if saved is None else compare(data, saved)
    broken = check(data, rules, deltas)
    if plot is not None:
        plot_bench(result, plot)
    if as_json:
        if deltas is not None or broken:
            data["release_gate"] = {"baseline": None if baseline is None else path_text(baseline),
                                    "deltas": [d.to_dict() for d in deltas or []], "broken": broken}
        write_json(data)
    elif markdown:
        sys.stdout.write(to_markdown(result) + "\n")
        for path in by:
            for value, part in summarize_groups(result, path).items():
                sys.stdout.write(f"\n#### {terminal_text(path)} = {terminal_text(value)}\n\n" + to_markdown(part).split("\n\n")[0] + "\n")
        if all_metrics:
            sys.stdout.write("\n" + extra_markdown(result.summaries) + "\n")
    else:
        out = _console()
        selected = None if queries is None else selected_takeaway([with_budget(q, budget, budget_scale) for q in queries])
        for line in (takeaway(result), selected):
            if line:
                out.print(_data(line), highlight=False)
        if wide:  # the one table at its full width: the terminal wraps it, rich never folds it
            head, rows, _ = summary_table(result)
            out.width = max(out.width, _width(head, rows))
        *summary, quality = _bench_tables(result, out, wide)
        for table in summary:
            out.print(table)
        out.print(LEGEND, highlight=False)
        if wide or all_metrics:  # the first screen keeps to the summary; the quality vector on request
            out.print(quality)
        if all_metrics:
            out.print(_extra_table(result))
        for path in by:
            for value, part in summarize_groups(result, path).items():
                tables = _bench_tables(part, out, wide)[:-1]  # the summary, without the metrics table
                tables[0].title = f"{_data(path)} = {_data(value)}: {tables[0].title}"
                for table in tables:
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
    dumps: Annotated[list[Path], typer.Argument(help="One or more candidate dumps (JSONL, *.parquet, or -).",
                                                show_default=False)],
    methods: Annotated[str, typer.Option(help="Comma-separated methods to compare.")] = "greedy,topk,density,mmr,optimal",
    budget: Annotated[int | None, typer.Option(min=1, help="Use this token budget for every query.")] = None,
    budget_scale: Annotated[float | None, typer.Option(**_finite(0.0),
                                                       help="Scale every query's budget.")] = None,
    jobs: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    time_limit: Annotated[float, typer.Option(**_finite(0.001),
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
    depths: Annotated[str, typer.Option(help="Retrieval depths k of recall@k, precision@k, nDCG@k "
                                             "(comma-separated).")] = "20,50,200",
    paraphrases: Annotated[Paraphrases, typer.Option(
        help="Self-consistency: the dump's `paraphrases` (dump), else the built-in perturbations too (builtin), "
             "or none. Each paraphrase costs one more selection per method.")] = Paraphrases.DUMP,
    relevance_alert: Annotated[float, typer.Option(**_finite(0, 1),
                                                   help="Alert when a selection's weighted relevance is below this "
                                                        "(article 001: aim for 0.7+).")] = ALERT_THRESHOLD,
    all_metrics: Annotated[bool, typer.Option("--all-metrics", help="Also print the articles' metrics table "
                                              "and the quality metrics' means (recall at depth, gold position, density, precision@k, nDCG@k, MAP, "
                                              "self-consistency, relevance, quality score); --json always has them.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="One summary table however narrow the terminal "
                                                      "(default: split in two when it does not fit).")] = False,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
    engine: Annotated[Engine, typer.Option(
        help="local: this process (or --jobs processes); dask: Dask distributed workers read the dumps in "
             "partitions (the dask extra; docs/dask.md).")] = Engine.LOCAL,
    scheduler: Annotated[str | None, typer.Option(
        help="With --engine dask: a running scheduler's address (default: a local cluster).", show_default=False)] = None,
    workers: Annotated[int | None, typer.Option(
        min=1, help="With --engine dask: worker processes of the local cluster (one thread each; default: the CPU "
                    "count; at most twice the CPU count).", show_default=False)] = None,
) -> None:
    """Replay dumps through the selectors and compare them side by side.

    Exit 0, or 1 when a release-gate rule (--fail-under, --max-drop, or --baseline's default) is
    broken, naming each; 2 on bad input."""
    _run(lambda output: _bench(dumps, methods, budget, budget_scale, jobs, time_limit, as_json, plot, markdown,
                               on_unresolved, wide, output, baseline, fail_under or [], max_drop or [], by or [],
                               depths, paraphrases, relevance_alert, all_metrics, engine, scheduler, workers),
         quiet, verbose)
