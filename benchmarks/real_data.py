"""The real-data comparison: the default objective against greedy, topk and mmr on labelled dumps.

    python benchmarks/real_data.py PATH/musique_train100.jsonl PATH/multihoprag500.jsonl \
        PATH/timeqa_human_test.jsonl [--weights '{"sharpen": 2}'] [--methods greedy,optimal]

Each dump keeps its own budget; relevance is the dumps' `relevance` field for every method. Only
queries with gold count in the gold metrics. `optimal` keeps to the gate's utilization ceiling
(0.90 of the budget by default), so the table also shows greedy at that effective budget
("greedy (0.9 B)", `--ceiling-scale`; 0 leaves the row out). The project never reads these dumps at run time:
the paths come from the command line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ctxselect  # noqa: E402
from ctxselect.evaluate.bench import run_bench  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dumps", nargs="+", type=Path)
    parser.add_argument("--methods", default="greedy,topk,mmr,optimal")
    parser.add_argument("--weights", default=None, help="JSON object of objective weights (default: the library's)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N queries of each dump")
    parser.add_argument("--ceiling-scale", type=float, default=0.9,
                        help="also run greedy at this share of each budget (0: not)")
    args = parser.parse_args()
    weights = json.loads(args.weights) if args.weights else None
    methods = args.methods.split(",")
    print("| dump | method | gold recall | all-gold | precision | distractors | tokens | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    scaled = f"greedy ({args.ceiling_scale:g} B)"
    totals = {m: [] for m in methods} | ({scaled: []} if args.ceiling_scale else {})
    for dump in args.dumps:
        queries = [q for q in ctxselect.read_dump(dump) if q.gold_sets]
        if args.limit:
            queries = queries[: args.limit]
        started = time.perf_counter()
        options = {"weights": weights} if weights else None
        summaries = [(s.method, s) for s in run_bench(queries, methods, select_options=options).summaries]
        if args.ceiling_scale:
            result = run_bench(queries, ["greedy"], budget_scale=args.ceiling_scale, select_options=options)
            summaries.insert(1, (scaled, result.summaries[0]))
        for name, s in summaries:
            g = s.gold
            totals[name].append((g["recall"], g["all_gold"]))
            print(f"| {dump.stem} ({len(queries)}) | {name} | {g['recall']:.3f} | {g['all_gold']:.3f} | "
                  f"{g['precision']:.3f} | {g['distractors']:.2f} | {s.tokens:.0f} | {s.latency_p50 * 1e3:.1f} | "
                  f"{s.latency_p95 * 1e3:.1f} |")
        print(f"<!-- {dump.stem}: {time.perf_counter() - started:.1f} s -->", file=sys.stderr)
    for m, rows in totals.items():
        recall = sum(r for r, _ in rows) / len(rows)
        all_gold = sum(a for _, a in rows) / len(rows)
        print(f"| mean of dumps | {m} | {recall:.3f} | {all_gold:.3f} | | | | | |")


if __name__ == "__main__":
    main()
