"""``ctxselect gen``, ``audit`` and ``ablate``: synthetic dumps, trace audits and ablation variants."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ctxselect.cli.core import (
    EXIT_GATE_FAILED,
    EXIT_OK,
    DumpPath,
    JsonFlag,
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
from ctxselect.evaluate.ablation import ablation_variants
from ctxselect.evaluate.audit import audit
from ctxselect.evaluate.examples import EXAMPLES, example_path
from ctxselect.evaluate.generate import GeneratorConfig, generate_queries
from ctxselect.evaluate.trace import trace
from ctxselect.model import validation as checks
from ctxselect.model.files import is_stdout, write_jsonl
from ctxselect.model.io import read_dump, read_jsonl, write_dump
from ctxselect.model.parquet import is_parquet
from ctxselect.selection.api import select
from ctxselect.selection.solvers.registry import Method


#: The most queries, or candidates a query, ``gen`` writes (a size beyond what memory holds was a traceback).
_MOST = 1_000_000


@app.command("gen")
def gen_command(
    out: Annotated[Path, typer.Argument(help="The dump to write (whole or not at all; *.parquet: Parquet; "
                                             "-: JSONL on standard output).", show_default=False)],
    queries: Annotated[int, typer.Option(min=1, max=_MOST)] = 20,
    candidates: Annotated[int, typer.Option(min=1, max=_MOST, help="Candidates per query.")] = 50,
    words_mean: Annotated[int, typer.Option(min=1, max=100_000, help="Mean words per chunk.")] = 80,
    words_spread: Annotated[float, typer.Option(**_finite(0, 1), help="Std of words / mean.")] = 0.5,
    sources: Annotated[int, typer.Option(min=1, max=100_000)] = 4,
    source_skew: Annotated[float, typer.Option(**_finite(0), help="Zipf exponent of source shares.")] = 1.0,
    required_sources: Annotated[int, typer.Option(min=0)] = 2,
    aspects: Annotated[int, typer.Option(min=0, max=1_000, help="Required aspects per query.")] = 4,
    gold_share: Annotated[float, typer.Option(**_finite(0, 1), help="Share of candidates that are gold.")] = 0.15,
    duplicate_rate: Annotated[float, typer.Option(**_finite(0, 1))] = 0.08,
    conflict_rate: Annotated[float, typer.Option(**_finite(0, 1), help="Chunks with a conflict field.")] = 0.08,
    version_rate: Annotated[float, typer.Option(**_finite(0, 1), help="Chunks that are versions of a doc.")] = 0.08,
    stale_rate: Annotated[float, typer.Option(**_finite(0, 1), help="Chunks past their validity window.")] = 0.1,
    inadmissible_rate: Annotated[float, typer.Option(**_finite(0, 1))] = 0.05,
    budget_factor: Annotated[float, typer.Option(**_finite(0.01),
                                                 help="Budget = factor x gold tokens.")] = 1.5,
    embedding_dim: Annotated[int, typer.Option(min=0, max=16_384, help="0: no embeddings.")] = 0,
    planted_rate: Annotated[float, typer.Option(**_finite(0, 1),
                                                help="Queries with a planted conflicting fact.")] = 0.0,
    planted_majority_rate: Annotated[float, typer.Option(**_finite(0, 1), help="Share of plants where the false "
                                                                               "value is the majority.")] = 0.0,
    planted_true_copies: Annotated[int, typer.Option(min=1, help="Chunks stating the true value.")] = 2,
    planted_favour_false: Annotated[float, typer.Option(**_finite(0, 1), help="Share of plants whose false "
                                                                              "side is more relevant.")] = 0.5,
    seed: Annotated[int, typer.Option(min=0)] = 0,
    example: Annotated[str | None, typer.Option(
        show_default=False, help="Write a bundled example dump instead (" + ", ".join(EXAMPLES) +
        "; no generator knobs).")] = None,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
) -> None:
    """Write a synthetic candidate dump, deterministic from the seed, with gold labels (or, with
    --example, one of the examples that ship with ctxselect)."""
    knobs = {k: v for k, v in locals().items() if k not in ("out", "example", "quiet", "verbose")}

    def work(output: Output) -> int:
        config = GeneratorConfig(**knobs)
        if example is not None:
            source = example_path(example)
            if config != GeneratorConfig():
                raise InputError(field="--example", message="a bundled example takes no generator knobs",
                                 expected="--example NAME OUT alone")
        _check_output(out, [], "OUT")
        count = write_dump(out, read_dump(source) if example is not None else generate_queries(config))
        output.status(f"wrote {count} queries to {'<stdout>' if is_stdout(out) else terminal_text(out)}")
        return EXIT_OK

    _run(work, quiet, verbose)


#: The keys of a trace line: its id (``trace_id``, or ``name`` as RAGScope's vectors call it), chunks and prompts.
TRACE_KEYS = ("trace_id", "name", "chunks", "prompts")


def _trace_name(path: Path, line_no: int, data: dict) -> str:
    """The trace's id (``trace_id`` or ``name``; else ``line N``), a line's unknown key refused."""
    unknown = [key for key in data if key not in TRACE_KEYS]
    if unknown:  # a misspelt `prompts` would audit the chunks untraced, and decide the verdict
        raise InputError(file=str(path), line=line_no, field=unknown[0], message="unknown trace field",
                         expected="one of " + ", ".join(TRACE_KEYS))
    if "trace_id" in data and "name" in data:
        raise InputError(file=str(path), line=line_no, field="name", message="`trace_id` and `name` both "
                         "given; they name one trace", expected="one of them")
    key = "trace_id" if "trace_id" in data else "name"
    if key not in data:
        return f"line {line_no}"
    try:
        return checks.label(data[key], key)
    except InputError as err:
        raise err.located(file=str(path), line=line_no) from None


def _read_traces(path: Path, match: str = "exact", fuzzy_threshold: float | None = None):
    """Lines of a trace file: ``{"trace_id"?, "chunks": [...], "prompts"?: [...]}``; no other key,
    and one line per trace id."""
    first: dict[str, int] = {}
    for line_no, data in read_jsonl(path, what="trace file"):
        if not isinstance(data, dict) or not isinstance(data.get("chunks"), list):
            raise InputError(file=str(path), line=line_no, field="chunks",
                             expected="an object with a list of chunks")
        name = _trace_name(path, line_no, data)
        if name in first:  # the results are named by trace id: two would be told apart by nothing
            raise InputError(file=str(path), line=line_no, query_id=name,
                             field="name" if "name" in data else "trace_id",
                             message=f"the trace id of line {first[name]} too", expected="one line per trace")
        first[name] = line_no
        try:
            chunks = data["chunks"]
            if "prompts" in data:
                chunks = [c.to_dict() for c in trace(chunks, data["prompts"], match=match,
                                                     fuzzy_threshold=fuzzy_threshold)]
            yield name, audit(chunks)
        except InputError as err:
            raise err.located(file=str(path), line=line_no, query_id=name) from None


class FailOn(str, Enum):
    """Which audit verdicts make ``ctxselect audit`` exit 1 (as ``inspect`` does on a failed gate)."""

    FAIL = "fail"
    WARN = "warn"
    NEVER = "never"


def _audit_code(labels: list[str], fail_on: FailOn) -> int:
    bad = {FailOn.FAIL: {"FAIL"}, FailOn.WARN: {"FAIL", "WARN"}, FailOn.NEVER: set()}[fail_on]
    count = sum(label in bad for label in labels)
    if count:
        typer.echo(f"{count} of {len(labels)} traces {' or '.join(sorted(bad, reverse=True))} the audit "
                   f"(--fail-on {fail_on.value}).", err=True)
    return EXIT_GATE_FAILED if count else EXIT_OK


def _audit(path: Path, as_json: bool, match: str = "exact", fuzzy_threshold: float | None = None,
           fail_on: FailOn = FailOn.FAIL) -> int:
    if fuzzy_threshold is not None and match != "fuzzy":
        raise InputError(field="--fuzzy-threshold", message="applies only with --fuzzy")
    results = list(_read_traces(path, match, fuzzy_threshold))
    if not results:
        raise InputError(file=str(path), message="the trace file holds no trace")
    if as_json:
        write_json([{"trace_id": n, **r.to_dict()} for n, r in results])
        return _audit_code([r.label for _, r in results], fail_on)
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
    return _audit_code([r.label for _, r in results], fail_on)


@app.command("audit")
def audit_command(
    traces: Annotated[Path, typer.Argument(help="JSONL: one trace per line, its chunks (observed fields, or "
                                                 "texts with the trace's `prompts`).", show_default=False)],
    as_json: JsonFlag = False,
    fuzzy: Annotated[bool, typer.Option("--fuzzy", help="Also count chunks the assembler reformatted "
                                        "(normalised or rapidfuzz match; never one whose numbers differ from "
                                        "the prompt's). Default: RAGScope's exact substring rule.")] = False,
    fuzzy_threshold: Annotated[float | None, typer.Option(**_finite(0, 100), show_default=False,
                                                          help="rapidfuzz partial_ratio for --fuzzy [default: 90]")] = None,
    fail_on: Annotated[FailOn, typer.Option(help="Exit 1 when a trace's verdict is FAIL (fail), FAIL or WARN "
                                                 "(warn), or never.")] = FailOn.FAIL,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
) -> None:
    """Audit traces the way RAGScope does: precision, efficiency, uniqueness, coverage, rerank gain.

    Exit 0, or 1 when a trace gets a verdict --fail-on names (as inspect exits 1 when a query fails
    the gate), 2 on bad input."""
    _run(lambda output: _audit(traces, as_json, "fuzzy" if fuzzy else "exact", fuzzy_threshold, fail_on),
         quiet, verbose)


#: What ``ablate`` varies: the dump's own ``selected`` context, or a selector's.
AblateContext = Enum("AblateContext", {"SELECTED": "selected", **{m.name: m.value for m in Method}}, type=str)


def _ablate(dump: Path, out: Path, method: Method | None, seed: int, time_limit: float, output: Output,
            context: AblateContext | None = None) -> int:
    if is_parquet(out):
        raise InputError(file=str(out), field="--out", message="ablation variants are written as JSON lines",
                         expected="a .jsonl file or -")
    if context is not None and method is not None and context.value != method.value:
        raise InputError(field="--method", message="give --context METHOD or --method, not both")
    _check_output(out, [dump], "--out")
    queries = list(read_dump(dump))
    if not queries:
        raise InputError(file=str(dump), message="the dump holds no query")
    if context is not None and context.value == "selected":
        for q in queries:
            if q.selected is None:
                raise InputError(file=str(dump), query_id=q.query_id, field="selected",
                                 message="--context selected needs every query's own `selected` ids")
        selections = [list(q.selected) for q in queries]
    else:
        chosen = method or (Method(context.value) if context is not None else Method.OPTIMAL)
        selections = []
        with output.progress("ablate", total=len(queries)) as done:
            for k, q in enumerate(queries, start=1):
                with about(dump, q):
                    selections.append(select(q.candidates, q.requirements, q.query, chosen, time_limit=time_limit).ids)
                done(k)
    rows = list(ablation_variants(queries, selections, seed=seed))
    write_jsonl(out, rows)
    output.status(f"wrote {len(rows)} variants of {len(queries)} queries to "
                  f"{'<stdout>' if is_stdout(out) else terminal_text(out)}")
    return EXIT_OK


@app.command("ablate")
def ablate_command(
    dump: DumpPath,
    out: Annotated[Path, typer.Option("--out", help="JSONL to write (whole or not at all; -: standard output).",
                                      show_default=False)],
    method: Annotated[Method | None, typer.Option(help="Selection method for the full context "
                                                       "(default: optimal).", show_default=False)] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the shuffled variant.")] = 0,
    time_limit: Annotated[float, typer.Option(**_finite(0.001),
                                               help="Seconds per query for the optimizer's whole call (packing, signals, solve, report).")] = 1.0,
    context: Annotated[AblateContext | None, typer.Option(
        help="The full context: the dump's own `selected` ids (selected) or a selector's (as --method).",
        show_default=False)] = None,
    quiet: QuietFlag = False,
    verbose: VerboseFlag = 0,
) -> None:
    """Write the ablation variants (full, none, shuffled, truncated half / quarter by tokens,
    reordered) of each query's context — a selector's, or the dump's own `selected` with
    --context selected — for your harness to run and diff."""
    _run(lambda output: _ablate(dump, out, method, seed, time_limit, output, context), quiet, verbose)
