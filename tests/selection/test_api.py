"""Hard constraints are invariants of select(), under any weights and inputs (hypothesis)."""

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.naive.select import all_subsets, naive_feasible
from tests.strategies import random_instance

import ctxselect
from ctxselect.selection.api import prepare

weights = st.fixed_dictionaries({
    "relevance": st.floats(0, 5), "coverage": st.floats(0, 5), "redundancy": st.floats(0, 5),
    "contradiction": st.floats(0, 5), "tokens": st.floats(0, 5)})
methods = st.sampled_from(["greedy", "topk", "density", "mmr", "optimal"])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**6), weights, methods, st.floats(0.3, 1.0), st.booleans())
def test_hard_constraints_always_hold(seed, w, method, hard_severity, enforce_gate):
    cands, reqs, _ = random_instance(seed)
    sel = ctxselect.select(cands, reqs, method=method, weights=w, enforce_gate=enforce_gate,
                           hard_conflict_severity=hard_severity)
    problem = prepare(cands, reqs, weights=w, hard_conflict_severity=hard_severity)
    packed = problem.packed
    mask = packed.mask_of(sel.ids)
    assert len(sel.ids) == len(set(sel.ids))
    assert int(packed.tokens[mask].sum()) <= packed.budget
    assert not (mask & ~packed.admissible).any()
    con = problem.signals.contradictions
    for i, j, sev, kind in zip(con.i, con.j, con.weight, con.kind):
        if sev >= hard_severity or kind & ctxselect.ConflictKind.VERSION:
            assert not (mask[i] and mask[j])
    for group in problem.groups:
        assert mask[group].sum() <= 1
    assert set(sel.excluded) == set(packed.ids) - set(sel.ids)
    assert all(isinstance(r, str) and r for r in sel.excluded.values())


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**6), weights)
def test_source_minimums_hold_whenever_possible(seed, w):
    cands, reqs, _ = random_instance(seed)
    sel = ctxselect.select(cands, reqs, weights=w, enforce_gate=False)
    problem = prepare(cands, reqs, weights=w)
    possible = naive_feasible(problem, all_subsets(problem.n), gate_on=False, sources_on=True).any()
    counts = {}
    for cid in sel.ids:
        src = problem.packed.candidates[problem.packed.ids.index(cid)].source
        counts[src] = counts.get(src, 0) + 1
    met = all(counts.get(s, 0) >= m for s, m in problem.packed.requirements.required_sources.items())
    assert met == possible
    assert (sel.relaxed == []) == possible


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), weights, methods)
def test_identical_input_gives_identical_output(seed, w, method):
    cands, reqs, _ = random_instance(seed)
    a = ctxselect.select(cands, reqs, method=method, weights=w)
    b = ctxselect.select(cands, reqs, method=method, weights=w)
    assert (a.ids, a.objective, a.status, a.excluded) == (b.ids, b.objective, b.status, b.excluded)


def test_time_limit_is_honoured():
    """A tiny limit on a large instance: the optimizer stops and still returns a valid selection."""
    rng = np.random.default_rng(0)
    n = 3000
    cands = [{"id": str(k), "source": f"s{k % 7}", "tokens": int(rng.integers(20, 300)),
              "relevance": float(rng.random()), "aspects": [f"a{int(x)}" for x in rng.integers(0, 40, 2)],
              "fields": {"f": int(rng.integers(0, 50))} if k % 3 == 0 else {}} for k in range(n)]
    reqs = {"token_budget": 4000, "required_aspects": [f"a{k}" for k in range(40)],
            "conflict_fields": {"f": 0.5}, "min_coverage": 0.0, "min_freshness": 0.0}
    limit = 0.05
    started = time.perf_counter()
    sel = ctxselect.select(cands, reqs, time_limit=limit)
    elapsed = time.perf_counter() - started
    solver_time = sel.timings["baselines"] + sel.timings["model"] + sel.timings["solve"]
    assert solver_time <= limit + 0.25, sel.timings  # CP-SAT checks its clock between steps
    assert sel.status in ("feasible", "fallback", "optimal")
    assert sum(c["tokens"] for c in cands if c["id"] in set(sel.ids)) <= 4000
    assert elapsed < 30
