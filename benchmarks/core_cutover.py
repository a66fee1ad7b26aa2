"""Where the core loses nothing: the whole problem (proven) against a 300-chunk core, per n.

For 10 generated queries per n (benchmarks/latency.py instances, every constraint on, gate
enforced): how often and how far the core falls below the proven optimum, and the p50 time of
model + solve for each. Decides the default of select(exact_up_to=...).

    python benchmarks/core_cutover.py
"""
import sys
from pathlib import Path

import numpy as np

from ctxselect.selection.api import prepare
from ctxselect.selection.problem import score
from ctxselect.selection.solvers.tiers import run_optimal

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import instance  # noqa: E402

for n in (300, 500, 1000, 2000):
    worse, tf, tc = [], [], []
    for k in range(10):
        p = prepare(*instance(n, 100 + k))
        t = {}; full, info = run_optimal(p, enforce_gate=True, time_limit=30, core_size=300, exact_up_to=10**9, timings=t)
        tf.append(t.get('model',0)+t.get('solve',0))
        t = {}; core, cinfo = run_optimal(p, enforce_gate=True, time_limit=30, core_size=300, exact_up_to=0, timings=t)
        tc.append(t.get('model',0)+t.get('solve',0))
        F, Fc = score(p, full), score(p, core)
        if info['status'] != 'optimal': print('full not proven', n, k, info['status'])
        worse.append((F - Fc) / abs(F))
    print(f"n={n}: core below full optimum on {sum(w > 1e-9 for w in worse)}/10, worst {100*max(worse):.3f}%; "
          f"model+solve p50 full {1e3*np.median(tf):.1f} ms, core {1e3*np.median(tc):.1f} ms", flush=True)
