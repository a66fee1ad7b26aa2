"""``ctxselect select`` and ``ctxselect compare``: each query's context in assembly order with the
gate's verdict, and two selections of one query side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ctxselect.cli.core import (
    EXIT_OK,
    BudgetOption,
    DumpPath,
    JsonFlag,
    RequirementsFile,
    _check_output,
    _console,
    _finite,
    _run,
    about,
    app,
)
from ctxselect.cli.output import Output, QuietFlag, VerboseFlag, write_json
from ctxselect.cli.terminal import _data, terminal_text
from ctxselect.errors import InputError
from ctxselect.model.files import is_stdout
from ctxselect.model.io import Query, read_dump, write_dump
from ctxselect.model.overrides import RequirementOverrides
from ctxselect.quality.vector import METRIC_NAMES
from ctxselect.selection.api import Selection, select
from ctxselect.selection.corroboration import OnUnresolved
from ctxselect.selection.diagnosis import tally
from ctxselect.selection.solvers.registry import Method, Order


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
                 as_json: bool, out: Path | None, show_excluded: bool, on_unresolved: OnUnresolved,
                 output: Output, overrides: RequirementOverrides) -> int:
    _check_output(out, [dump], "--out")
    if is_stdout(out) and as_json:
        raise InputError(field="--out", message="--out - and --json both write standard output",
                         expected="one of them (or --out FILE)")
    console = _console(stderr=is_stdout(out))  # the dump is the data when it goes to standard output
    results: list[dict[str, Any]] = []
    chosen: list[Query] = []
    n_queries = 0
    with output.progress("select", dumps=[dump]) as done:
        for query in map(overrides.apply, read_dump(dump)):
            with about(dump, query):
                selection = select(query.candidates, query.requirements, query.query, method, order=order,
                                   enforce_gate=enforce_gate, time_limit=time_limit, on_unresolved=on_unresolved)
            if out is not None:
                chosen.append(Query(query.query_id, query.query, query.requirements, query.candidates,
                                    query.gold, list(selection.ids), query.extra))
            n_queries += 1
            done(n_queries)
            if as_json:
                results.append({"query_id": query.query_id, **selection.to_dict()})
                continue
            _print_selection(console, query, selection, show_excluded)
    if not n_queries:
        raise InputError(file=str(dump), message="the dump holds no query")
    if out is not None:
        write_dump(out, chosen)
    if as_json:
        write_json({"queries": results})
    return EXIT_OK


def _print_selection(console: Any, query: Query, selection: Selection, show_excluded: bool) -> None:
    console.print(_selection_table(query, selection))
    for failure in selection.report.failures:
        console.print(f"  [red]x[/red] {_data(failure.message)}", highlight=False)
    for line in selection.infeasible:
        console.print(f"  [yellow]![/yellow] cannot pass: {_data(line)}", highlight=False)
    if selection.status == "empty":
        console.print(f"  [yellow]![/yellow] {_data(selection.status_reason)}", highlight=False)
    for u in selection.unresolved:
        (a, b), (va, vb) = u["ids"], u["values"]
        console.print(f"  [yellow]?[/yellow] sources disagree: `{_data(a)}` states {_data(va)}, `{_data(b)}` "
                      f"states {_data(vb)} ({_data(u['outcome'])})", highlight=False)
    if show_excluded:
        for cid, reason in selection.excluded.items():
            console.print(f"  - {_data(cid)}: {_data(reason)}", highlight=False)
    console.print()


@app.command("select")
def select_command(
    dump: DumpPath,
    method: Annotated[Method, typer.Option(help="Selection method.")] = Method.OPTIMAL,
    order: Annotated[Order, typer.Option(help="Assembly order of the selected chunks.")] = Order.EDGES,
    gate: Annotated[bool, typer.Option("--gate/--no-gate", help="Enforce the quality gate (optimal).")] = True,
    time_limit: Annotated[float, typer.Option(**_finite(0.001),
                                               help="Seconds per query for the optimizer's whole call (packing, signals, solve, report).")] = 1.0,
    as_json: JsonFlag = False,
    out: Annotated[Path | None, typer.Option(help="Write the dump back with `selected` filled (whole or "
                                                  "not at all; *.parquet: Parquet; -: JSONL on standard "
                                                  "output, the tables on stderr).")] = None,
    excluded: Annotated[bool, typer.Option("--excluded", help="List every left-out chunk with its reason.")] = False,
    on_unresolved: Annotated[OnUnresolved, typer.Option(
        help="What a conflict the evidence cannot decide becomes.")] = OnUnresolved.DROP_BOTH,
    requirements: RequirementsFile = None,
    budget: BudgetOption = None,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
) -> None:
    """Select each query's context and print it in assembly order, with the gate's verdict and
    the conflicts its sources leave unresolved."""
    _run(lambda output: _select_dump(dump, method, order, gate, time_limit, as_json, out, excluded, on_unresolved,
                                     output, RequirementOverrides.load(requirements, budget)), quiet, verbose)


def _compare(dump: Path, query_id: str, a: Method, b: Method, time_limit: float, as_json: bool) -> int:
    query = None
    for q in read_dump(dump):  # to the end, streamed as select reads it: a later line is checked too
        if q.query_id == query_id:  # (one held; read_dump refuses a duplicate id, located)
            query = q
    if query is None:
        raise InputError(file=str(dump), query_id=query_id, message="no such query in the dump")
    with about(dump, query):
        sel = {side: select(query.candidates, query.requirements, query.query, m, time_limit=time_limit)
               for side, m in (("a", a), ("b", b))}
    if as_json:
        write_json({"query_id": query_id, "a": sel["a"].to_dict(), "b": sel["b"].to_dict(),
                    "metric_delta": {k: sel["b"].report.metrics[k] - sel["a"].report.metrics[k] for k in METRIC_NAMES}})
        return EXIT_OK
    console = _console()
    pos = {side: {cid: k for k, cid in enumerate(s.ids, start=1)} for side, s in sel.items()}
    names = {"a": a.value, "b": b.value}
    console.print(f"[bold]{_data(query_id)}: {a.value} (A) vs {b.value} (B)[/bold]", highlight=False)
    for side, s in sel.items():
        verdict = "passes the gate" if s.report.passed else (
            "FAILS the gate (" + ", ".join(_data(f.metric) for f in s.report.failures) + ")")
        console.print(f"{side.upper()} {names[side]}: {len(s.ids)} chunks, {s.report.tokens_used} of "
                      f"{query.requirements.token_budget} tokens, objective {s.objective:.4f}, {verdict}",
                      highlight=False)
    by_id = {c.id: c for c in query.candidates}

    def described(cid: str) -> str:
        c = by_id[cid]
        source = c.source if query.requirements.admits(c.scope) else "(not admitted)"  # the no-echo rule
        where = ", ".join(f"{side.upper()} #{pos[side][cid]}" for side in ("a", "b") if cid in pos[side])
        return f"{_data(cid)} ({_data(source)}, {c.tokens} tokens, relevance {c.relevance:.3f}{', ' + where if where else ''})"

    both = [cid for cid in sel["a"].ids if cid in pos["b"]]
    console.print(f"\nIn both ({len(both)}):", highlight=False)
    for cid in both:
        console.print(Padding(Text.from_markup(described(cid)), (0, 0, 0, 2)), highlight=False)
    for side, other in (("a", "b"), ("b", "a")):
        only = [cid for cid in sel[side].ids if cid not in pos[other]]
        console.print(f"\nOnly in {side.upper()}, {names[side]} ({len(only)}):", highlight=False)
        for cid in only:
            console.print(Padding(Text.from_markup(described(cid)), (0, 0, 0, 2)), highlight=False)
            why = sel[other].excluded.get(cid, "")
            console.print(Padding(Text(f"{other.upper()} left it out: {terminal_text(why)}"), (0, 0, 0, 4)),
                          highlight=False)
    neither = [c.id for c in query.candidates if c.id not in pos["a"] and c.id not in pos["b"]]
    console.print(f"\nLeft out by both ({len(neither)}), by B's reason: "
                  f"{_data(tally(sel['b'].excluded[cid] for cid in neither)) or 'none'} (--json has every reason).\n",
                  highlight=False)
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
    time_limit: Annotated[float, typer.Option(**_finite(0.001), help="Seconds for the optimizer.")] = 1.0,
    as_json: JsonFlag = False,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
) -> None:
    """Two selections of one query side by side: what each took and left out, and why."""
    _run(lambda output: _compare(dump, query, a, b, time_limit, as_json), quiet, verbose)
