"""Are two ``ctxselect bench --json`` results the same apart from timings?

Usage: ``python benchmarks/bench_equal.py BEFORE.json AFTER.json``. Prints the first differences
(per query and method) and exits 1 when there are any; latency fields are ignored. This is the
proof a refactor owes: same selections, objectives and metrics on the same dumps.

Ids, statuses and verdicts must be equal; numbers within a relative 1e-4. The tolerance is for
dumps without ``now`` (MultiHop-RAG): their freshness is measured against the clock, which moves
between two runs (1e-5 relative over an hour on 2023 articles).
"""

from __future__ import annotations

import json
import math
import sys

TIMING_KEYS = {"latency", "latency_p50", "latency_p95", "timings", "seconds"}


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _same(x, y) -> bool:
    if isinstance(x, float) and isinstance(y, float):
        return math.isclose(x, y, rel_tol=1e-4, abs_tol=1e-12)
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    return x == y


def differences(before: dict, after: dict, limit: int = 20) -> list[str]:
    out = []
    a, b = _strip(before), _strip(after)
    ra = {(r["query_id"], r["method"]): r for r in a.get("records", [])}
    rb = {(r["query_id"], r["method"]): r for r in b.get("records", [])}
    for key in sorted(set(ra) | set(rb)):
        if not _same(ra.get(key), rb.get(key)):
            x, y = ra.get(key) or {}, rb.get(key) or {}
            fields = sorted(k for k in set(x) | set(y) if not _same(x.get(k), y.get(k)))
            out.append(f"{key[0]} / {key[1]}: {', '.join(fields)}")
    for sa, sb in zip(a.get("summaries", []), b.get("summaries", [])):
        if not _same(sa, sb):
            out.append(f"summary {sa.get('method')}: differs")
    return out[:limit] if limit else out


def main(argv: list[str]) -> int:
    before, after = (json.load(open(p, encoding="utf-8")) for p in argv[1:3])
    diffs = differences(before, after, limit=0)
    for line in diffs[:20]:
        print(line)
    print(f"{len(diffs)} difference(s)" if diffs else "equal apart from timings")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
