"""select() as a user pays for it, under pytest-benchmark (the instances of latency.py).

Every round selects for a new generated query (new texts and embeddings), with the per-text
caches cleared, the question passed and every constraint on; wall time is pytest-benchmark's,
CPU time, status and reported gap go to extra_info.

    pytest benchmarks/bench_latency.py --benchmark-only --benchmark-json=latency.json
    pytest benchmarks/bench_latency.py --benchmark-only -k "200 or 2000"    # the small sizes only
"""

import statistics
import time

import pytest

import ctxselect
from latency import CALLS, clear_text_caches, instance


@pytest.mark.parametrize("dim", [0, 384])
@pytest.mark.parametrize("n", list(CALLS))
@pytest.mark.parametrize("method", ["optimal", "greedy"])
def test_select_latency(benchmark, n, dim, method):
    rounds = CALLS[n] if dim == 0 else max(3, CALLS[n] // 2)
    instances = [instance(n, k, dim) for k in range(rounds)]
    ctxselect.select(*instance(n, -1, dim), method=method)  # compiled and imported once, as in a server
    queue = iter(instances)
    cpu, statuses, gaps = [], [], []

    def setup():
        clear_text_caches()
        return (next(queue),), {}

    def run(inst):
        started = time.process_time()
        sel = ctxselect.select(*inst, method=method)
        cpu.append(time.process_time() - started)
        statuses.append(sel.status)
        gaps.append(sel.gap)
        return sel

    benchmark.pedantic(run, setup=setup, rounds=rounds, iterations=1, warmup_rounds=0)
    benchmark.extra_info.update(
        n=n, dim=dim, method=method, cpu_p50=statistics.median(cpu),
        statuses={s: statuses.count(s) for s in sorted(set(statuses))},
        gap_max=max((g for g in gaps if g is not None), default=None),
    )
