"""``ctxselect inspect``: the quality vector and the gate of each query's context."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from ctxselect.cli.core import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    BudgetOption,
    DumpPath,
    JsonFlag,
    RequirementsFile,
    _console,
    _run,
    app,
)
from ctxselect.cli.output import Output, QuietFlag, VerboseFlag
from ctxselect.cli.terminal import _data
from ctxselect.errors import InputError
from ctxselect.model.io import read_dump
from ctxselect.model.overrides import RequirementOverrides
from ctxselect.packing import pack
from ctxselect.quality.report import QualityReport, report_for
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
    return table


def _inspect_dump(dump: Path, as_json: bool, output: Output, overrides: RequirementOverrides) -> int:
    console = _console()
    results: list[dict[str, Any]] = []
    n_failed = n_total = 0
    with output.progress("inspect", dumps=[dump]) as done:
        for query in map(overrides.apply, read_dump(dump)):
            n_total += 1
            packed = pack(query.candidates, query.requirements)
            mask = packed.mask_of(query.selected) if query.selected is not None else np.ones(packed.n, bool)
            order = packed.index_of(query.selected) if query.selected is not None else None
            report = report_for(packed, mask, order)
            n_failed += not report.passed
            done(n_total)
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
def inspect_command(dump: DumpPath, as_json: JsonFlag = False, requirements: RequirementsFile = None,
                    budget: BudgetOption = None, quiet: QuietFlag = False, verbose: VerboseFlag = 0) -> None:
    """Score each query's context (its `selected` ids, else all candidates) with the quality
    vector and the gate. Exit 0 when every query passes, 1 when some fail, 2 on bad input."""
    _run(lambda output: _inspect_dump(dump, as_json, output, RequirementOverrides.load(requirements, budget)),
         quiet, verbose)
