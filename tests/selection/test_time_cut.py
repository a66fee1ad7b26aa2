"""select() when the time limit cuts the cosine (Problem.uncompared): only compared chunks are
selected, the others are excluded as "not compared", the status is never "optimal", the bound
holds for the uncut problem, and every hard constraint of the uncut problem holds (near-duplicate
clusters chained through uncompared chunks, versions, fields) under any drawn instance, cut point
and tile size (hypothesis). The cut is forced, not timed: similarity.UNCUT_WORK is 0 and the
cosine reads a clock that runs ``step`` seconds a reading, while select() itself has 30 s, so the
solver's own time never decides a result."""

import logging
import time
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.features import compute, similarity
from ctxselect.selection.api import prepare
from ctxselect.selection.solvers.core import Reach
from tests.features.test_cosine_deadline import components
from tests.strategies import selection_instances

NOT_COMPARED = "not compared: "  # by the time limit or beyond the optimizer's reach
LETTERS = "abcdefghijklmnopqrstuvwxyz"  # texts without numbers: no claim conflicts


def slow_cosine(monkeypatch, step):
    """The cosine's clock runs ``step`` seconds a reading (from now); its cut is never skipped."""
    readings = iter(time.perf_counter() + step * k for k in range(1, 10**6))
    monkeypatch.setattr(similarity, "time", types.SimpleNamespace(perf_counter=lambda: next(readings)))
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)


def with_embeddings(cands, seed, d=4):
    """Copies of ``cands`` with small integer embeddings, a third of them parallel copies."""
    rng = np.random.default_rng(seed)
    n = len(cands)
    emb = rng.integers(-3, 4, size=(n, d)).astype(float)
    emb[rng.integers(0, n, size=n // 3)] = emb[rng.integers(0, n, size=n // 3)] * 2
    return [{**c, "embedding": e.tolist()} for c, e in zip(cands, emb)], emb


def duplicate_components(emb, threshold=0.95):
    """Components of the pairs clearly at or above the duplicate threshold (float64 cosine; pairs
    within 1e-5 of it are left out, so each component lies within one of select()'s clusters)."""
    norms = np.linalg.norm(emb, axis=1)
    unit = emb / np.where(norms > 0, norms, 1.0)[:, None]
    sim = unit @ unit.T
    return components(len(emb), [(a, b) for a in range(len(emb)) for b in range(a + 1, len(emb))
                                 if norms[a] > 0 and norms[b] > 0 and sim[a, b] >= threshold + 1e-5])


@settings(max_examples=120, deadline=None)
@given(selection_instances(n_min=2, n_max=14), st.integers(0, 2**32 - 1), st.integers(1, 14),
       st.sampled_from([0.5, 4.0, 12.0, 100.0, 0.0]), st.sampled_from([(300, 500), (1, 0), (3, 0), (2, 5)]))
def test_a_cut_keeps_every_hard_constraint(instance, seed, block, step, core):
    """``step`` 0: a clock that stands still (only the reach cuts); ``core``: (core_size,
    exact_up_to), whose reach is what a core of that size may hold (the default: every chunk here)."""
    cands, reqs, w = instance
    cands, emb = with_embeddings(cands, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        slow_cosine(monkeypatch, step)
        sel = ctxselect.select(cands, reqs, weights=w, time_limit=30, signal_options={"block_size": block},
                               core_size=core[0], exact_up_to=core[1])
    index = {c["id"]: k for k, c in enumerate(cands)}
    chosen = [index[i] for i in sel.ids]
    assert len(chosen) == len(set(chosen))
    assert sum(cands[k]["tokens"] for k in chosen) <= reqs["token_budget"]
    assert all(cands[k].get("scope") in reqs["allowed_scopes"] for k in chosen)
    assert set(sel.excluded) == set(index) - set(sel.ids)
    if reqs["conflict_fields"]["window"] >= 1.0:  # a hard field: the selection agrees on it
        assert len({cands[k]["fields"]["window"] for k in chosen if "fields" in cands[k]}) <= 1
    versions = {cands[k]["version"] for k in chosen if cands[k].get("doc_id") == "doc"}
    assert len(versions) <= 1
    label = duplicate_components(emb)  # one chunk a cluster, chains through uncompared chunks too
    assert len({label[k] for k in chosen}) == len(chosen)
    cut = [i for i, why in sel.excluded.items() if why.startswith(NOT_COMPARED)]
    if sel.bound is not None:
        assert sel.bound >= sel.objective - 1e-9
    if cut:
        assert sel.status != "optimal" and f"{len(cut)} candidate(s) not compared" in sel.status_reason
        whole = ctxselect.select(cands, reqs, weights=w, time_limit=30, signal_options={"block_size": block})
        proven = whole.status == "optimal" or "(optimal: proven optimal)" in whole.status_reason
        lowered = "lowered freshness floor" in sel.status_reason + whole.status_reason
        if proven and sel.relaxed == whole.relaxed and "sources" not in sel.relaxed and not lowered:  # the same
            # constraints (a best-effort source tier's target, and a lowered freshness floor, are what the selectable
            # chunks can reach): the cut's selections are the uncut's
            assert sel.objective <= whole.objective + 1e-9
        if proven and sel.bound is not None:  # a bound of the uncut problem: above its optimum (a rare
            # whole run whose solver's selection broke a condition in exact arithmetic is not proven)
            assert sel.bound >= whole.objective - 1e-9


def with_chained(cands, rows):
    """The ids of the chunks ``rows`` and of those chained to them by near-duplicate embeddings
    (compared with every chunk too, :func:`ctxselect.features.similarity.cosine_pairs_until`)."""
    label = duplicate_components(np.array([c["embedding"] for c in cands]), threshold=0.95 - 2e-5)
    held = {label[k] for k in np.asarray(rows).tolist()}
    return {c["id"] for k, c in enumerate(cands) if label[k] in held}


def instance(n=300, d=8):
    rng = np.random.default_rng(5)
    cands = [{"id": f"c{k}", "source": f"s{k % 4}", "tokens": int(rng.integers(20, 120)),
              "relevance": float(rng.uniform(0, 1)), "text": f"chunk {LETTERS[k % 26]}{LETTERS[k // 26]} of the corpus",
              "scope": "public" if k % 9 else "internal"} for k in range(n)]
    cands, _ = with_embeddings(cands, 11, d)
    return cands, {"token_budget": 600, "allowed_scopes": ["public"]}


def test_the_cut_selection_is_the_compared_chunks_and_says_so(monkeypatch):
    cands, reqs = instance()
    full = ctxselect.select(cands, reqs, time_limit=30)
    assert not any(why.startswith(NOT_COMPARED) for why in full.excluded.values())
    slow_cosine(monkeypatch, 100.0)  # one tile, then the deadline has passed
    cut = ctxselect.select(cands, reqs, time_limit=30, signal_options={"block_size": 40})
    admissible = [c for c in cands if c["scope"] == "public"]  # all within the budget; equally fresh
    problem = prepare(cands, reqs)  # the tile's rows: the 40 the optimizer's reach ranks first
    priority, count = Reach(300, 500, True).of(problem.packed, problem.weights, None, True)(
        problem.signals.freshness, None)
    assert count == len(cands)  # a problem solved whole: the reach holds every chunk (the deadline cut here)
    compared = with_chained(cands, np.argsort(-priority, kind="stable")[:40])
    assert len(compared) > 40 and set(cut.ids) <= compared
    left = {i for i, why in cut.excluded.items() if why.startswith(NOT_COMPARED)}
    assert left == {c["id"] for c in admissible} - compared
    assert all(cut.excluded[c["id"]].startswith("inadmissible") for c in cands if c["scope"] != "public")
    assert cut.status == "feasible" and f"{len(left)} candidate(s) not compared" in cut.status_reason
    assert cut.bound >= full.objective - 1e-9  # a bound of the whole problem, not of the compared chunks
    assert cut.report.passed == ctxselect.inspect(cut.chunks, reqs).passed


def test_the_deadline_is_select_s_own(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    cands, reqs = instance(20, 4)
    with pytest.raises(ctxselect.InputError, match="signal_options.deadline.*unknown"):
        ctxselect.select(cands, reqs, signal_options={"deadline": 0.0})
    baseline = ctxselect.select(cands, reqs, method="greedy", time_limit=1e-6, signal_options={"block_size": 2})
    assert not any(why.startswith(NOT_COMPARED) for why in baseline.excluded.values())  # baselines: no limit


def test_a_cut_call_is_logged(monkeypatch, caplog):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    cands, reqs = instance(60, 4)
    with caplog.at_level(logging.INFO, logger="ctxselect"):
        ctxselect.select(cands, reqs, time_limit=1e-6, signal_options={"block_size": 10})
    infos = [r.getMessage() for r in caplog.records if r.name == "ctxselect" and r.levelno == logging.INFO]
    assert len(infos) == 1 and "candidate(s) not compared" in infos[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ctxselect"):
        ctxselect.select(cands, reqs, time_limit=30)
    assert not any("not compared" in r.getMessage() for r in caplog.records)


def cut_and_whole(monkeypatch, cands, reqs, block=2):
    whole = ctxselect.select(cands, reqs, time_limit=30)
    slow_cosine(monkeypatch, 100.0)
    return ctxselect.select(cands, reqs, time_limit=30, signal_options={"block_size": block}), whole


def test_uncompared_chunks_still_count_as_corroboration_and_the_bound_holds(monkeypatch):
    # X wins its conflict with Y only with Z1 and Z2's support; Z1, Z2 are not compared
    cands = [
        {"id": "X", "source": "a", "tokens": 10, "relevance": 0.55, "text": "The bridge over the river is 120 metres long.",
         "embedding": [1, 0, 0, 0]},
        {"id": "Y", "source": "b", "tokens": 10, "relevance": 0.50, "text": "The bridge over the river is 180 metres long.",
         "embedding": [1, 0.001, 0, 0]},
        {"id": "Z1", "source": "c", "tokens": 10, "relevance": 0.45, "text": "Surveyors measured 120 metres in total.",
         "embedding": [0, 1, 0, 0]},
        {"id": "Z2", "source": "d", "tokens": 10, "relevance": 0.44, "text": "A record of 120 metres was noted.",
         "embedding": [0, 0, 1, 0]},
    ]
    cut, whole = cut_and_whole(monkeypatch, cands, {"token_budget": 12})
    assert whole.ids == ["X"] and cut.ids == ["X"]
    assert cut.excluded["Y"] == whole.excluded["Y"]  # the same verdict, counting Z1 and Z2
    assert cut.excluded["Z1"].startswith(NOT_COMPARED) and cut.status == "feasible"
    assert cut.bound >= whole.objective - 1e-9


def test_a_newer_version_not_compared_still_supersedes_the_older(monkeypatch):
    cands = [
        {"id": "old", "source": "a", "tokens": 10, "relevance": 0.9, "text": "Policy text, version one.",
         "doc_id": "policy", "version": 1, "embedding": [1, 0, 0, 0]},
        {"id": "other", "source": "b", "tokens": 10, "relevance": 0.5, "text": "Something else entirely.",
         "embedding": [0, 0, 1, 0]},
        {"id": "new", "source": "a", "tokens": 10, "relevance": 0.3, "text": "Policy text, version two.",
         "doc_id": "policy", "version": 2, "embedding": [0, 1, 0, 0]},
        {"id": "more", "source": "c", "tokens": 10, "relevance": 0.2, "text": "A fourth chunk.", "embedding": [0, 0, 0, 1]},
    ]
    cut, whole = cut_and_whole(monkeypatch, cands, {"token_budget": 40})
    assert "old" not in cut.ids and cut.excluded["old"] == whole.excluded["old"]
    assert cut.excluded["new"].startswith(NOT_COMPARED)


def test_a_duplicate_chain_through_uncompared_chunks_keeps_one_cluster(monkeypatch):
    angle = {"A": 0, "B": 16, "C": 32, "D": 48}  # A~B, B~C, C~D at cosine 0.961; A and D at 0.67
    relevance = {"A": 0.9, "B": 0.2, "C": 0.1, "D": 0.8}
    cands = [{"id": k, "source": "s", "tokens": 10, "relevance": relevance[k], "text": f"text {k} " * 3,
              "embedding": [float(np.cos(np.radians(a))), float(np.sin(np.radians(a))), 0.0]} for k, a in angle.items()]
    cut, whole = cut_and_whole(monkeypatch, cands, {"token_budget": 100})
    assert whole.ids == ["A"] and cut.ids == ["A"]  # D is in A's cluster through B and C
    for k in "BCD":  # chained to A, so compared with every chunk: excluded for what they are, as in the uncut run
        assert cut.excluded[k] == whole.excluded[k] and not cut.excluded[k].startswith(NOT_COMPARED)


def test_a_relaxed_gate_after_a_cut_says_the_uncompared_may_hold_what_is_missing(monkeypatch):
    cands = [{"id": "A", "source": "a", "tokens": 10, "relevance": 0.9, "text": "About alpha.", "aspects": ["alpha"],
              "embedding": [1, 0, 0]},
             {"id": "B", "source": "a", "tokens": 10, "relevance": 0.8, "text": "More on alpha.", "aspects": ["alpha"],
              "embedding": [0, 1, 0]},
             {"id": "C", "source": "b", "tokens": 10, "relevance": 0.1, "text": "About beta.", "aspects": ["beta"],
              "embedding": [0, 0, 1]},
             {"id": "D", "source": "b", "tokens": 10, "relevance": 0.05, "text": "Nothing.", "embedding": [1, 1, 0]}]
    reqs = {"token_budget": 40, "required_aspects": ["alpha", "beta"], "min_coverage": 1.0}
    cut, whole = cut_and_whole(monkeypatch, cands, reqs)
    assert whole.relaxed == [] and set(whole.ids) >= {"A", "C"}
    if "C" in cut.ids:  # compared as a required aspect's provider
        assert cut.relaxed == []
    else:
        assert cut.relaxed == ["gate"] and any("not compared may hold what is missing (a longer time_limit" in x
                                               for x in cut.infeasible)


def test_a_pair_budget_cut_is_said_and_never_optimal(monkeypatch):
    """Every embedding equal (a constant vector, as a failing embedding service returns): every pair is a pair.
    The cosine's pair budget stops it; no chunk of that cluster is selectable, each says why, the status is
    never "optimal" and its reason names the budget (before: O(n²) pairs, 11 s and 2 GB at 5,000 chunks)."""
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    monkeypatch.setattr(compute, "PAIR_FLOOR", 0)
    monkeypatch.setattr(compute, "PAIRS_PER_ROW", 2)
    chunks = [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5, "embedding": [1.0, 2.0, 3.0],
               "text": f"chunk {LETTERS[k % 26]}{LETTERS[k // 26]} of the corpus"} for k in range(60)]
    sel = ctxselect.select(chunks, {"token_budget": 50, "min_coverage": 0}, time_limit=30,
                           signal_options={"block_size": 8})
    assert sel.status != "optimal" and "the similarities stopped at their pair budget" in sel.status_reason
    assert not sel.ids and sel.status == "empty", (sel.status, sel.status_reason)
    assert set(sel.excluded.values()) == {"not compared: the similarities stopped at their pair budget with 0 of 60 "
                                          "candidates compared (embeddings so alike that nearly every pair is one)"}
