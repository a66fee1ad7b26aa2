"""select() warm, at n = 20, 200, 2,000 and 20,000 generated candidates (pytest-benchmark).

Each round selects for the next of several generated queries, so the stats cover instances, not
one input. Per-stage timings, the status and the objective relative to greedy on the same query
are recorded in extra_info; report_select.py turns them into the table.

Run: pytest benchmarks/bench_select.py --benchmark-only --benchmark-json=select.json
then: python benchmarks/report_select.py select.json
"""

import itertools

import numpy as np
import pytest

import ctxselect
from ctxselect.evaluate.generate import generate_queries

SIZES = {20: 30, 200: 30, 2_000: 12, 20_000: 4}  # n -> generated queries


def instances(n):
    return generate_queries(queries=SIZES[n], candidates=n, seed=n, gold_share=min(0.15, 30 / n))


@pytest.mark.parametrize("n", list(SIZES))
@pytest.mark.parametrize("method", ["optimal", "greedy"])
def test_select(benchmark, n, method):
    queries = instances(n)
    ctxselect.select(queries[0].candidates, queries[0].requirements, method=method)  # warm
    greedy_objective = {q.query_id: ctxselect.select(q.candidates, q.requirements, method="greedy").objective
                        for q in queries}
    cycle = itertools.cycle(queries)
    runs = []

    def run():
        q = next(cycle)
        sel = ctxselect.select(q.candidates, q.requirements, method=method)
        runs.append((q.query_id, sel))
        return sel

    rounds = len(queries) if n < 20_000 else len(queries)
    benchmark.pedantic(run, rounds=rounds, iterations=1, warmup_rounds=0)
    stages = {}
    for key in ("pack", "signals", "problem", "baselines", "model", "solve", "total"):
        values = np.array([sel.timings.get(key, 0.0) for _, sel in runs])
        stages[key] = {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95))}
    ratios = [sel.objective / greedy_objective[qid] for qid, sel in runs if greedy_objective[qid] > 0]
    benchmark.extra_info.update(
        n=n, method=method, stages=stages,
        statuses={s: sum(sel.status == s for _, sel in runs) for s in {sel.status for _, sel in runs}},
        objective_vs_greedy=float(np.mean(ratios)) if ratios else None,
        gate_passed=sum(sel.report.passed for _, sel in runs), instances=len(runs),
    )
