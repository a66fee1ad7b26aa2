"""Where one optimizing ``select()`` call's time goes, as the call itself reports it
(``Selection.timings``): median per stage over fresh ``latency.py`` queries (new texts each call,
the question passed, every constraint on), with the call's CPU and wall time.

    python benchmarks/stage_timings.py 2000 --dim 384 --calls 15

A stage appears only in the calls that ran it (``exact``: the branch and bound stopped at its node
limit before CP-SAT; ``load``: the first call's loading), so the medians do not add up to the total.
"""

from __future__ import annotations

import argparse
import collections
import statistics

import latency


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args(argv)
    latency.timed(*latency.instance(args.n, -1, args.dim), "optimal")  # loading, outside the medians
    seen: dict[str, list[float]] = collections.defaultdict(list)
    statuses: collections.Counter = collections.Counter()
    for k in range(args.calls):
        selection, cpu, wall = latency.timed(*latency.instance(args.n, k, args.dim), "optimal")
        seen["CPU"].append(cpu)
        seen["wall"].append(wall)
        for stage, value in selection.timings.items():
            seen[stage].append(value)
        statuses[selection.status] += 1
    print(f"n = {args.n:,}, d = {args.dim}, {args.calls} calls ({dict(statuses)}):")
    for stage, values in seen.items():
        print(f"  {stage:10s} {1e3 * statistics.median(values):8.2f} ms  ({len(values)} calls)")


if __name__ == "__main__":
    main()
