"""The bench's summary as a table: headers, cells and caption for every renderer (the terminal's
rich tables, ``--markdown``), and the rule by which objectives compare."""

from __future__ import annotations

from ctxselect.evaluate.bench import BenchResult

__all__ = ["SHORT_HEADERS", "COMPARABILITY", "LEGEND", "summary_table", "to_markdown", "counted"]


SHORT_HEADERS = {"W/T/L vs greedy": "W/T/L", "gate pass": "gate", "gold recall": "recall",
                 "distractors": "distract.", "gold mid-third": "mid-third"}


def summary_table(result: BenchResult) -> tuple[list[str], list[list[str]], str]:
    """The per-method summary as (headers, rows of formatted cells, caption), for every renderer."""
    has_gold = any(s.gold_queries for s in result.summaries)
    head = ["method", "objective", "vs best", "W/T/L vs greedy", "gate pass", "tokens", "p50 ms", "p95 ms"]
    if has_gold:
        head += ["gold recall", "all-gold", "precision", "distractors", "gold mid-third"]
    rows = []
    against_greedy = "greedy" in result.methods
    for s in result.summaries:
        marked = f"{s.objective:.4f}" + ("*" if s.gate_passed < s.queries else "")
        row = [s.method, marked, f"{s.objective_ratio_to_best:.3f}", f"{s.wins}/{s.ties}/{s.losses}" if against_greedy else "\u2013",
               f"{s.gate_passed}/{s.queries}", f"{s.tokens:,.0f}", f"{s.latency_p50 * 1e3:.1f}",
               f"{s.latency_p95 * 1e3:.1f}"]
        if has_gold:
            g = s.gold
            row += [f"{g.get('recall', 0):.3f}", f"{g.get('all_gold', 0):.3f}", f"{g.get('precision', 0):.3f}",
                    f"{g.get('distractors', 0):.2f}", f"{g.get('middle_third', 0):.3f}"]
        rows.append(row)
    can = ("" if result.can_pass is None
           else f", {result.can_pass} of which can meet the gate's enforced conditions (proven by the optimizer)")
    gold = max((s.gold_queries for s in result.summaries), default=0)
    return head, rows, (f"{counted(result.queries, 'query', 'queries')}{can}; gold metrics over "
                        f"{counted(gold, 'query', 'queries')} with gold.")


def counted(n: int, one: str, many: str) -> str:
    """``n`` with its noun: "1 query", "3 queries"."""
    return f"{n} {one if n == 1 else many}"


#: How objectives are compared, said under every bench table.
COMPARABILITY = ("Objectives compare under the same rules: the gate decides first (a selection that passes it "
                 "beats one that breaks it), then the objective; * marks a mean over selections some of which "
                 "break the gate; vs best is against the best method that keeps the gate wherever it can.")

#: What every column of the summary means, printed under it.
LEGEND = ("objective: the shared objective F (docs/objective.md), mean over the queries; vs best: its ratio to "
          "the best method's; W/T/L: wins, ties and losses against greedy; gate: selections that pass the "
          "quality gate; tokens: mean tokens sent; p50 / p95 ms: latency of select(); recall: share of the gold "
          "chunks selected; all-gold: share of queries with every gold chunk selected; precision: share of "
          "the selected chunks that are gold; distract.: selected chunks that are not gold, per query; "
          "mid-third: share of the selected gold whose centre lies in the middle third of the window (where "
          "models read worst). " + COMPARABILITY)


def to_markdown(result: BenchResult) -> str:
    """The per-method summary as a markdown table (what ``ctxselect bench --markdown`` prints)."""
    head, rows, caption = summary_table(result)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines + ["", caption, "", LEGEND])
