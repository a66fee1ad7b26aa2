"""Replay candidate dumps through several selectors and compare them side by side.

:func:`run_bench` selects every query with every method, scores each selection with the shared
objective and the quality vector, measures latency, and — on queries with ``gold`` — whether the
gold evidence was selected and where it landed in the window, and the articles' metrics beside
them (:mod:`ctxselect.evaluate.bench_metrics`: recall at depth, ranking metrics, density,
self-consistency, relevance, the weighted score). :func:`summarize` turns the records into one
summary per method. The command line's ``ctxselect bench`` is a thin layer over both.
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ctxselect._config import TOLERANCE
from ctxselect.errors import InputError
from ctxselect.evaluate.bench_metrics import record_extras, summary_extras
from ctxselect.evaluate.groups import MISSING, group_value
from ctxselect.evaluate.labelled import DEPTHS, check_depths
from ctxselect.evaluate.paraphrase import Paraphrases, paraphrases_of
from ctxselect.evaluate.relevance import ALERT_THRESHOLD
from ctxselect.model import validation as checks
from ctxselect.model.io import Query
from ctxselect.model.validation import parse_choice
from ctxselect.quality.vector import METRIC_NAMES
from ctxselect.selection.api import select
from ctxselect.selection.solvers.registry import Method

__all__ = ["QueryRecord", "MethodSummary", "BenchResult", "run_bench", "summarize", "gold_metrics",
           "with_budget", "group_value", "summarize_groups", "MISSING"]

TIE_TOLERANCE = TOLERANCE


@dataclass(frozen=True)
class QueryRecord:
    """One method's selection for one query."""

    query_id: str
    method: str
    ids: list[str]
    objective: float
    status: str
    passed: bool
    can_pass: bool | None
    metrics: dict[str, float]
    tokens: int
    budget: int
    latency: float
    gold: dict[str, float] | None
    group: dict[str, str] = field(default_factory=dict)
    stale: int = 0
    conflicts: int = 0
    starved: int = 0
    labelled: dict[str, Any] | None = None
    self_consistency: float | None = None
    relevance: dict[str, Any] = field(default_factory=dict)
    quality_score: float = 0.0


@dataclass(frozen=True)
class MethodSummary:
    """Means over the queries of one method."""

    method: str
    queries: int
    objective: float
    objective_ratio_to_best: float
    wins: int
    ties: int
    losses: int
    gate_passed: int
    metrics: dict[str, float]
    tokens: float
    latency_p50: float
    latency_p95: float
    gold_queries: int
    gold: dict[str, float]
    labelled_queries: int = 0
    labelled: dict[str, float] = field(default_factory=dict)
    self_consistency: float | None = None
    self_consistency_queries: int = 0
    relevance: dict[str, float] = field(default_factory=dict)
    quality_score: float = 0.0


@dataclass
class BenchResult:
    """Per-query records and per-method summaries."""

    methods: list[str]
    records: list[QueryRecord]
    summaries: list[MethodSummary]
    can_pass: int | None
    queries: int
    dumps: list[str] = field(default_factory=list)
    by: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "dumps": self.dumps, "methods": self.methods, "queries": self.queries,
            "queries_that_can_pass": self.can_pass,
            "summaries": [dataclasses.asdict(s) for s in self.summaries],
            "records": [dataclasses.asdict(r) for r in self.records],
        }
        if self.by:
            out["groups"] = {path: {value: {"queries": part.queries, "summaries": [dataclasses.asdict(s) for s in
                                                                                  part.summaries]}
                                    for value, part in summarize_groups(self, path).items()} for path in self.by}
        return out


def gold_metrics(query: Query, ids: Sequence[str]) -> dict[str, float] | None:
    """Gold recall, all-gold, precision, distractors and the gold's middle-third share for the
    selection ``ids`` (in assembly order); None when the query has no gold.

    With several alternative gold sets the best-recalled one counts; the middle third is measured
    in tokens (a gold chunk whose centre lies between 1/3 and 2/3 of the window)."""
    sets = [g for g in query.gold_sets if g]
    if not sets:
        return None
    chosen = list(ids)
    picked = set(chosen)
    best = max(sets, key=lambda g: (len(g & picked) / len(g), -len(g)))
    union = set().union(*sets)
    tokens = {c.id: c.tokens for c in query.candidates}
    total = sum(tokens[i] for i in chosen)
    offset, middle, gold_in = 0, 0, 0
    for cid in chosen:
        centre = offset + tokens[cid] / 2
        offset += tokens[cid]
        if cid in union:
            gold_in += 1
            middle += total > 0 and total / 3 <= centre <= 2 * total / 3
    return {
        "recall": len(best & picked) / len(best),
        "all_gold": float(best <= picked),
        "precision": gold_in / len(chosen) if chosen else 0.0,
        "distractors": float(len(chosen) - gold_in),
        "middle_third": middle / gold_in if gold_in else 0.0,
    }


def with_budget(query: Query, budget: int | None, budget_scale: float | None) -> Query:
    """The query with its token budget replaced (``budget``) or scaled (``budget_scale``).

    Raises
    ------
    InputError
        Naming the query, when the scaled budget is not a valid budget (too large to count).
    """
    if budget is None and budget_scale is None:
        return query
    reqs = query.requirements
    if budget is not None:
        new = budget
    else:
        scaled = reqs.token_budget * budget_scale
        if not math.isfinite(scaled):
            raise InputError(query_id=query.query_id, field="budget_scale",
                             expected="a scale that keeps the token budget finite", found=budget_scale)
        new = max(1, int(round(scaled)))
    try:
        return dataclasses.replace(query, requirements=dataclasses.replace(reqs, token_budget=new))
    except InputError as err:
        raise err.located(query_id=query.query_id) from None


def _bench_query(args) -> list[QueryRecord]:
    query, methods, options, by, extras = args
    group = {path: group_value(query, path) for path in by}
    records = []
    can_pass = None
    for method in methods:
        try:  # (a source rule is checked when the query's candidates, or a paraphrase's, are packed)
            sel = select(query.candidates, query.requirements, query.query, method, **options)
            extra = record_extras(query, sel.ids, sel.report.metrics, method, options=options, **extras)
        except InputError as err:
            raise err.located(query_id=query.query_id) from None
        if method == Method.OPTIMAL.value:
            can_pass = "gate" not in sel.relaxed
        records.append(QueryRecord(
            query_id=query.query_id, method=method, ids=list(sel.ids), objective=sel.objective,
            status=sel.status, passed=sel.report.passed, can_pass=None, metrics=dict(sel.report.metrics),
            tokens=sel.tokens, budget=query.requirements.token_budget, latency=sel.timings["total"],
            gold=gold_metrics(query, sel.ids), group=group, stale=len(sel.report.stale_ids),
            conflicts=sel.report.conflicting_pair_count + sel.report.claim_conflict_count,
            starved=len(sel.report.starved_sources),
            **extra))
    return [dataclasses.replace(r, can_pass=can_pass) for r in records]


def bench_options(methods, budget, budget_scale, by, depths, paraphrases, relevance_alert):
    """The checked options every engine of the bench shares: the method names, the ``--by``
    fields and the article metrics' settings (``depths``, ``paraphrases``, ``relevance_alert``).

    Raises
    ------
    InputError
        Naming the option.
    """
    names = [parse_choice(Method, m, "methods").value for m in methods]
    if not names:
        raise InputError(field="methods", expected="at least one method")
    if len(set(names)) != len(names):
        raise InputError(field="methods", expected="each method once", found=",".join(names))
    if budget is not None:
        checks.integer(budget, "budget", low=1)
    if budget_scale is not None:
        checks.number(budget_scale, "budget_scale", low=0.0, low_open=True)
    settings = {"depths": check_depths(depths), "paraphrases": parse_choice(Paraphrases, paraphrases, "paraphrases"),
                "relevance_alert": checks.number(relevance_alert, "relevance_alert", low=0.0, high=1.0)}
    return names, [checks.label(path, "by") for path in by], settings


def run_bench(
    queries: Iterable[Query],
    methods: Sequence[str | Method] = ("greedy", "topk", "density", "mmr", "optimal"),
    *,
    budget: int | None = None,
    budget_scale: float | None = None,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    select_options: dict | None = None,
    by: Sequence[str] = (),
    depths: Sequence[int] = DEPTHS,
    paraphrases: str | Paraphrases = Paraphrases.DUMP,
    relevance_alert: float = ALERT_THRESHOLD,
) -> BenchResult:
    """Select every query with every method and summarise.

    Parameters
    ----------
    queries : iterable of Query
    methods : sequence of str
        Any of greedy, topk, density, mmr, optimal (the first one listed is not special; wins and
        losses are counted against ``greedy`` when it is present).
    budget, budget_scale : optional
        Replace every query's budget, or scale it.
    jobs : int
        Worker processes (1 = in this process).
    progress : callable, optional
        Called with the number of queries finished, after each one.
    select_options : dict, optional
        Keyword arguments passed to :func:`ctxselect.select` (``time_limit``, ``weights`` ...).
    by : sequence of str
        Dump fields to group by (:func:`group_value`); each record carries its groups and
        :func:`summarize_groups` summarises each group.
    depths : sequence of int
        Retrieval depths of the labelled metrics (``recall@k``, ``precision@k``, ``ndcg@k`` ...).
    paraphrases : {"dump", "builtin", "none"}
        Where self-consistency takes each query's paraphrases from
        (:class:`ctxselect.evaluate.paraphrase.Paraphrases`); every paraphrase costs one more
        selection per method.
    relevance_alert : float
        The threshold in [0, 1] under which a selection's weighted relevance raises the alert.

    Each record also carries the articles' metrics and each summary their means
    (:mod:`ctxselect.evaluate.bench_metrics`).

    Raises
    ------
    InputError
        For a bad argument, or a query's unreadable ``paraphrases`` (naming the query).
    """
    names, by, settings = bench_options(methods, budget, budget_scale, by, depths, paraphrases, relevance_alert)
    checks.integer(jobs, "jobs", low=1)
    depths, mode, relevance_alert = settings["depths"], settings["paraphrases"], settings["relevance_alert"]
    work = []
    seen: set[str] = set()
    for q in queries:
        if q.query_id in seen:  # records, wins and baselines pair by query id
            raise InputError(query_id=q.query_id, field="query_id", message="the query id appears twice",
                             expected="query ids unique across the dumps of one bench")
        seen.add(q.query_id)
        for path in by:
            group_value(q, path)  # a field that is no group: refused before any selection
        extras = {"depths": depths, "paraphrases": paraphrases_of(q, mode), "relevance_alert": relevance_alert}
        work.append((with_budget(q, budget, budget_scale), names, dict(select_options or {}), by, extras))
    if not work:
        raise InputError(field="queries", message="no query to bench")
    records: list[QueryRecord] = []
    # Warm-up: load the kernels and the solver in this process, so no latency measured here (jobs == 1)
    # includes it. With jobs > 1 the queries run in spawned workers, which do not share this warm-up:
    # each worker loads them again, inside the latency of the first query it selects.
    _bench_query(work[0])
    if jobs == 1:
        for k, item in enumerate(work, start=1):
            records.extend(_bench_query(item))
            if progress:
                progress(k)
    else:
        # spawn, not fork: Numba's OpenMP threads make fork() unsafe once a parallel kernel ran
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, os.cpu_count() or 1), mp_context=context) as pool:
            for k, result in enumerate(pool.map(_bench_query, work, chunksize=4), start=1):
                records.extend(result)
                if progress:
                    progress(k)
    result = summarize(records, names, queries=len(work))
    result.by = list(by)
    return result


def _under_the_same_rules(records: list[QueryRecord], reference: list[QueryRecord]) -> tuple[int, int, int]:
    """Wins, ties and losses against ``reference`` query by query, under the same rules: every
    selection meets the hard constraints, so the gate decides first — a selection that passes it
    beats one that breaks it, whatever their objectives — and the objective decides between two
    that both pass (or both break) it."""
    theirs = {r.query_id: r for r in reference}
    wins = ties = losses = 0
    for r in records:
        other = theirs[r.query_id]
        if r.passed != other.passed:
            wins, losses = wins + r.passed, losses + other.passed
            continue
        diff, tol = r.objective - other.objective, TIE_TOLERANCE * max(1.0, abs(other.objective))
        wins, ties, losses = wins + (diff > tol), ties + (abs(diff) <= tol), losses + (diff < -tol)
    return int(wins), int(ties), int(losses)


def summarize(records: list[QueryRecord], methods: list[str], *, queries: int) -> BenchResult:
    """Per-method summaries of the records (see :class:`MethodSummary`)."""
    by_method = {m: [r for r in records if r.method == m] for m in methods}
    objective = {m: np.array([r.objective for r in rs]) for m, rs in by_method.items()}
    reference = objective.get(Method.GREEDY.value)
    can = [r.can_pass for r in by_method[methods[0]]]
    can_pass = None if any(c is None for c in can) else int(sum(can))
    # "vs best": against the best mean of the methods that keep the rules (pass the gate wherever it
    # can be passed), so a method whose objective comes from breaking the gate does not set the bar
    keeping = [m for m, rs in by_method.items() if all(r.passed or r.can_pass is False for r in rs)]
    best_mean = max(float(objective[m].mean()) for m in (keeping or list(by_method)))
    summaries = []
    for m, rs in by_method.items():
        obj = objective[m]
        if reference is not None:
            wins, ties, losses = _under_the_same_rules(rs, by_method[Method.GREEDY.value])
        else:
            wins = ties = losses = 0
        latency = np.array([r.latency for r in rs])
        golds = [r.gold for r in rs if r.gold is not None]
        gold = {k: float(np.mean([g[k] for g in golds])) for k in golds[0]} if golds else {}
        mean = float(obj.mean())
        summaries.append(MethodSummary(
            method=m, queries=len(rs), objective=mean,
            objective_ratio_to_best=mean / best_mean if best_mean and not math.isclose(best_mean, 0.0) else 1.0,
            wins=wins, ties=ties, losses=losses, gate_passed=sum(r.passed for r in rs),
            metrics={k: float(np.mean([r.metrics[k] for r in rs])) for k in METRIC_NAMES},
            tokens=float(np.mean([r.tokens for r in rs])),
            latency_p50=float(np.percentile(latency, 50)), latency_p95=float(np.percentile(latency, 95)),
            gold_queries=len(golds), gold=gold, **summary_extras(rs),
        ))
    return BenchResult(methods=list(methods), records=records, summaries=summaries, can_pass=can_pass,
                       queries=queries)


def summarize_groups(result: BenchResult, path: str) -> dict[str, BenchResult]:
    """One summary per value of the ``--by`` field ``path`` (sorted by value), each over that
    group's queries only (wins, gate passes and gold metrics counted within the group)."""
    values = sorted({r.group.get(path, MISSING) for r in result.records})
    out = {}
    for value in values:
        records = [r for r in result.records if r.group.get(path, MISSING) == value]
        queries = len({r.query_id for r in records})
        out[value] = summarize(records, result.methods, queries=queries)
    return out
