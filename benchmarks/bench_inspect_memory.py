"""Seconds and peak memory of the report layer on the inputs of issue 11, item 4.

Run: ``python benchmarks/bench_inspect_memory.py [case ...]``. Each case runs in its own process
(peak RSS is per process, ``ru_maxrss``) and prints one JSON line. Cases:

- ``inspect100k`` — ``inspect`` of a generated query with 100,000 candidates (40 words each, the
  size ``ctxselect gen --candidates 100000 --words-mean 40`` writes);
- ``select100k`` — ``select`` of the same query with ``time_limit=1``;
- ``neardup_inspect``, ``neardup_select`` — two near-duplicate 400 KB chunks of numeric text;
- ``identical_inspect``, ``identical_select`` — 10,000 identical chunks of ~40 words with a number.

Figures measured on 2 cores (docs/conflicts.md): inspect100k was killed at 24 GB before the codes
count (a 9.3 GiB matrix per field), then 9 s / 0.43 GB; the near-duplicates took 125 s / 8.3 GB.
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time

CASES = ("inspect100k", "select100k", "neardup_inspect", "neardup_select", "identical_inspect",
         "identical_select")


def big_query():
    from ctxselect.evaluate.generate import generate_queries
    return generate_queries(queries=1, candidates=100_000, words_mean=40)[0]


def numeric_text(seed: int, size: int = 400_000) -> str:
    rnd = random.Random(seed)
    parts, total = [], 0
    while total < size:
        s = (f"In district {rnd.randint(1, 999)} the census counted {rnd.randint(1000, 9999999):,} people "
             f"and {rnd.randint(1, 99)} schools. ")
        parts.append(s)
        total += len(s)
    return "".join(parts)


def near_duplicates() -> list[dict]:
    a = numeric_text(1)
    b = (a[:200_000] + "X" + a[200_001:]).replace("people", "persons", 3)
    return [{"id": "a", "source": "s", "tokens": 100, "relevance": 0.5, "text": a},
            {"id": "b", "source": "s", "tokens": 100, "relevance": 0.6, "text": b}]


def identical(n: int = 10_000) -> list[dict]:
    text = ("The support desk handles refund requests within 14 days according to policy and the team "
            "answered 3,559 people last quarter with a satisfaction score that stayed well above the "
            "target set for the region by the operations manager in charge")
    return [{"id": f"c{k}", "source": "s", "tokens": 60, "relevance": 0.5, "text": text} for k in range(n)]


def run(case: str) -> dict:
    import ctxselect
    if case in ("inspect100k", "select100k"):
        query = big_query()
    started = time.perf_counter()
    if case == "inspect100k":
        report = ctxselect.inspect(query.candidates, query.requirements)
        out = {"conflicting_pairs": report.conflicting_pair_count, "listed": len(report.conflicting_pairs)}
    elif case == "select100k":
        selection = ctxselect.select(query.candidates, query.requirements, query.query, time_limit=1)
        out = {"selected": len(selection.ids), "status": selection.status}
    elif case == "neardup_inspect":
        out = {"conflicting_pairs": ctxselect.inspect(near_duplicates(), {"token_budget": 1000}).conflicting_pair_count}
    elif case == "neardup_select":
        out = {"selected": ctxselect.select(near_duplicates(), {"token_budget": 1000}, time_limit=1).ids}
    elif case == "identical_inspect":
        out = {"conflicting_pairs": ctxselect.inspect(identical(), {"token_budget": 10**6}).conflicting_pair_count}
    elif case == "identical_select":
        out = {"selected": ctxselect.select(identical(), {"token_budget": 1000}, time_limit=1).ids}
    else:
        raise SystemExit(f"unknown case {case!r}; one of {', '.join(CASES)}")
    return {"case": case, "seconds": round(time.perf_counter() - started, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), **out}


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--one":
        print(json.dumps(run(argv[2])))
        return 0
    for case in argv[1:] or CASES:
        subprocess.run([sys.executable, __file__, "--one", case], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
