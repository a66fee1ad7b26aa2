"""Summarise bench_signals.py results, and measure what pytest-benchmark cannot: peak memory per
call and the kernels' compile / cache-load time in fresh processes.

    pytest benchmarks/bench_signals.py --benchmark-only --benchmark-json=signals.json
    python benchmarks/report_signals.py signals.json [--memory] [--compile]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def table(path: str) -> str:
    data = json.loads(Path(path).read_text())
    rows = defaultdict(dict)
    for bench in data["benchmarks"]:
        info = bench["extra_info"]
        rows[(info["kernel"], info["n"])][info["impl"]] = (bench["stats"]["median"], info)
    lines = ["| kernel | n | kernel median | throughput | numpy median (x kernel) | python median (x kernel) |",
             "|---|---|---|---|---|---|"]
    for (kernel, n), impls in sorted(rows.items()):
        main = impls.get("kernel") or impls.get("public")
        if main is None:
            continue
        t, info = main
        if "pairs_compared" in info:
            rate = f"{info['pairs_compared'] / t / 1e6:,.0f} M pairs/s"
        elif "words" in info:
            rate = f"{info['words'] / t / 1e6:,.1f} M words/s"
        else:
            rate = f"{n / t / 1e6:,.1f} M chunks/s"
        cells = []
        for other in ("numpy", "python"):
            if other in impls:
                cells.append(f"{impls[other][0] * 1e3:,.2f} ms ({impls[other][0] / t:,.1f}x)")
            else:
                cells.append("")
        lines.append(f"| {kernel} | {n:,} | {t * 1e3:,.2f} ms | {rate} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


MEMORY_PROBE = """
import sys
sys.path.insert(0, {here!r})
import numpy as np
from data import embeddings, texts
from ctxselect.features.similarity import cosine_pairs, minhash_pairs, text_signatures
kind, n = sys.argv[1], int(sys.argv[2])
data = embeddings(n) if kind == "cosine" else texts(n)
if kind == "cosine":
    cosine_pairs(data[:20], 0.8)
    run = lambda: cosine_pairs(data, 0.8)
else:
    minhash_pairs(text_signatures(data[:20])[0], 0.5)
    run = lambda: minhash_pairs(text_signatures(data)[0], 0.5)
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")  # reset the peak (VmHWM) to the current RSS
before = status("VmRSS:")
run()
print(status("VmHWM:") - before)
"""


def memory(sizes=(1_000, 5_000, 20_000)) -> str:
    lines = ["| kernel | n | peak extra memory of one call |", "|---|---|---|"]
    for kind in ("cosine", "text"):
        for n in sizes:
            out = subprocess.run([sys.executable, "-c", MEMORY_PROBE.format(here=str(HERE)), kind, str(n)],
                                 capture_output=True, text=True, check=True).stdout.strip()
            lines.append(f"| {kind} | {n:,} | {int(out) / 2**20:,.1f} MiB |")
    return "\n".join(lines)


COMPILE_PROBE = """
import time
start = time.perf_counter()
import numpy as np
import ctxselect
imported = time.perf_counter()
cands = [{"id": str(k), "source": "s", "tokens": 5, "relevance": 0.5, "text": f"alpha beta {k} gamma",
          "doc_id": "d", "version": str(k), "fields": {"x": k % 2}, "embedding": [1.0, k, 0.5]}
         for k in range(30)]
packed = ctxselect.pack(cands, {"token_budget": 50, "conflict_fields": ["x"], "now": 0})
ctxselect.signals(packed)
ctxselect.signals(packed, similarity="minhash")
from ctxselect.features.similarity import minhash_pairs, text_signatures
minhash_pairs(text_signatures([c["text"] for c in cands])[0], 0.5, exhaustive=False)
print(imported - start, time.perf_counter() - imported)
"""


def compile_times() -> str:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        results = []
        for label in ("cold (empty cache)", "warm cache"):
            out = subprocess.run([sys.executable, "-c", COMPILE_PROBE], capture_output=True, text=True,
                                 env=env, check=True).stdout.split()
            results.append(f"| {label} | {float(out[0]):.2f} s | {float(out[1]):.2f} s |")
    return "\n".join(["| process | import ctxselect | first calls of every kernel |", "|---|---|---|", *results])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("json", nargs="?")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()
    if args.json:
        print(table(args.json), end="\n\n")
    if args.memory:
        print(memory(), end="\n\n")
    if args.compile:
        print(compile_times())


if __name__ == "__main__":
    main()
