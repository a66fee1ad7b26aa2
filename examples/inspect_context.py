"""Inspect the contexts of the bundled support-desk dump with the library API.

Run: python examples/inspect_context.py
"""

from pathlib import Path

import ctxselect

DUMP = Path(__file__).with_name("support_desk.jsonl")

for query in ctxselect.read_dump(DUMP):
    ids = set(query.selected) if query.selected is not None else None
    context = [c for c in query.candidates if ids is None or c.id in ids]
    report = ctxselect.inspect(context, query.requirements)
    print(f"{query.query_id}: {'PASS' if report.passed else 'FAIL'}")
    for name, value in report.metrics.items():
        print(f"  {name:32s} {value:.3f}")
    for failure in report.failures:
        print(f"  - {failure.message}")
