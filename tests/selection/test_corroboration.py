"""Free-text claim conflicts and their resolution by corroboration."""

import pytest

import ctxselect
from ctxselect.text.claims import compare_claims, extract_claims
from ctxselect.evaluate.generate import generate_queries

FACT = ("Officials said the storm power outage in the northern district affected {n} people "
        "last week. {tail}")


def chunk(cid, n, relevance, doc, tail="", source="news"):
    return {"id": cid, "source": source, "tokens": 30, "relevance": relevance, "doc_id": doc,
            "text": FACT.format(n=n, tail=tail or f"Report {cid} adds local detail.")}


def test_extraction_normalises_numbers_and_dates():
    claims = extract_claims("On March 3, 2021 the fund held 1.5 million dollars, up 4% from 2,000 dollars; "
                            "in 2020 nothing happened.")
    values = {(c.kind, c.value) for c in claims}
    assert ("date", "2021-03-03") in values and ("number", 1_500_000.0) in values
    assert ("number", 4.0) in values and ("number", 2000.0) in values
    assert not any(c.value == 2020.0 for c in claims)  # a bare year is not a claim
    a = extract_claims("the storm outage in the district affected 1,000 people")
    b = extract_claims("the storm outage in the district affected 1000 people")
    assert compare_claims(a, b)[0] == [] and len(compare_claims(a, b)[1]) == 1


def test_minority_falsehood_loses_even_when_more_relevant():
    cands = [chunk("t1", "3,559", 0.70, "d1"), chunk("t2", "3,559", 0.65, "d2", source="wire"),
             chunk("t3", "3559", 0.60, "d3", source="blog"), chunk("lie", "10,000", 0.95, "d4")]
    sel = ctxselect.select(cands, {"token_budget": 120})
    assert "lie" not in sel.ids and {"t1", "t2", "t3"} & set(sel.ids)
    reason = sel.excluded["lie"]
    assert reason.startswith("contradicted by `t") and "states '10,000 people' where" in reason
    assert "3 chunk(s) state '3,559 people'" in reason or "3 chunk(s) state '3559 people'" in reason
    assert reason.endswith("(this side: 1 chunk(s))")
    plain = ctxselect.select(cands, {"token_budget": 120}, method="greedy", resolve_by_corroboration=False)
    assert "lie" in plain.ids  # without corroboration, relevance decides


def test_copies_in_one_document_count_once():
    cands = [chunk("t1", "3,559", 0.6, "same"), chunk("t2", "3,559", 0.6, "same"),
             chunk("lie", "10,000", 0.9, "other")]
    sel = ctxselect.select(cands, {"token_budget": 200})
    assert "lie" not in sel.ids or not ({"t1", "t2"} & set(sel.ids))  # never both sides
    assert "unresolved" in " ".join(sel.excluded.values()) or "contradicted" in " ".join(sel.excluded.values())


def test_even_split_is_unresolved():
    cands = [chunk("a", "3,559", 0.8, "d1"), chunk("b", "10,000", 0.8, "d2"),
             {"id": "c", "source": "s", "tokens": 20, "relevance": 0.3, "text": "Unrelated weather notes."}]
    sel = ctxselect.select(cands, {"token_budget": 200})
    assert sel.ids == ["c"]  # neither side is corroborated: both are left out
    assert sel.excluded["a"] == ("unresolved conflict with `b`: '3,559 people' (1 supporting chunk(s)) vs "
                                 "'10,000 people' (1 supporting chunk(s)), an even split; neither side is "
                                 "corroborated, both are left out")
    assert sel.excluded["b"].startswith("unresolved conflict with `a`")
    from ctxselect.selection.corroboration import resolve_conflicts
    from ctxselect.selection.api import prepare
    problem = prepare(cands, {"token_budget": 200})
    kept = resolve_conflicts(problem.packed, problem.signals, problem.packed.admissible, drop_unresolved=False)
    assert list(kept.unresolved) == [(0, 1)] and not kept.losers


def test_inspect_lists_free_text_conflicts():
    report = ctxselect.inspect([chunk("a", "3,559", 0.8, "d1"), chunk("b", "10,000", 0.8, "d2")],
                               {"token_budget": 200})
    assert report.metrics["contradiction_density"] == 1.0
    assert report.conflicting_pairs[0].reasons == ("claim: '3,559 people' vs '10,000 people'",)
    assert "claim: '3,559 people' vs '10,000 people'" in report.failures[-1].message or any(
        "claim" in f.message for f in report.failures)


@pytest.mark.parametrize("seed", [0, 1])
def test_planted_minority_falsehoods_are_left_out(seed):
    queries = generate_queries(queries=25, candidates=30, planted_rate=1.0, seed=seed)
    chosen_false = 0
    for q in queries:
        plant = q.extra["meta"]["planted"]
        assert len(plant["true"]) == 2 and len(plant["false"]) == 1
        ids = set(ctxselect.select(q.candidates, q.requirements, q.query).ids)
        chosen_false += bool(ids & set(plant["false"]))
    assert chosen_false <= 1  # at most 4 % of queries


def test_the_same_value_in_other_words_supports_a_side():
    cands = [chunk("orig", "3,559", 0.8, "d1"), chunk("copy", "10,000", 0.9, "d2"),
             {"id": "other", "source": "wire", "tokens": 30, "relevance": 0.5, "doc_id": "d3",
              "text": "Rescue teams reached all 3559 people cut off by the flood within a day."}]
    sel = ctxselect.select(cands, {"token_budget": 200})
    assert "copy" not in sel.ids and "orig" in sel.ids
    assert "2 chunk(s) state '3,559 people'" in sel.excluded["copy"]
