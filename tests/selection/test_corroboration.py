"""Free-text claim conflicts and their resolution by corroboration."""

import pytest

import ctxselect
from ctxselect.evaluate.generate import generate_queries

FACT = ("Officials said the storm power outage in the northern district affected {n} people "
        "last week. {tail}")


def chunk(cid, n, relevance, doc, tail="", source="news"):
    return {"id": cid, "source": source, "tokens": 30, "relevance": relevance, "doc_id": doc,
            "text": FACT.format(n=n, tail=tail or f"Report {cid} adds local detail.")}


def test_minority_falsehood_loses_even_when_more_relevant():
    cands = [chunk("t1", "3,559", 0.70, "d1"), chunk("t2", "3,559", 0.65, "d2", source="wire"),
             chunk("t3", "3559", 0.60, "d3", source="blog"), chunk("lie", "10,000", 0.95, "d4")]
    sel = ctxselect.select(cands, {"token_budget": 120})
    assert "lie" not in sel.ids and {"t1", "t2", "t3"} & set(sel.ids)
    assert sel.excluded["lie"] == ("contradicted by `t1`: states '10,000 people' where 3 chunk(s) state "
                                   "'3,559 people' (this side: 1 chunk(s))")  # the first pair's wording
    plain = ctxselect.select(cands, {"token_budget": 120}, method="greedy", resolve_by_corroboration=False)
    assert "lie" in plain.ids  # without corroboration, relevance decides


def test_copies_in_one_document_count_once():
    """Two copies stating 3,559 (relevance 0.6 each) against one chunk stating 10,000 (0.9).
    In one document the copies weigh 0.6, once: the other side's 0.9 is more than MARGIN (1.25)
    times that, so the copies lose. In two documents they weigh 1.2 from two documents, and win."""
    copies = [chunk("t1", "3,559", 0.6, "same"), chunk("t2", "3,559", 0.6, "same")]
    sel = ctxselect.select(copies + [chunk("lie", "10,000", 0.9, "other")], {"token_budget": 200})
    assert sel.ids == ["lie"]
    lost = "contradicted by `lie`: states '3,559 people' where 1 chunk(s) state '10,000 people' (this side: 2 chunk(s))"
    assert sel.excluded == {"t1": lost, "t2": lost}
    apart = [chunk("t1", "3,559", 0.6, "d1"), chunk("t2", "3,559", 0.6, "d2")]
    sel = ctxselect.select(apart + [chunk("lie", "10,000", 0.9, "other")], {"token_budget": 200})
    assert sel.ids == ["t1"] and sel.excluded["t2"].startswith("redundant with `t1`")
    assert sel.excluded["lie"] == ("contradicted by `t1`: states '10,000 people' where 2 chunk(s) state "
                                   "'3,559 people' (this side: 1 chunk(s))")


def test_even_split_is_unresolved():
    cands = [chunk("a", "3,559", 0.8, "d1"), chunk("b", "10,000", 0.8, "d2"),
             {"id": "c", "source": "s", "tokens": 20, "relevance": 0.3, "text": "Unrelated weather notes."}]
    assert sorted(ctxselect.select(cands, {"token_budget": 200}, on_unresolved="keep_both").ids) == ["a", "b", "c"]
    sel = ctxselect.select(cands, {"token_budget": 200})
    assert sel.ids == ["c"]  # the default: neither side is corroborated, both are left out
    assert sel.excluded["a"] == ("unresolved conflict with `b`: '3,559 people' (1 supporting chunk(s)) vs "
                                 "'10,000 people' (1 supporting chunk(s)), an even split; neither side is "
                                 "corroborated, both are left out")
    assert sel.excluded["b"].startswith("unresolved conflict with `a`")
    from ctxselect.selection.api import prepare
    from ctxselect.selection.corroboration import resolve_conflicts
    problem = prepare(cands, {"token_budget": 200})
    kept = resolve_conflicts(problem.packed, problem.signals, problem.packed.admissible, on_unresolved="keep_both")
    assert [(c.i, c.j, c.outcome) for c in kept.conflicts] == [(0, 1, "both eligible")] and not kept.losers


def test_inspect_lists_free_text_conflicts():
    chunks = [chunk("a", "3,559", 0.8, "d1"), chunk("b", "10,000", 0.8, "d2")]
    # article 000's κ (the default): conflict fields and versions; the claim conflict is listed beside it
    report = ctxselect.inspect(chunks, {"token_budget": 200})
    assert report.metrics["contradiction_density"] == 0.0 and report.conflicting_pair_count == 0
    assert report.claim_conflict_count == 1
    assert report.claim_conflicts[0].reasons == ("claim: '3,559 people' vs '10,000 people'",)
    assert report.to_dict()["claim_conflict_count"] == 1
    assert "max_contradiction_density" not in [f.condition for f in report.failures]
    # counted in κ when the requirements ask
    report = ctxselect.inspect(chunks, {"token_budget": 200, "contradictions": "all"})
    assert report.metrics["contradiction_density"] == 1.0 and report.claim_conflicts == []
    assert report.conflicting_pairs[0].reasons == ("claim: '3,559 people' vs '10,000 people'",)
    assert [(f.condition, f.message) for f in report.failures] == [
        ("max_contradiction_density", "contradiction density 1.000 is above 0.000: 1 conflicting pair(s): "
                                      "`a` vs `b` (claim: '3,559 people' vs '10,000 people')")]


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


def test_an_older_version_is_superseded_whenever_a_newer_one_is_eligible():
    """v3 is internal (inadmissible), v2 public: v1 must give way to v2 in any order of the
    candidates (it once did only when v3 was listed first)."""
    versions = [{"id": f"v{k}", "source": "policy", "tokens": 20, "relevance": r, "doc_id": "d",
                 "version": str(k), "scope": scope, "text": f"rules, edition {k}"}
                for k, r, scope in [(1, 0.9, "public"), (2, 0.5, "public"), (3, 0.5, "internal")]]
    reqs = {"token_budget": 200, "allowed_scopes": ["public"]}
    outcomes = []
    for order in [(2, 0, 1), (0, 1, 2)]:
        for method in ("greedy", "optimal"):
            sel = ctxselect.select([versions[k] for k in order], reqs, method=method)
            outcomes.append((order, method, sel.ids, sel.excluded.get("v1")))
    superseded = "superseded by `v2` (a newer version of the same document)"
    assert outcomes == [(order, method, ["v2"], superseded)
                        for order in [(2, 0, 1), (0, 1, 2)] for method in ("greedy", "optimal")]


# -- unresolved conflicts: never silently gone ------------------------------------------------------

EVEN = [chunk("a", "3,559", 0.8, "d1"), chunk("b", "10,000", 0.7, "d2", source="wire"),
        {"id": "c", "source": "s", "tokens": 20, "relevance": 0.3, "text": "Unrelated weather notes."}]


@pytest.mark.parametrize("option,ids,outcome", [
    ("drop_both", ["c"], "both left out"),
    ("keep_stronger", ["a", "c"], "kept the stronger side"),
    ("keep_both", ["a", "b", "c"], "both eligible"),
])
def test_each_outcome_of_an_even_split_is_listed_with_both_values(option, ids, outcome):
    sel = ctxselect.select(EVEN, {"token_budget": 200}, on_unresolved=option)
    assert sorted(sel.ids) == ids
    assert sel.unresolved == [{"ids": ["a", "b"], "values": ["'3,559 people'", "'10,000 people'"],
                               "outcome": outcome, "selected": [i for i in ("a", "b") if i in ids]}]
    assert sel.to_dict()["unresolved"] == sel.unresolved


def test_keep_stronger_says_why_the_weaker_side_went():
    sel = ctxselect.select(EVEN, {"token_budget": 200}, on_unresolved="keep_stronger")
    assert sel.excluded["b"].endswith("an even split; the stronger side is kept (support 0.8 vs 0.7)")


@pytest.mark.parametrize("precedence,winner", [(["wire", "news"], "b"), ({"news": 0.9, "wire": 0.1}, "a"),
                                               (["wire"], "b")])
def test_source_precedence_decides_an_even_split_before_anything_is_dropped(precedence, winner):
    for option in ("drop_both", "keep_stronger", "keep_both"):
        sel = ctxselect.select(EVEN, {"token_budget": 200, "source_precedence": precedence}, on_unresolved=option)
        assert winner in sel.ids and ({"a", "b"} - {winner}).isdisjoint(sel.ids), option
        assert sel.unresolved[0]["outcome"] == "source precedence"
        loser = ({"a", "b"} - {winner}).pop()
        assert "source precedence: `" in sel.excluded[loser]


def test_two_policy_versions_without_timestamps_or_doc_ids_are_listed():
    """Two near-duplicate policy texts that differ in one number, no doc_id, no timestamp: an even
    split the assembler is told about, whatever the outcome."""
    text = "Refunds for annual plans are accepted within {d} days of purchase, through the billing page."
    cands = [{"id": "old", "source": "help", "tokens": 20, "relevance": 0.8, "text": text.format(d=14)},
             {"id": "new", "source": "help", "tokens": 20, "relevance": 0.8, "text": text.format(d=30)}]
    expected = {"drop_both": ([], "both left out"), "keep_stronger": (["old"], "kept the stronger side"),
                "keep_both": (["old"], "both eligible")}  # keep_both: near-duplicates, one of them
    for option, (ids, outcome) in expected.items():
        sel = ctxselect.select(cands, {"token_budget": 100}, on_unresolved=option)
        assert sel.unresolved == [{"ids": ["old", "new"], "values": ["'14 days'", "'30 days'"], "outcome": outcome,
                                   "selected": ids}], option
        assert sel.ids == ids and (sel.status == "empty") == (ids == [])


def test_an_empty_context_is_never_silent_and_the_diagnosis_is_true():
    sel = ctxselect.select(EVEN[:2], {"token_budget": 200}, on_unresolved="drop_both")
    assert sel.ids == [] and sel.status == "empty"
    assert sel.status_reason == ("empty context: none of the 2 candidate(s) is selected: unresolved conflict (2) "
                                 "(optimal: proven optimal)")
    assert "no admissible candidate fits the budget" not in " ".join(sel.infeasible)
    assert "no candidate is eligible: of the 2 admissible that fit the budget, unresolved conflict (2)" in sel.infeasible
    too_big = [dict(EVEN[2], tokens=500)]
    sel = ctxselect.select(too_big, {"token_budget": 200}, enforce_gate=False)
    assert sel.ids == [] and sel.status == "empty" and "over budget (1)" in sel.status_reason
    under_ceiling = [dict(EVEN[2], tokens=190)]
    sel = ctxselect.select(under_ceiling, {"token_budget": 200})
    assert sel.ids == [] and "does not fit (1)" in sel.status_reason
    assert "no eligible candidate fits under the gate's utilization ceiling (180 of the 200-token budget)" in (
        sel.infeasible)


def test_an_unknown_outcome_lists_the_valid_ones():
    with pytest.raises(ctxselect.InputError, match="field 'on_unresolved': expected one of drop_both, "
                                                   "keep_stronger, keep_both, found 'keep'"):
        ctxselect.select(EVEN, {"token_budget": 200}, on_unresolved="keep")


def test_near_duplicates_about_different_years_or_pages_are_no_drift():
    """'27 goals in 2018' and '31 goals in 2019' are near-duplicates whose numbers differ, but each
    names its own year: no conflict is listed (it was an unresolved drift), and the 2019 chunk is
    kept for the 2019 question. Two titled pages of one template likewise."""
    texts = [f"During the league campaign the club striker scored {n} goals in {y}." for n, y in
             ((27, 2018), (31, 2019), (12, 2020))]
    cands = [{"id": f"y{y}", "source": "s", "tokens": 15, "relevance": 0.8, "text": t}
             for t, y in zip(texts, (2018, 2019, 2020))]
    sel = ctxselect.select(cands, {"token_budget": 100}, query="how many goals did the striker score in 2019?")
    assert "y2019" in sel.ids and sel.unresolved == []
    page = "The plan costs {c} dollars per month and includes {u} users with email support and backups."
    plans = [{"id": name, "source": "pricing", "tokens": 20, "relevance": 0.8, "title": f"{name} plan",
              "text": page.format(c=c, u=u)} for name, c, u in (("Basic", 10, 5), ("Pro", 30, 20))]
    sel = ctxselect.select(plans, {"token_budget": 100})
    assert sel.unresolved == [] and sel.status != "empty"
    untitled = [{k: v for k, v in p.items() if k != "title"} for p in plans]
    assert ctxselect.select(untitled, {"token_budget": 100}).unresolved  # the same texts without titles: drift
