"""Throughput of ``ctxselect bench`` (queries per second, end to end) with the local process pool
(``--jobs 1/2/4``) and with Dask (``--engine dask --workers 1/2/4``), and the load average while
each ran (docs/dask.md has the table)::

    python -m ctxselect gen /tmp/g200.jsonl --queries 200 --candidates 200 --seed 1
    python benchmarks/dask_throughput.py /tmp/g200.jsonl [--methods optimal]

Each run is a fresh ``python -m ctxselect bench DUMP --json`` (start-up, reading, the cluster's
start and the workers' kernel loading included); the records of every run are checked equal to the
first run's, latencies apart.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run(dump: str, methods: str, extra: list[str]) -> dict:
    samples, stop = [], threading.Event()

    def sample():
        while not stop.wait(2.0):
            samples.append(_loadavg())

    thread = threading.Thread(target=sample, daemon=True)
    before = _loadavg()
    thread.start()
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "ctxselect", "bench", dump, "--methods", methods, "--json", *extra],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    stop.set()
    thread.join()
    data = json.loads(out.stdout)
    records = [{k: v for k, v in r.items() if k != "latency"} for r in data["records"]]
    return {"args": " ".join(extra) or "--jobs 1", "queries": data["queries"], "wall": wall,
            "qps": data["queries"] / wall, "load_before": before, "load_mean": sum(samples) / max(1, len(samples)),
            "load_max": max(samples, default=before), "records": records}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dump")
    parser.add_argument("--methods", default="optimal")
    args = parser.parse_args()
    configs = [["--jobs", "1"], ["--jobs", "2"], ["--jobs", "4"],
               ["--engine", "dask", "--workers", "1"], ["--engine", "dask", "--workers", "2"],
               ["--engine", "dask", "--workers", "4"]]
    results = []
    for extra in configs:
        result = run(args.dump, args.methods, extra)
        if results:
            assert result["records"] == results[0]["records"], "records differ from the first run's"
        results.append(result)
        print(f"| {result['args']} | {result['queries']} | {result['wall']:.1f} | {result['qps']:.2f} | "
              f"{result['load_before']:.2f} | {result['load_mean']:.2f} | {result['load_max']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
