"""Two checkouts' ``select()`` compared call by call: the A/B behind docs/benchmarks.md's ratios.

Two worker processes, one per checkout (each imports ctxselect from its own tree), take turns on
the same generated queries of ``benchmarks/latency.py`` (new texts each call, the question, every
constraint on; which goes first alternates). On a shared machine only such same-minute ratios are
worth comparing; run a tree against itself first to see the noise.

    python benchmarks/ab_select.py BASE_TREE NEW_TREE --sizes 200 2000 --calls 40 16
    python benchmarks/ab_select.py TREE TREE --sizes 200 --calls 40          # A/A: the noise
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1] + "/benchmarks")
sys.path.insert(0, sys.argv[1])
import latency
dim, warm = int(sys.argv[2]), set()
print("ready", flush=True)
for line in sys.stdin:
    n, k, method = json.loads(line)
    if (n, method) not in warm:  # compile and import once, as a long-running assembler has
        latency.timed(*latency.instance(n, -1, dim), method)
        warm.add((n, method))
    sel, cpu, wall = latency.timed(*latency.instance(n, k, dim), method)
    print(json.dumps([cpu, wall, sel.objective, sel.status, list(sel.ids)]), flush=True)
"""


def _p90(values) -> float:
    """The 90th percentile (the value below which 90 % of the calls fall; nearest rank)."""
    ordered = sorted(values)
    return ordered[-(-9 * len(ordered) // 10) - 1]  # ceil(0.9 n) - 1, in integers


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="checkout A (the base)")
    parser.add_argument("b", help="checkout B")
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--calls", type=int, nargs="+", default=[40, 16])
    parser.add_argument("--dim", type=int, default=0)
    parser.add_argument("--method", default="optimal")
    args = parser.parse_args(argv)
    if len(args.calls) != len(args.sizes):
        parser.error("--calls takes one count per size")
    workers = {}
    for name, tree in (("A", args.a), ("B", args.b)):
        tree = os.path.abspath(tree)
        worker = subprocess.Popen([sys.executable, "-c", WORKER, tree, str(args.dim)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=tree))
        if worker.stdout.readline().strip() != "ready":
            sys.exit(f"checkout {name} ({tree}) did not start")
        workers[name] = worker

    def ask(name, message):
        workers[name].stdin.write(json.dumps(message) + "\n")
        workers[name].stdin.flush()
        return json.loads(workers[name].stdout.readline())

    for n, calls in zip(args.sizes, args.calls):
        rows = {"A": [], "B": []}
        for k in range(calls):
            for name in (("A", "B") if k % 2 == 0 else ("B", "A")):
                rows[name].append(ask(name, [n, k, args.method]))
        a, b = rows["A"], rows["B"]
        ratio = statistics.median(y[0] / x[0] for x, y in zip(a, b))
        same = sum(x[4] == y[4] for x, y in zip(a, b))
        objective = [y[2] / x[2] for x, y in zip(a, b) if x[2]]
        print(f"n={n:,} dim={args.dim} {args.method}: CPU p50 A {1e3 * statistics.median(x[0] for x in a):.1f} ms, "
              f"B {1e3 * statistics.median(y[0] for y in b):.1f} ms; median per-call ratio {ratio:.3f}; same "
              f"selection {same} of {calls}; objective B/A {min(objective, default=1):.6f} to "
              f"{max(objective, default=1):.6f}; statuses A {sorted({x[3] for x in a})}, B {sorted({y[3] for y in b})}",
              flush=True)
        print(f"    CPU mean A {1e3 * statistics.fmean(x[0] for x in a):.1f} ms, B "
              f"{1e3 * statistics.fmean(y[0] for y in b):.1f} ms; p90 A {1e3 * _p90([x[0] for x in a]):.1f} ms, "
              f"B {1e3 * _p90([y[0] for y in b]):.1f} ms", flush=True)
    for worker in workers.values():
        worker.stdin.close()
        worker.wait()


if __name__ == "__main__":
    main()
