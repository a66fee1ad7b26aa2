"""Ablation variants (article 004)."""

import ctxselect
from tests.conftest import EXAMPLES

EXAMPLE = str(EXAMPLES / "support_desk.jsonl")


def test_ablation_variants():
    queries = list(ctxselect.read_dump(EXAMPLE))
    selections = [ctxselect.select(q.candidates, q.requirements, q.query).ids for q in queries]
    rows = list(ctxselect.ablation_variants(queries, selections, seed=3))
    assert len(rows) == 6 * len(queries)
    by = {(r["query_id"], r["variant"]): r for r in rows}
    first = queries[0].query_id
    assert by[(first, "full")]["ids"] == selections[0] and by[(first, "none")]["ids"] == []
    assert by[(first, "shuffled")]["source_query_id"] != first
    tokens = {c.id: c.tokens for c in queries[0].candidates}
    full = sum(tokens[c] for c in selections[0])
    half = by[(first, "truncated_half")]
    cut = half["cut"]
    whole = [c for c in half["ids"] if cut is None or c != cut["id"]]
    assert sum(tokens[c] for c in whole) + (cut["tokens"] if cut else 0) <= full / 2
    assert by[(first, "truncated_half")]["ids"] == selections[0][:len(by[(first, "truncated_half")]["ids"])]
    reordered = by[(first, "reordered")]["ids"]
    rel = {c.id: c.relevance for c in queries[0].candidates}
    assert sorted(reordered) == sorted(selections[0]) and rel[reordered[-1]] == max(rel[c] for c in reordered)
    assert rows == list(ctxselect.ablation_variants(queries, selections, seed=3))  # seeded

