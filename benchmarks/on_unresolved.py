"""Which outcome of an unresolved conflict should be the default? Each ``on_unresolved`` option on
planted falsehoods (generated dumps: an even split between a planted false figure and the true
one, and corroborated majorities) and on labelled dumps (gold recall of ``optimal``).

    python benchmarks/on_unresolved.py [PATH.jsonl ...] [--queries 200]

The labelled dumps' paths come from the command line; the project never reads them at run time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ctxselect  # noqa: E402
from ctxselect.evaluate.bench import run_bench  # noqa: E402
from ctxselect.evaluate.generate import generate_queries  # noqa: E402

OPTIONS = ("drop_both", "keep_stronger", "keep_both")


def planted(queries: int) -> None:
    shapes = {"even split (1 true vs 1 false copy)": dict(planted_true_copies=1, planted_majority_rate=0.0),
              "true side corroborated (2 copies)": dict(planted_true_copies=2, planted_majority_rate=0.0),
              "false side the majority": dict(planted_true_copies=2, planted_majority_rate=1.0)}
    print("| planted shape | on_unresolved | false selected | true selected | only false | both | unresolved listed |")
    print("|---|---|---|---|---|---|---|")
    for shape, knobs in shapes.items():
        dump = generate_queries(queries=queries, candidates=40, planted_rate=1.0, planted_favour_false=0.5,
                                seed=7, **knobs)
        for option in OPTIONS:
            false = true = only_false = both = listed = 0
            for q in dump:
                plant = q.extra["meta"]["planted"]
                sel = ctxselect.select(q.candidates, q.requirements, q.query, on_unresolved=option)
                ids = set(sel.ids)
                f, t = bool(ids & set(plant["false"])), bool(ids & set(plant["true"]))
                false, true, only_false, both = false + f, true + t, only_false + (f and not t), both + (f and t)
                listed += bool(sel.unresolved)
            n = len(dump)
            print(f"| {shape} | {option} | {false}/{n} | {true}/{n} | {only_false}/{n} | {both}/{n} | {listed}/{n} |")


def labelled(paths: list[Path]) -> None:
    print("\n| dump | on_unresolved | gold recall | all-gold | queries with an unresolved conflict |")
    print("|---|---|---|---|---|")
    for path in paths:
        queries = [q for q in ctxselect.read_dump(path) if q.gold_sets]
        for option in OPTIONS:
            result = run_bench(queries, ["optimal"], select_options={"on_unresolved": option})
            g = result.summaries[0].gold
            listed = sum(bool(ctxselect.select(q.candidates, q.requirements, q.query, on_unresolved=option).unresolved)
                         for q in queries)
            print(f"| {path.stem} | {option} | {g['recall']:.3f} | {g['all_gold']:.3f} | {listed}/{len(queries)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dumps", nargs="*", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    planted(args.queries)
    if args.dumps:
        labelled(args.dumps)


if __name__ == "__main__":
    main()
