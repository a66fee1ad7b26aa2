"""Summarise bench_select.py results as a markdown table.

    python benchmarks/report_select.py select.json
"""

import json
import sys
from pathlib import Path


def main(path: str) -> None:
    data = json.loads(Path(path).read_text())
    print("| method | n | p50 total | p95 total | pack | signals | baselines | model | solve (p50) | "
          "objective / greedy | statuses | gate passed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = sorted(data["benchmarks"], key=lambda b: (b["extra_info"]["method"], b["extra_info"]["n"]))
    for bench in rows:
        info = bench["extra_info"]
        st = info["stages"]
        ms = lambda key, q="p50": f"{st[key][q] * 1e3:,.1f} ms"  # noqa: E731
        ratio = info["objective_vs_greedy"]
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(info["statuses"].items()))
        print(f"| {info['method']} | {info['n']:,} | {ms('total')} | {ms('total', 'p95')} | {ms('pack')} | "
              f"{ms('signals')} | {ms('baselines')} | {ms('model')} | {ms('solve')} | "
              f"{'' if ratio is None else f'{ratio:.3f}'} | {statuses} | {info['gate_passed']}/{info['instances']} |")


if __name__ == "__main__":
    main(sys.argv[1])
