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



def test_truncation_by_tokens_cuts_inside_a_chunk():
    # three chunks of 10 tokens and 10 words each: a quarter (7.5 tokens) lies inside the first
    text = "One two three four five six. Seven eight nine ten."
    q = ctxselect.Query.from_dict({"query_id": "q", "requirements": {"token_budget": 100}, "candidates": [
        {"id": c, "source": "s", "tokens": 10, "relevance": 0.5, "text": text} for c in "abc"]})
    rows = {r["variant"]: r for r in ctxselect.ablation_variants([q], [["a", "b", "c"]])}
    quarter, half = rows["truncated_quarter"], rows["truncated_half"]
    assert rows["none"]["ids"] == [] and quarter["ids"] == ["a"]  # no longer equal to "none"
    # 7 words fit (⌊10·7.5/10⌋); the sentence end after word 6 keeps at least half of them
    assert quarter["context"] == ["One two three four five six."]
    assert quarter["cut"] == {"id": "a", "words": 6, "of_words": 10, "tokens": 6}
    # 15 tokens: a whole, then 5 words of b; the only sentence end within them is none
    assert half["ids"] == ["a", "b"] and half["context"] == [text, "One two three four five"]
    assert half["cut"]["tokens"] == 5
    # a limit between chunks cuts nothing
    rows = {r["variant"]: r for r in ctxselect.ablation_variants([q], [["a", "b"]])}
    assert rows["truncated_half"]["ids"] == ["a"] and rows["truncated_half"]["cut"] is None
    # a window of one chunk too long for one word still keeps its first word
    big = ctxselect.Query.from_dict({"query_id": "q", "requirements": {"token_budget": 1000}, "candidates": [
        {"id": "a", "source": "s", "tokens": 900, "relevance": 0.5, "text": "Supercalifragilistic"}]})
    quarter = next(r for r in ctxselect.ablation_variants([big], [["a"]]) if r["variant"] == "truncated_quarter")
    assert quarter["context"] == ["Supercalifragilistic"] and quarter["ids"] == ["a"]


def test_truncation_cuts_scripts_without_spaces_as_the_counter_counts_them():
    """A Chinese chunk is cut by characters (the default counter's units), at a sentence end
    (。) when one keeps half the quarter: the quarter is no longer the whole chunk."""
    from ctxselect.evaluate.ablation import truncate
    from ctxselect.model.tokens import default_token_counter

    text = "退款政策规定年度计划在购买后三十天内可以全额退款。之后未使用的月份将记入账户余额。"
    total = default_token_counter(text)
    ids, context, cut = truncate(["a"], {"a": text}, {"a": total}, total / 4)
    assert ids == ["a"] and len(context[0]) < len(text) / 3
    assert cut["tokens"] <= total / 4 and cut["words"] == len(context[0])
    half = truncate(["a"], {"a": text}, {"a": total}, 30)[1][0]  # 30 units: the first sentence (25) ends within
    assert half.endswith("。") and len(half) < len(text)
