"""The first ``select()`` of a fresh process, with and without ``warm_up()`` at start-up.

Each measurement is a new Python process (the kernels' on-disk cache as it is: run any ``select()``
once before, so it is warm). The process imports ctxselect, optionally calls ``warm_up()``, then
times two ``select()`` calls of 50 candidates with text and a question (new texts in each); the
phases of a cold first call (Numba's import, OR-Tools' compiled layer, ctxselect's modules, the
kernels) are timed in processes of their own.

Python's bytecode of ctxselect counts too: ``pip install .`` writes it, but an editable install in an
environment with ``PYTHONDONTWRITEBYTECODE=1`` never does, and each process then compiles the modules
a first call imports (2026-12-06, 5 processes each: 677 against 579 ms median, ctxselect's modules 154
against 68 ms). The report says which it measured.

    python benchmarks/first_call.py                 # 4 processes per mode
    python benchmarks/first_call.py --runs 8 --json first_call.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys

PROBE = r"""
import json, sys, time
mode = sys.argv[1]
t0 = time.perf_counter()
import ctxselect
imported = time.perf_counter() - t0
def chunks(k):  # new texts for each call: a later query does not find its texts' work cached
    return [{"id": f"c{i}", "source": f"s{i % 4}", "relevance": 0.1 + (i % 17) / 20, "tokens": 40 + i % 30,
             "text": f"The report of district {i % 9} counted {1000 + 37 * i + k} homes flooded in "
                     f"March {2000 + i % 20} near river {i + k}"} for i in range(50)]
reqs = {"token_budget": 400, "max_per_source": 4}
phases = {}
if mode == "phases":
    t = time.perf_counter(); import numba; phases["numba import"] = time.perf_counter() - t
    t = time.perf_counter(); from ortools.sat.python import cp_model_helper; phases["OR-Tools helper"] = time.perf_counter() - t
    t = time.perf_counter(); from ctxselect.selection import api; phases["ctxselect modules"] = time.perf_counter() - t
    t = time.perf_counter(); from ctxselect.selection.solvers.exact import load_exact; load_exact()
    phases["first kernel (Numba's runtime, the modules its cached environments import)"] = time.perf_counter() - t
    t = time.perf_counter(); ctxselect.warm_up(); phases["the other kernels"] = time.perf_counter() - t
t = time.perf_counter()
spent = ctxselect.warm_up() if mode == "warm" else 0.0
warm = time.perf_counter() - t
t = time.perf_counter(); first = ctxselect.select(chunks(0), reqs, "homes flooded in 2010?")
t1 = time.perf_counter() - t
t = time.perf_counter(); ctxselect.select(chunks(1000), reqs, "homes flooded in 2011?"); t2 = time.perf_counter() - t
print(json.dumps({"import": imported, "warm_up": warm, "first": t1, "second": t2, "status": first.status,
                  "phases": phases}))
"""


def run(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True,
                         env=os.environ.copy(), timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def span(values: list[float]) -> str:
    return f"{1e3 * min(values):,.0f}–{1e3 * max(values):,.0f} ms (median {1e3 * statistics.median(values):,.0f})"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    run("cold")  # the kernels' disk cache warm before any measurement
    rows = {"cold": [], "warm": [], "phases": []}
    for _ in range(args.runs):  # alternating, so both modes see the same load
        for mode in rows:
            rows[mode].append(run(mode))
    api = importlib.util.find_spec("ctxselect.selection.api")
    cached = bool(api and api.cached and os.path.exists(api.cached))
    print(f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}; ctxselect's bytecode "
          f"{'cached' if cached else 'not cached: compiled in each process'}; {args.runs} processes each")
    print("| | `warm_up()` | first `select()` | second `select()` |\n|---|---|---|---|")
    for mode, label in (("cold", "without `warm_up()`"), ("warm", "after `warm_up()`")):
        r = rows[mode]
        warm = "—" if mode == "cold" else span([x["warm_up"] for x in r])
        print(f"| {label} | {warm} | {span([x['first'] for x in r])} | {span([x['second'] for x in r])} |")
    print("\nphases of a first call (separate processes):")
    for name in rows["phases"][0]["phases"]:
        print(f"- {name}: {span([x['phases'][name] for x in rows['phases']])}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
