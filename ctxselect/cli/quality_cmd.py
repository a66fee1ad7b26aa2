"""``ctxselect inspect``: the quality vector, the gate, article 000's weighted score and article
001's relevance of each query's context."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich.table import Table

from ctxselect.cli.core import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    BudgetOption,
    DumpPath,
    JsonFlag,
    RequirementsFile,
    _console,
    _finite,
    _run,
    about,
    app,
)
from ctxselect.cli.output import Output, QuietFlag, VerboseFlag, write_json
from ctxselect.cli.terminal import _data
from ctxselect.errors import InputError
from ctxselect.evaluate.relevance import ALERT_THRESHOLD, context_relevance
from ctxselect.model.io import read_dump
from ctxselect.model.overrides import RequirementOverrides
from ctxselect.packing import pack
from ctxselect.quality.report import QualityReport, report_for
from ctxselect.quality.score import quality_score
from ctxselect.quality.vector import METRIC_NAMES


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
    table.add_row("quality_score (000)", f"{quality_score(report.metrics):.3f}", "")
    return table


def _relevance_line(rel: dict[str, Any]) -> str:
    parts = " · ".join(f"{k} {rel[k]:.3f} {rel['bands'][k]}" for k in ("mean", "min", "weighted"))
    alert = f" — [red]alert: weighted below {rel['threshold']:g}[/red]" if rel["alert"] else ""
    return f"  relevance (001): {parts}{alert}"


def _inspect_dump(dump: Path, as_json: bool, output: Output, overrides: RequirementOverrides,
                  relevance_alert: float = ALERT_THRESHOLD) -> int:
    console = _console()
    results: list[dict[str, Any]] = []
    n_failed = n_total = n_alerts = 0
    with output.progress("inspect", dumps=[dump]) as done:
        for query in map(overrides.apply, read_dump(dump)):
            n_total += 1
            with about(dump, query):
                packed = pack(query.candidates, query.requirements)
            mask = packed.mask_of(query.selected) if query.selected is not None else np.ones(packed.n, bool)
            order = packed.index_of(query.selected) if query.selected is not None else None
            report = report_for(packed, mask, order)
            n_failed += not report.passed
            rel = context_relevance(packed.relevance[mask].tolist(), relevance_alert)
            n_alerts += rel["alert"]
            done(n_total)
            if as_json:
                results.append({"query_id": query.query_id, **report.to_dict(), "relevance": rel,
                                "quality_score": quality_score(report.metrics)})
            else:
                console.print(_report_table(query.query_id, report))
                for failure in report.failures:
                    console.print(f"  [red]x[/red] {_data(failure.message)}", highlight=False)
                console.print(_relevance_line(rel), highlight=False)
                console.print()
    if n_total == 0:
        raise InputError(file=str(dump), message="the dump holds no query")
    if as_json:
        write_json({"queries": results, "passed": n_total - n_failed, "failed": n_failed,
                    "relevance_alerts": n_alerts})
    else:
        console.print(f"{n_failed} of {n_total} queries failed the gate." if n_failed
                      else "Every query passed the gate.")
        if n_alerts:
            console.print(f"{n_alerts} of {n_total} contexts have weighted relevance below {relevance_alert:g} "
                          "(an alert, not a gate failure: the exit code is the gate's).", highlight=False)
    return EXIT_GATE_FAILED if n_failed else EXIT_OK


@app.command("inspect")
def inspect_command(
    dump: DumpPath,
    as_json: JsonFlag = False,
    requirements: RequirementsFile = None,
    budget: BudgetOption = None,
    relevance_alert: Annotated[float, typer.Option(**_finite(0, 1),
                                                   help="Alert when a context's weighted relevance is below this "
                                                        "(article 001: aim for 0.7+).")] = ALERT_THRESHOLD,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
) -> None:
    """Score each query's context (its `selected` ids, else all candidates) with the quality
    vector, the gate, article 000's weighted score and article 001's relevance (mean, min,
    weighted, bands, alert). Exit 0 when every query passes the gate, 1 when some fail, 2 on bad
    input; a relevance alert is reported, not an exit code."""
    _run(lambda output: _inspect_dump(dump, as_json, output, RequirementOverrides.load(requirements, budget),
                                      relevance_alert), quiet, verbose)
