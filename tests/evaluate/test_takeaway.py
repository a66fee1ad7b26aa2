"""Issue 17: objectives compare under the same rules (the gate first), and the takeaway line's
numbers are the records' numbers."""

import re

import numpy as np
import pytest

import ctxselect
from ctxselect.evaluate.bench import QueryRecord, run_bench, summarize
from ctxselect.evaluate.bench_table import summary_table
from ctxselect.evaluate.demo import demo_queries
from ctxselect.evaluate.takeaway import selected_takeaway, takeaway


def rec(qid, method, objective, passed, tokens=100, **counts):
    return QueryRecord(query_id=qid, method=method, ids=[], objective=objective, status="x", passed=passed,
                       can_pass=True, metrics={m: 0.0 for m in ctxselect.METRIC_NAMES}, tokens=tokens, budget=200,
                       latency=0.01, gold=None, **counts)


def test_the_gate_decides_first_then_the_objective():
    records = [
        rec("a", "greedy", 3.0, False), rec("a", "optimal", 2.0, True),   # greedy higher but breaks the gate: a win
        rec("b", "greedy", 2.0, True), rec("b", "optimal", 2.5, True),    # both pass: the objective decides
        rec("c", "greedy", 2.0, True), rec("c", "optimal", 1.0, True),    # ... a loss
        rec("d", "greedy", 1.0, False), rec("d", "optimal", 1.0, False),  # both break it: a tie on equal objectives
        rec("e", "greedy", 1.0, True), rec("e", "optimal", 5.0, False),   # optimal breaks it: a loss, whatever F
    ]
    result = summarize(records, ["greedy", "optimal"], queries=5)
    s = {x.method: x for x in result.summaries}
    assert (s["optimal"].wins, s["optimal"].ties, s["optimal"].losses) == (2, 1, 2)
    assert (s["greedy"].wins, s["greedy"].ties, s["greedy"].losses) == (0, 5, 0)
    head, rows, caption = summary_table(result)
    cells = {row[0]: row for row in rows}
    assert cells["greedy"][1].endswith("*") and cells["optimal"][1].endswith("*")  # both break it somewhere
    from ctxselect.evaluate.bench_table import LEGEND

    assert "the gate decides first" in LEGEND and "queries" in caption


def test_vs_best_is_set_by_the_methods_that_keep_the_gate():
    records = [rec("a", "greedy", 9.0, False), rec("a", "optimal", 2.0, True),
               rec("b", "greedy", 9.0, True), rec("b", "optimal", 4.0, True)]
    s = {x.method: x for x in summarize(records, ["greedy", "optimal"], queries=2).summaries}
    assert s["optimal"].objective_ratio_to_best == pytest.approx(1.0)  # greedy broke the gate: not the bar
    assert s["greedy"].objective_ratio_to_best == pytest.approx(9.0 / 3.0)
    assert not summary_table(summarize(records[1::2], ["optimal"], queries=2))[1][0][1].endswith("*")


def test_the_takeaway_states_the_records_numbers():
    queries = demo_queries(queries=8)
    result = run_bench(queries, ["greedy", "optimal"])
    line = takeaway(result)
    by = {m: [r for r in result.records if r.method == m] for m in ("greedy", "optimal")}
    o, g = by["optimal"], by["greedy"]
    assert f"gate passed {sum(r.passed for r in o)}/8 (greedy {sum(r.passed for r in g)}/8)" in line
    recall = lambda rs: np.mean([r.gold["recall"] for r in rs])  # noqa: E731
    assert f"gold recall {recall(o):.2f} (greedy {recall(g):.2f})" in line
    change = (np.mean([r.tokens for r in o]) - np.mean([r.tokens for r in g])) / np.mean([r.tokens for r in g])
    assert f"{abs(change):.0%} {'fewer' if change < 0 else 'more'} tokens" in line
    for name, label in (("starved", "required sources short"), ("stale", "stale chunks"),
                        ("conflicts", "conflicting pairs")):
        assert f"{label} {sum(getattr(r, name) for r in o)} (greedy {sum(getattr(r, name) for r in g)})" in line
    assert takeaway(run_bench(queries[:2], ["optimal"])) is None  # nothing to compare against


def test_the_selected_takeaway_counts_what_inspect_finds():
    queries = demo_queries(queries=12)
    line = selected_takeaway(queries)
    reports = [ctxselect.inspect([c for c in q.candidates if c.id in set(q.selected)], q.requirements)
               for q in queries]
    assert f"gate passed {sum(r.passed for r in reports)}/12" in line
    blind = sum(bool(r.inadmissible_ids) for r in reports)
    assert re.search(rf"\b{blind} contexts? holds? a chunk the caller may not see", line)
    assert f"stale chunks {sum(len(r.stale_ids) for r in reports)}" in line
    assert not any(q.candidates[0].text[:30] in line for q in queries)  # counts, never chunk text
    assert selected_takeaway([q for q in demo_queries(queries=2)][:0]) is None
