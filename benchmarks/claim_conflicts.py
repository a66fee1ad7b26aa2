"""Free-text claim conflicts: planted falsehoods on generated dumps, and what the detector flags on
real dumps.

    python benchmarks/claim_conflicts.py planted [--queries 200]
    python benchmarks/claim_conflicts.py real PATH.jsonl [PATH.jsonl ...] [--sample 20]
    python benchmarks/claim_conflicts.py real-planted PATH.jsonl [PATH.jsonl ...]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ctxselect  # noqa: E402
from ctxselect.text.claims import find_claim_conflicts  # noqa: E402
from ctxselect.evaluate.generate import generate_queries  # noqa: E402


def planted(queries: int, seed: int) -> None:
    dump = generate_queries(queries=queries, candidates=40, planted_rate=1.0, planted_majority_rate=0.0,
                            planted_favour_false=0.5, seed=seed)
    runs = {"greedy (plain, as assemblers do today)": dict(method="greedy", resolve_by_corroboration=False),
            "greedy (with ctxselect's corroboration)": dict(method="greedy"),
            "optimal (default)": dict(method="optimal")}
    print("| selector | queries with a planted false chunk selected | with a true chunk selected |")
    print("|---|---|---|")
    for name, options in runs.items():
        false = true = 0
        for q in dump:
            plant = q.extra["meta"]["planted"]
            ids = set(ctxselect.select(q.candidates, q.requirements, q.query, **options).ids)
            false += bool(ids & set(plant["false"]))
            true += bool(ids & set(plant["true"]))
        print(f"| {name} | {false}/{len(dump)} ({false / len(dump):.1%}) | {true}/{len(dump)} |")


def real(paths: list[Path], sample: int, seed: int) -> None:
    flagged = []
    print("| dump | queries | candidate pairs | flagged pairs | share |")
    print("|---|---|---|---|---|")
    for path in paths:
        pairs = hits = queries = 0
        for q in ctxselect.read_dump(path):
            queries += 1
            n = len(q.candidates)
            pairs += n * (n - 1) // 2
            conflicts, _ = find_claim_conflicts([c.text for c in q.candidates])
            hits += len(conflicts)
            for (i, j), claims in conflicts.items():
                flagged.append((path.stem, q.candidates[i], q.candidates[j], claims))
        print(f"| {path.stem} | {queries} | {pairs:,} | {hits} | {hits / max(pairs, 1):.3%} |")
    random.Random(seed).shuffle(flagged)
    print()
    for name, a, b, claims in flagged[:sample]:
        ca, cb = claims[0]
        print(f"- {name}: `{a.id}` {ca.raw!r} vs `{b.id}` {cb.raw!r} — context: '{ca.before}' / '{cb.before}'")


def real_planted(paths: list[Path], seed: int) -> None:
    """Plant misinformation into real dumps: for each labelled query, copy a gold chunk that states a
    number, multiply one number by 2–4, give the copy the original's relevance (+0.01) and its own
    document, and count the queries whose selection includes the copy."""
    import dataclasses
    import re


    rng = random.Random(seed)
    print("| dump | planted queries | default: copy selected | plain greedy: copy selected | default: original selected |")
    print("|---|---|---|---|---|")
    for path in paths:
        planted = default_bad = greedy_bad = default_good = 0
        for q in ctxselect.read_dump(path):
            gold = [c for c in q.candidates if q.gold_sets and c.id in set().union(*q.gold_sets)]
            source = next((c for c in gold if re.search(r"\b\d[\d,]*\b", c.text)), None)
            if source is None:
                continue
            numbers = [m for m in re.finditer(r"\b\d[\d,]*\b", source.text)]
            m = numbers[rng.randrange(len(numbers))]
            value = int(m.group(0).replace(",", "")) if m.group(0).replace(",", "").isdigit() else 1
            edited = source.text[:m.start()] + f"{value * rng.randint(2, 4):,}" + source.text[m.end():]
            copy = dataclasses.replace(source, id=source.id + "#planted", text=edited,
                                       relevance=min(1.0, source.relevance + 0.01), doc_id=source.id + "#planted")
            cands = list(q.candidates) + [copy]
            planted += 1
            sel = set(ctxselect.select(cands, q.requirements, q.query).ids)
            plain = set(ctxselect.select(cands, q.requirements, q.query, "greedy", resolve_by_corroboration=False).ids)
            default_bad += copy.id in sel
            greedy_bad += copy.id in plain
            default_good += source.id in sel
        print(f"| {path.stem} | {planted} | {default_bad / max(planted, 1):.1%} | {greedy_bad / max(planted, 1):.1%} | "
              f"{default_good / max(planted, 1):.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["planted", "real", "real-planted"])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.mode == "planted":
        planted(args.queries, args.seed)
    elif args.mode == "real-planted":
        real_planted(args.paths, args.seed)
    else:
        real(args.paths, args.sample, args.seed)


if __name__ == "__main__":
    main()
