"""The articles' metrics (issue 16.3-16.5): ranking metrics and density (004), gold position and
self-consistency (003), relevance with its alert (001), the weighted score (000). Hand-computed."""

import math

import pytest

import ctxselect
from ctxselect.evaluate.bench import run_bench
from ctxselect.evaluate.labelled import labelled_metrics, ranking_metrics, summarize_labelled
from ctxselect.evaluate.paraphrase import builtin_paraphrases, paraphrases_of
from ctxselect.evaluate.relevance import context_relevance
from ctxselect.quality.score import SCORE_WEIGHTS, quality_score


def query(candidates, gold, **extra):
    return ctxselect.Query.from_dict({"query_id": "q", "query": "what is the refund window?",
                                      "requirements": {"token_budget": 100}, "gold": gold,
                                      "candidates": candidates, **extra})


def cand(cid, rank=None, tokens=10, relevance=0.5, text="", **kw):
    out = {"id": cid, "source": "s", "tokens": tokens, "relevance": relevance, "text": text, **kw}
    if rank is not None:
        out["rank"] = rank
    return out


def test_ranking_metrics_hand_computed():
    # ranking a b c d e; relevant a, c and x (never retrieved): rel = 1 0 1 0 0, |G| = 3
    m = ranking_metrics(list("abcde"), {"a", "c", "x"}, depths=(1, 3, 10))
    assert m["precision@1"] == 1.0 and m["retrieval_recall@1"] == pytest.approx(1 / 3)
    assert m["precision@3"] == pytest.approx(2 / 3) and m["retrieval_recall@3"] == pytest.approx(2 / 3)
    assert m["precision@10"] == pytest.approx(0.2)  # divided by k, as trec_eval
    # DCG@3 = 1/log2(2) + 1/log2(4) = 1.5; IDCG@3 = 1 + 1/log2(3) + 1/2
    assert m["ndcg@3"] == pytest.approx(1.5 / (1.5 + 1 / math.log2(3)))
    assert m["ndcg@1"] == 1.0
    assert m["ap"] == pytest.approx((1 + 2 / 3) / 3)  # precision at each relevant rank, over |G|
    one = ranking_metrics(["b", "a"], {"a"}, depths=(2,))
    assert one["ap"] == 0.5 and one["ndcg@2"] == pytest.approx(1 / math.log2(3))
    assert ranking_metrics(["a"], set(), depths=(1,)) == {"precision@1": 0.0, "retrieval_recall@1": 0.0,
                                                          "ndcg@1": 0.0, "ap": 0.0}
    with pytest.raises(ctxselect.InputError, match="field 'depths'"):
        ranking_metrics(["a"], {"a"}, depths=(0,))


def test_density_gold_position_and_map():
    q = query([cand("a", 1, tokens=30), cand("b", 2, tokens=10), cand("c", 3, tokens=60)], ["c"])
    m = labelled_metrics(q, ["b", "c", "a"], depths=(1, 3))
    assert m["density"] == pytest.approx(60 / 100)  # gold tokens / window tokens
    assert m["gold_first_rank"] == 2 and m["gold_first_offset"] == 10
    assert m["gold_middle_third_share"] == 1.0  # centre of c at 40 of 100 tokens
    assert m["precision@3"] == pytest.approx(1 / 3) and m["ap"] == pytest.approx(1 / 3)
    empty = labelled_metrics(q, [], depths=(1,))
    assert empty["density"] == 0.0 and empty["gold_first_rank"] is None and empty["evidence_free"] == 1.0
    s = summarize_labelled([m, empty])
    assert s["queries"] == 2 and s["gold_first_rank"] == 2.0 and s["gold_first_rank:queries"] == 1
    assert s["density"] == pytest.approx(0.3) and s["ap"] == pytest.approx(1 / 3)  # MAP


def test_builtin_paraphrases():
    assert builtin_paraphrases("What is the refund window?") == [
        "what is the refund window", "refund window", "Can you tell me: What is the refund window?"]
    assert builtin_paraphrases("?!") == []


def test_self_consistency_from_the_dumps_paraphrases():
    cands = [cand("a", relevance=0.9), cand("b", relevance=0.8), cand("c", relevance=0.1)]
    reworded = [cand("a", relevance=0.9), cand("d", relevance=0.95), cand("e", relevance=0.1)]
    q = ctxselect.Query.from_dict({"query_id": "q", "query": "refund window",
                                   "requirements": {"token_budget": 20, "max_token_utilization": None},
                                   "candidates": cands,
                                   "paraphrases": ["window for refunds", {"query": "refunds", "candidates": reworded}]})
    record = run_bench([q], ["topk"], paraphrases="dump").records[0]
    assert record.ids == ["a", "b"]
    # same candidates: {a, b} again (Jaccard 1); its own retrieval: {d, a} (Jaccard 1/3)
    assert record.self_consistency == pytest.approx((1 + 1 / 3) / 2)
    assert run_bench([q], ["topk"], paraphrases="none").records[0].self_consistency is None
    plain = ctxselect.Query.from_dict({**q.to_dict(), "paraphrases": None})
    assert paraphrases_of(plain, "dump") == []  # folded and keyword forms equal "refund window": dropped
    assert [p.query for p in paraphrases_of(plain, "builtin")] == ["Can you tell me: refund window"]
    for bad, where in [(5, "field 'paraphrases'"), ([{"text": "x"}], r"field 'paraphrases\[0\]'"),
                       ([{"query": "x", "candidates": []}], r"field 'paraphrases\[0\].candidates'")]:
        with pytest.raises(ctxselect.InputError, match=where):
            run_bench([ctxselect.Query.from_dict({**q.to_dict(), "paraphrases": bad})], ["topk"])


def test_context_relevance_article_001():
    r = context_relevance([0.9, 0.6, 0.2])
    assert (round(r["mean"], 3), round(r["min"], 3), round(r["weighted"], 3)) == (0.567, 0.2, 0.472)
    assert r["bands"] == {"mean": "moderate", "min": "low", "weighted": "low"}
    assert r["threshold"] == 0.7 and r["alert"] is True
    assert context_relevance([0.9, 0.6, 0.2], threshold=0.45)["alert"] is False
    assert context_relevance([])["alert"] is True  # an empty context scores 0
    with pytest.raises(ctxselect.InputError, match="field 'relevance_alert'"):
        context_relevance([0.5], threshold=1.5)


# C1: article 000's example vector (0.75, 0.56, 0.33, 0.17, 0.81, 1) without the starved source
# (the article's C1 has none); C2: more coverage, but worse utilization and freshness and a starved
# source. (The article's own weights and C1 / C2 numbers were images,
# lost from the text; its stated ordering is what these check.)
C1 = {"coverage": 0.75, "token_utilization": 0.56, "utilization_risk": 0.0, "source_starvation": 0.0,
      "contradiction_density": 0.17, "freshness": 0.81, "policy_admissibility": 1.0}
C2 = {"coverage": 1.0, "token_utilization": 0.30, "utilization_risk": 0.0, "source_starvation": 0.33,
      "contradiction_density": 0.17, "freshness": 0.60, "policy_admissibility": 1.0}


def test_article_000_weighted_score_orders_c1_above_c2():
    # 0.25*0.75 + 0.15*0.56 + 0.20*1 + 0.15*0.83 + 0.15*0.81 + 0.10*1
    assert quality_score(C1) == pytest.approx(0.8175)
    # 0.25*1 + 0.15*0.30 + 0.20*0.67 + 0.15*0.83 + 0.15*0.60 + 0.10*1
    assert quality_score(C2) == pytest.approx(0.7435)
    assert quality_score(C1) > quality_score(C2)
    assert quality_score({**C1, "source_starvation": 0.33}) == pytest.approx(0.7515)  # the example vector
    # coverage alone would rank them the other way: the ordering comes from the weights
    assert quality_score(C1, {k: 0 for k in SCORE_WEIGHTS if k != "coverage"}) < \
        quality_score(C2, {k: 0 for k in SCORE_WEIGHTS if k != "coverage"})
    perfect = {**C1, "coverage": 1, "token_utilization": 0.9, "contradiction_density": 0, "freshness": 1}
    assert quality_score(perfect) == pytest.approx(1 - 0.15 * 0.1)
    assert quality_score({**C1, "token_utilization": 0.97, "utilization_risk": 1.0}) == \
        pytest.approx(0.8175 - 0.15 * 0.56)  # an over-full window earns no utilization
    with pytest.raises(ctxselect.InputError, match="field 'weights.relevance'"):
        quality_score(C1, {"relevance": 1})
    with pytest.raises(ctxselect.InputError, match="field 'metrics.freshness'"):
        quality_score({k: v for k, v in C1.items() if k != "freshness"})


def test_quality_score_of_a_real_report():
    report = ctxselect.inspect([{"id": "a", "source": "policy", "tokens": 2200, "relevance": 0.9}],
                               {"token_budget": 20000, "required_sources": ["policy", "status"]})
    m = report.metrics  # coverage 1, tau 0.11, starvation 0.5, no conflicts, freshness 1, admissible
    assert quality_score(m) == pytest.approx(0.25 + 0.15 * 0.11 + 0.20 * 0.5 + 0.15 + 0.15 + 0.10)


def test_a_reports_quality_score_is_the_functions():
    report = ctxselect.inspect([{"id": "a", "source": "s", "tokens": 100, "relevance": 0.9}], {"token_budget": 400})
    assert report.quality_score == quality_score(report.metrics)
    assert "quality_score" not in report.to_dict()  # the report's JSON is unchanged
