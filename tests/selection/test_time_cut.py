"""select() when the time limit cuts the cosine (Problem.uncompared): only compared chunks are
selected, the others are excluded as "not compared", the status is never "optimal", the bound
still holds for the whole problem, and every hard constraint holds under any drawn instance, cut
point and tile size (hypothesis). The cut is forced: similarity.UNCUT_WORK is 0, so even the
microseconds these small instances take are cut at a passed deadline."""

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.features import similarity
from tests.strategies import selection_instances

NOT_COMPARED = "not compared: the time limit"


def with_embeddings(cands, seed, d=4):
    """Copies of ``cands`` with small integer embeddings, a third of them parallel copies."""
    rng = np.random.default_rng(seed)
    n = len(cands)
    emb = rng.integers(-3, 4, size=(n, d)).astype(float)
    emb[rng.integers(0, n, size=n // 3)] = emb[rng.integers(0, n, size=n // 3)] * 2
    return [{**c, "embedding": e.tolist()} for c, e in zip(cands, emb)], emb


def parallel(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return na > 0 and nb > 0 and abs(float(a @ b) / (na * nb) - 1.0) < 1e-9


@settings(max_examples=80, deadline=None)
@given(selection_instances(n_min=2, n_max=14), st.integers(0, 2**32 - 1), st.integers(1, 14),
       st.sampled_from([1e-6, 1e-3, 30.0]))
def test_a_cut_keeps_every_hard_constraint(instance, seed, block, time_limit):
    cands, reqs, w = instance
    cands, emb = with_embeddings(cands, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
        sel = ctxselect.select(cands, reqs, weights=w, time_limit=time_limit, signal_options={"block_size": block})
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
    assert not any(parallel(emb[a], emb[b]) for a in chosen for b in chosen if a < b)  # near-duplicates
    cut = [i for i, why in sel.excluded.items() if why.startswith(NOT_COMPARED)]
    if sel.bound is not None:
        assert sel.bound >= sel.objective - 1e-9
    if cut:
        assert sel.status != "optimal" and f"{len(cut)} candidates were not compared" in sel.status_reason
        if sel.bound is not None:  # a bound of the whole problem: above its optimum
            whole = ctxselect.select(cands, reqs, weights=w, time_limit=30, signal_options={"block_size": block})
            assert whole.status == "optimal" and sel.bound >= whole.objective - 1e-9


def instance(n=300, d=8):
    rng = np.random.default_rng(5)
    cands = [{"id": f"c{k}", "source": f"s{k % 4}", "tokens": int(rng.integers(20, 120)),
              "relevance": float(rng.uniform(0, 1)), "text": f"chunk {k:x} of the corpus",
              "scope": "public" if k % 9 else "internal"} for k in range(n)]
    cands, _ = with_embeddings(cands, 11, d)
    return cands, {"token_budget": 600, "allowed_scopes": ["public"]}


def test_the_cut_selection_is_the_compared_chunks_and_says_so(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    cands, reqs = instance()
    full = ctxselect.select(cands, reqs, time_limit=30)
    assert not any(why.startswith(NOT_COMPARED) for why in full.excluded.values())
    cut = ctxselect.select(cands, reqs, time_limit=1e-6, signal_options={"block_size": 40})
    admissible = [c for c in cands if c["scope"] == "public"]  # all within the budget; equally fresh
    compared = {c["id"] for c in sorted(admissible, key=lambda c: -c["relevance"])[:40]}
    assert set(cut.ids) <= compared
    left = {i for i, why in cut.excluded.items() if why.startswith(NOT_COMPARED)}
    assert left == {c["id"] for c in admissible} - compared
    assert all(cut.excluded[c["id"]].startswith("inadmissible") for c in cands if c["scope"] != "public")
    assert cut.status == "feasible" and f"{len(left)} candidates were not compared" in cut.status_reason
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
    assert len(infos) == 1 and "candidates were not compared" in infos[0]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ctxselect"):
        ctxselect.select(cands, reqs, time_limit=30)
    assert not any("not compared" in r.getMessage() for r in caplog.records)
