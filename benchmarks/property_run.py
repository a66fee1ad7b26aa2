"""The hard-constraint property run of issue 11, at scale: generated queries whose scope lists are
reshaped (each scope repeated, a merged role list, another order), through every selector.

Counts the selections that hold an inadmissible chunk, exceed the budget or hold both sides of a
hard conflict; each must be zero. Run: ``python benchmarks/property_run.py [QUERIES]`` (750 queries
x 3 shapes = 2,250 instances by default, about ten minutes on two cores).
"""

from __future__ import annotations

import sys
import time

import ctxselect
from ctxselect.features.contradictions.fields import disagree_on_codes
from ctxselect.evaluate.generate import GeneratorConfig, generate_queries
from ctxselect.selection.api import prepare

SHAPES = {
    "repeated": lambda s: [x for x in s for _ in range(2)],
    "merged": lambda s: list(s) + ["support"] + list(s),
    "reordered": lambda s: list(reversed(list(s) + ["support"])),
}
METHODS = ("greedy", "topk", "density", "mmr", "optimal")


def main(n_queries: int = 750) -> int:
    queries = generate_queries(GeneratorConfig(queries=n_queries, candidates=40, inadmissible_rate=0.3,
                                               seed=11))
    counts = {"instances": 0, "selections": 0, "inadmissible": 0, "over_budget": 0, "hard_conflict": 0}
    started = time.perf_counter()
    for q in queries:
        for shape in SHAPES.values():
            reqs = q.requirements.to_dict()
            reqs["allowed_scopes"] = shape(sorted(reqs.get("allowed_scopes") or ["public"]))
            listed = set(reqs["allowed_scopes"])
            counts["instances"] += 1
            problem = prepare(q.candidates, reqs)
            con = problem.signals.contradictions
            scope_of = {c.id: c.scope for c in q.candidates}
            tokens_of = {c.id: c.tokens for c in q.candidates}
            for method in METHODS:
                sel = ctxselect.select(q.candidates, reqs, q.query, method)
                counts["selections"] += 1
                chosen = set(sel.ids)
                counts["inadmissible"] += sum(scope_of[c] not in listed for c in chosen)
                counts["over_budget"] += sum(tokens_of[c] for c in chosen) > reqs["token_budget"]
                ids = problem.packed.ids
                counts["hard_conflict"] += sum(
                    ids[i] in chosen and ids[j] in chosen for i, j, w in zip(con.i, con.j, con.weight) if w >= 1.0)
                # hard fields and versions are value codes, not listed pairs
                counts["hard_conflict"] += disagree_on_codes(problem.packed, problem.packed.mask_of(sel.ids),
                                                             problem.hard_fields)
    counts["seconds"] = round(time.perf_counter() - started, 1)
    print(counts)
    return 0 if counts["inadmissible"] == counts["over_budget"] == counts["hard_conflict"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 750))
