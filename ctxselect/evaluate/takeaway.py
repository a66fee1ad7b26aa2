"""The bench's takeaway: one plain sentence, computed from the results, of what the optimizer did
better than greedy and at what cost (issue 17: the first screen a new user sees)."""

from __future__ import annotations

from typing import Sequence

from ctxselect.evaluate.bench import BenchResult, QueryRecord
from ctxselect.evaluate.bench_table import counted

__all__ = ["takeaway", "selected_takeaway"]


def _total(records: Sequence[QueryRecord], name: str) -> int:
    return int(sum(getattr(r, name) for r in records))


def takeaway(result: BenchResult, method: str = "optimal", reference: str = "greedy") -> str | None:
    """``method`` against ``reference`` in one sentence: gate passes, gold recall and all-gold
    rate (with gold), tokens, stale chunks, conflicting pairs and short required sources summed
    over the queries, and the latency p50 each paid; None when either method is not in the run.

    Example: "optimal vs greedy over 40 queries: gate passed 40/40 (greedy 1/40); gold recall 1.00
    (greedy 0.72), all gold 1.00 (0.25); 15 % fewer tokens; stale chunks 0 (greedy 12), conflicting
    pairs 0 (greedy 9), required sources short 0 (greedy 30); latency p50 16.9 ms (greedy 7.8 ms)."
    """
    summaries = {s.method: s for s in result.summaries}
    if method not in summaries or reference not in summaries or method == reference:
        return None
    ours, theirs = summaries[method], summaries[reference]
    mine = [r for r in result.records if r.method == method]
    other = [r for r in result.records if r.method == reference]
    parts = [f"gate passed {ours.gate_passed}/{ours.queries} ({reference} {theirs.gate_passed}/{theirs.queries})"]
    if ours.gold_queries and theirs.gold_queries:
        parts.append(f"gold recall {ours.gold['recall']:.2f} ({reference} {theirs.gold['recall']:.2f}), "
                     f"all gold {ours.gold['all_gold']:.2f} ({theirs.gold['all_gold']:.2f})")
    if theirs.tokens > 0:
        change = (ours.tokens - theirs.tokens) / theirs.tokens
        parts.append(f"{abs(change):.0%} {'fewer' if change < 0 else 'more'} tokens" if round(abs(change), 2)
                     else "the same tokens")
    counts = [(name, label) for name, label in (("stale", "stale chunks"), ("conflicts", "conflicting pairs"),
                                                ("starved", "required sources short"))]
    parts.append(", ".join(f"{label} {_total(mine, name)} ({reference} {_total(other, name)})" for name, label in counts))
    parts.append(f"latency p50 {ours.latency_p50 * 1e3:.1f} ms ({reference} {theirs.latency_p50 * 1e3:.1f} ms)")
    return f"{method} vs {reference} over {counted(ours.queries, 'query', 'queries')}: " + "; ".join(parts) + "."


def selected_takeaway(queries: Sequence) -> str | None:
    """What the dump's own contexts (``selected``: what the user's assembler sent) look like under
    the same gate, in one sentence; None when no query has one. Counts only: no chunk of a scope
    the query does not admit is named."""
    from ctxselect.quality.report import inspect

    reports = []
    for q in queries:
        if q.selected is None:
            continue
        by_id = {c.id: c for c in q.candidates}
        reports.append(inspect([by_id[i] for i in q.selected], q.requirements))
    if not reports:
        return None
    n = len(reports)
    passed = sum(r.passed for r in reports)
    blind = sum(bool(r.inadmissible_ids) for r in reports)
    stale = sum(len(r.stale_ids) for r in reports)
    conflicts = sum(r.conflicting_pair_count + r.claim_conflict_count for r in reports)
    starved = sum(len(r.starved_sources) for r in reports)
    return (f"the dump's own contexts (selected, {counted(n, 'query', 'queries')}): gate passed {passed}/{n}; "
            f"{counted(blind, 'context holds', 'contexts hold')} a chunk the caller may not see; stale chunks "
            f"{stale}, conflicting pairs {conflicts}, required sources short {starved}.")
