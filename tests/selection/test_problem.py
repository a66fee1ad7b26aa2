"""The objective: every selector reports the objective the twin computes from the raw candidates
(docs/objective.md, rebuilt in tests/naive/select.py), and the query's own terms, sharpening and
relative freshness decide small hand-made cases as the formula says."""

import pytest

import ctxselect
from tests.naive.select import mask_of, naive_objective, raw_problem
from tests.strategies import random_instance


@pytest.mark.parametrize("seed", range(10))
def test_the_reported_objective_is_the_twins_objective(seed):
    """Not score() of the library's own Problem (that would compare the library with itself): the
    objective rebuilt from the raw candidates, for every selector's selection."""
    cands, reqs, weights = random_instance(seed)
    twin = raw_problem(cands, reqs, weights)
    for method in ["greedy", "topk", "density", "mmr", "optimal"]:
        sel = ctxselect.select(cands, reqs, method=method, weights=weights)
        expected = float(naive_objective(twin, mask_of(twin, sel.ids)[None, :])[0])
        assert sel.objective == pytest.approx(expected, abs=1e-9), method


def cand(cid, text, relevance=0.5, **kw):
    return {"id": cid, "source": kw.pop("source", "wiki"), "tokens": kw.pop("tokens", 20),
            "relevance": relevance, "text": text, **kw}


def test_default_objective_prefers_the_chunk_in_the_asked_years():
    cands = [cand("top", "The company ran a channel from 2009 to 2011 under another owner.", 1.0, tokens=60),
             cand("gold", "In 2017 the parent company GMM bought the channel.", 0.6, tokens=60),
             cand("other", "The channel broadcasts shows at 8 pm.", 0.5, tokens=60)]
    reqs = {"token_budget": 70}
    query = "Who owned the channel from 2017 to 2018?"
    assert ctxselect.select(cands, reqs, method="greedy").ids == ["top"]
    assert ctxselect.select(cands, reqs, query=query).ids == ["gold"]
    assert ctxselect.select(cands, reqs).ids == ["top"]  # without the question, relevance decides


def test_sharpening_keeps_one_strong_chunk_over_two_weak_ones():
    cands = [cand("strong", "alpha", 0.9, tokens=90), cand("weak1", "beta", 0.5, tokens=45),
             cand("weak2", "gamma", 0.5, tokens=45)]
    reqs = {"token_budget": 100}  # the gate's 90 % ceiling: 90 tokens
    assert ctxselect.select(cands, reqs).ids == ["strong"]  # 0.9^4 = 0.66 > 2 x 0.5^4 = 0.125
    assert sorted(ctxselect.select(cands, reqs, weights={"sharpen": 1}).ids) == ["weak1", "weak2"]


def test_relative_freshness_keeps_old_but_equal_candidates():
    cands = [cand(str(k), f"text {k}", 0.8, timestamp="2023-01-01") for k in range(3)]
    reqs = {"token_budget": 100, "now": "2026-11-01"}
    sel = ctxselect.select(cands, reqs)
    assert len(sel.ids) == 3 and "gate" in sel.relaxed  # the gate's absolute freshness cannot pass
    absolute = ctxselect.select(cands, reqs, weights={"relative_freshness": 0})
    assert absolute.ids == []  # every value is below the token cost
    assert any("freshness" in line for line in sel.infeasible)
    # with freshness_fallback="closest" the gate's other conditions (a non-empty context, 10 % of
    # the budget) still hold: only the freshness floor is lowered, to what can be reached
    closest = ctxselect.select(cands, dict(reqs, freshness_fallback="closest"), weights={"relative_freshness": 0})
    assert len(closest.ids) == 1 and closest.relaxed == ["gate"]
    assert any(line.startswith("freshness 0.70 cannot be met with the gate's other conditions: the floor is "
                               "lowered to 0.000") for line in closest.infeasible)



def test_score_counts_hard_field_disagreements_kept_as_codes():
    """Hard fields are not listed as pairs, yet score() of a mask that breaks one still subtracts
    w_con x severity per disagreeing pair (counted from the value codes)."""
    import numpy as np

    from ctxselect.selection.api import prepare
    from ctxselect.selection.problem import score

    chunks = [{"id": k, "source": "s", "tokens": 10, "relevance": 0.5, "fields": {"f": v}}
              for k, v in (("a", 1), ("b", 2), ("c", 2), ("d", None))]
    problem = prepare(chunks, {"token_budget": 100, "conflict_fields": {"f": 1.0}, "min_coverage": 0},
                      weights={"contradiction": 2.0})
    assert problem.pair_i.size == 0 and problem.hard_fields == (0,)
    alone = {k: score(problem, np.arange(4) == k) for k in range(4)}
    both = score(problem, np.array([True, True, True, True]))
    # pairs a-b and a-c disagree (b-c agree, d carries no value): 2 pairs x 2.0 x 1.0
    assert both == pytest.approx(sum(alone.values()) - 4.0)
