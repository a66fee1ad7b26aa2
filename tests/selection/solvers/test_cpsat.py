"""The optimizer against brute force over every subset (n <= 12..14), and the baselines against it."""

import pytest
from tests.naive.select import brute_force, naive_objective
from tests.strategies import random_instance

import ctxselect
from ctxselect.selection.constraints import violations
from ctxselect.selection.problem import score
from ctxselect.selection.api import prepare

METHODS = ["greedy", "topk", "density", "mmr"]


@pytest.mark.parametrize("seed", range(120))
def test_optimal_matches_brute_force(seed):
    cands, reqs, weights = random_instance(seed)
    problem = prepare(cands, reqs, weights=weights)
    best, relaxed, _ = brute_force(problem)
    sel = ctxselect.select(cands, reqs, method="optimal", weights=weights, time_limit=10.0)
    assert sel.status == "optimal", sel.status_reason
    assert sel.relaxed == relaxed
    assert sel.objective == pytest.approx(best, abs=1e-4)
    assert sel.bound >= sel.objective and sel.gap == pytest.approx(0.0, abs=1e-4)
    mask = problem.packed.mask_of(sel.ids)
    assert sel.objective == pytest.approx(float(naive_objective(problem, mask[None, :])[0]), abs=1e-9)
    if relaxed:
        assert sel.infeasible, "a relaxed selection must say why"
    # no baseline that satisfies the same constraints beats it
    gate_on, sources_on = "gate" not in relaxed, "sources" not in relaxed
    for method in METHODS:
        other = ctxselect.select(cands, reqs, method=method, weights=weights)
        other_mask = problem.packed.mask_of(other.ids)
        if not violations(problem, other_mask, enforce_gate=gate_on, enforce_sources=sources_on):
            assert other.objective <= sel.objective + 1e-6, method


@pytest.mark.parametrize("seed", range(1000, 1012))
def test_optimal_matches_brute_force_n14(seed):
    cands, reqs, weights = random_instance(seed, n_max=14)
    while len(cands) < 13:
        seed += 7919
        cands, reqs, weights = random_instance(seed, n_max=14)
    problem = prepare(cands, reqs, weights=weights)
    best, relaxed, _ = brute_force(problem)
    sel = ctxselect.select(cands, reqs, weights=weights, time_limit=10.0)
    assert sel.status == "optimal" and sel.relaxed == relaxed
    assert sel.objective == pytest.approx(best, abs=1e-4)


@pytest.mark.parametrize("seed", range(200, 230))
def test_without_gate_no_baseline_beats_optimal(seed):
    cands, reqs, weights = random_instance(seed)
    reqs = dict(reqs, required_sources={})
    problem = prepare(cands, reqs, weights=weights)
    best, relaxed, _ = brute_force(problem, enforce_gate=False)
    sel = ctxselect.select(cands, reqs, weights=weights, enforce_gate=False, time_limit=10.0)
    assert sel.objective == pytest.approx(best, abs=1e-4) and relaxed == []
    for method in METHODS:
        other = ctxselect.select(cands, reqs, method=method, weights=weights)
        assert not violations(problem, problem.packed.mask_of(other.ids), enforce_gate=False)
        assert other.objective <= sel.objective + 1e-6, method


def test_score_is_the_reported_objective():
    cands, reqs, weights = random_instance(7)
    problem = prepare(cands, reqs, weights=weights)
    for method in METHODS + ["optimal"]:
        sel = ctxselect.select(cands, reqs, method=method, weights=weights)
        assert sel.objective == score(problem, problem.packed.mask_of(sel.ids))


def test_infeasible_gate_is_diagnosed():
    cands = [
        {"id": "p1", "source": "policy", "tokens": 100, "relevance": 0.9, "aspects": ["eligibility"],
         "timestamp": "2026-10-20", "scope": "public"},
        {"id": "s1", "source": "status", "tokens": 50, "relevance": 0.8, "scope": "internal"},
        {"id": "old", "source": "procedure", "tokens": 80, "relevance": 0.7, "timestamp": "2020-01-01",
         "aspects": ["steps"], "scope": "public"},
    ]
    reqs = {"token_budget": 400, "required_sources": ["policy", "status"], "allowed_scopes": ["public"],
            "required_aspects": ["eligibility", "steps", "availability"], "now": "2026-11-01",
            "min_freshness": 0.95}
    sel = ctxselect.select(cands, reqs)
    assert sel.relaxed == ["gate", "sources"]
    text = " | ".join(sel.infeasible)
    assert "no admissible candidate from source `status` (1 required)" in text
    assert "no candidate covers aspect `availability`" in text
    assert "freshness 0.95 is out of reach: the freshest admissible set reaches 0.89" in text
    assert "s1" not in sel.ids and sel.excluded["s1"].startswith("inadmissible")
    assert not sel.report.passed


def test_assembly_orders():
    cands = [{"id": f"c{k}", "source": ["b", "a"][k % 2], "tokens": 10, "relevance": r, "rank": 5 - k,
              "timestamp": 1_700_000_000 + k * 86400} for k, r in enumerate([0.9, 0.5, 0.8, 0.6, 0.7])]
    reqs = {"token_budget": 1000, "now": 1_700_000_000 + 5 * 86400}
    edges = ctxselect.select(cands, reqs, method="greedy").ids
    assert edges[0] == "c0" and edges[-1] == "c2" and edges[len(edges) // 2] == "c1"
    assert ctxselect.select(cands, reqs, method="greedy", order="rank").ids == ["c4", "c3", "c2", "c1", "c0"]
    assert ctxselect.select(cands, reqs, method="greedy", order="source").ids == ["c0", "c2", "c4", "c3", "c1"]
    assert ctxselect.select(cands, reqs, method="greedy", order="chronological").ids == [f"c{k}" for k in range(5)]
    with pytest.raises(ctxselect.InputError, match="field 'order': expected one of edges, rank, source, chronological"):
        ctxselect.select(cands, reqs, order="middle")
    with pytest.raises(ctxselect.InputError, match="field 'method': expected one of greedy, topk, density, mmr, optimal, found 'best'"):
        ctxselect.select(cands, reqs, method="best")


def test_topk_stops_and_reasons():
    cands = [{"id": "a", "source": "s", "tokens": 60, "relevance": 0.9},
             {"id": "b", "source": "s", "tokens": 60, "relevance": 0.8},
             {"id": "c", "source": "s", "tokens": 10, "relevance": 0.1}]
    reqs = {"token_budget": 100}
    top = ctxselect.select(cands, reqs, method="topk")
    assert top.ids == ["a"]
    assert top.excluded["b"] == "does not fit: 60 tokens, 40 left in the budget"
    assert top.excluded["c"].startswith("not reached: top-k stopped at `b`")
    assert sorted(ctxselect.select(cands, reqs, method="greedy").ids) == ["a", "c"]


def test_versions_and_duplicates_are_never_both_selected():
    text = "The refund window for annual plans is thirty days from the purchase date for all customers"
    cands = [{"id": "v1", "source": "policy", "tokens": 20, "relevance": 0.9, "doc_id": "d", "version": "1", "text": "old rules"},
             {"id": "v2", "source": "policy", "tokens": 20, "relevance": 0.5, "doc_id": "d", "version": "2", "text": "new rules"},
             {"id": "dup1", "source": "wiki", "tokens": 20, "relevance": 0.8, "text": text},
             {"id": "dup2", "source": "wiki", "tokens": 20, "relevance": 0.8, "text": text + "."}]
    reqs = {"token_budget": 200}
    for method in METHODS + ["optimal"]:
        sel = ctxselect.select(cands, reqs, method=method)
        assert not {"v1", "v2"} <= set(sel.ids) and not {"dup1", "dup2"} <= set(sel.ids), method
    sel = ctxselect.select(cands, reqs, method="greedy")
    assert sel.excluded["dup2"] == "near-duplicate of `dup1`"
    assert "v2" in sel.ids  # the newer version wins although it is less relevant
    assert sel.excluded["v1"] == "superseded by `v2` (a newer version of the same document)"
    old_rules = ctxselect.select(cands, reqs, method="greedy", resolve_by_corroboration=False)
    assert old_rules.excluded["v2"] == "conflicts with `v1` (version '2' vs '1' of doc 'd')"


def test_core_above_exact_limit_reports_feasible_with_a_valid_bound():
    import numpy as np

    rng = np.random.default_rng(4)
    cands = [{"id": f"c{k}", "source": "s", "tokens": int(rng.integers(10, 60)),
              "relevance": float(rng.random())} for k in range(40)]
    reqs = {"token_budget": 200}
    proven = ctxselect.select(cands, reqs)
    assert proven.status == "optimal"
    cored = ctxselect.select(cands, reqs, core_size=8, exact_up_to=10)
    assert cored.status == "feasible" and "core of 8 candidates" in cored.status_reason
    assert cored.objective <= proven.objective + 1e-9 <= cored.bound + 1e-9  # the bound covers the optimum
    with pytest.raises(ctxselect.InputError, match="field 'exact_up_to'"):
        ctxselect.select(cands, reqs, exact_up_to=-1)
