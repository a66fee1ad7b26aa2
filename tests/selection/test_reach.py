"""The optimizer's reach (selection.solvers.core.reach): before the pairs are known, select() ranks
the chunks as its core would (value less the LP's price of their tokens, the best providers of
required aspects and sources first) and the cosine compares only those a core may hold with every
other. The chunks beyond it are excluded with a true reason, the status is never "optimal", the
bound holds for the whole problem, and a problem the solver would solve whole is never cut."""

import logging

import numpy as np
import pytest

import ctxselect
from ctxselect.features import similarity
from ctxselect.selection.api import prepare
from ctxselect.selection.eligibility import selectable
from ctxselect.selection.solvers.core import LP_TAKEN_FACTOR, Reach, reach
from ctxselect.selection.value import chunk_values
from tests.selection.test_time_cut import instance, slow_cosine, with_chained

BEYOND = "not compared: beyond the optimizer's reach"


def test_select_compares_what_a_core_may_hold(monkeypatch, caplog):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)  # a cosine of any size is cut to the reach
    cands, reqs = instance(300, 8)
    full = ctxselect.select(cands, reqs)  # 267 selectable, at most exact_up_to: every one compared
    assert not any(why.startswith("not compared") for why in full.excluded.values())
    with caplog.at_level(logging.INFO, logger="ctxselect"):
        sel = ctxselect.select(cands, reqs, core_size=20, exact_up_to=0)
    assert not [r for r in caplog.records if r.levelno == logging.INFO]  # by design, not the time limit: not logged
    beyond = {i for i, why in sel.excluded.items() if why.startswith(BEYOND)}
    problem = prepare(cands, reqs)  # select()'s reach for it: Reach(core_size, exact_up_to, gate)
    priority, count = Reach(20, 0, True).of(problem.packed, problem.weights, None, True)(
        problem.signals.freshness, None)
    compared = with_chained(cands, np.argsort(-priority, kind="stable")[:count])
    assert beyond == {c["id"] for c in cands if c["scope"] == "public"} - compared
    assert set(sel.ids) <= compared and 20 < count < 267
    assert sel.status == "feasible" and "within the optimizer's reach" in sel.status_reason
    assert f"{len(beyond)} candidate(s) not compared" in sel.status_reason
    assert sel.bound >= full.objective - 1e-9  # a bound of the whole problem


def test_the_reach_ranks_as_the_core_does():
    cands, reqs = instance(120, 4)
    cands[5]["tokens"] = 10_000  # over the budget alone: last
    reqs = {**reqs, "required_aspects": ["rare"]}
    cands[7]["aspects"] = ["rare"]
    cands[7]["relevance"] = 0.0  # the only provider of a required aspect: first, however weak
    problem = prepare(cands, reqs)
    values = chunk_values(problem.packed, problem.signals.freshness, None, problem.weights, None)
    fits = selectable(problem.packed, exclude_outside_window=True)
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 0)
    assert np.isfinite(priority).all() and priority.shape == (120,)
    order = np.argsort(-priority, kind="stable")
    assert order[0] == 7
    assert set(order[-int((~fits).sum()):].tolist()) == set(np.flatnonzero(~fits).tolist())  # the unfit last
    assert fits[5] == False and not problem.packed.admissible[0]  # noqa: E712 (c0 is internal)
    # the others by value less one price λ >= 0 of a token, those of positive reduced value (no caps here: the LP
    # takes each) lifted by one constant; the count: core_size, the providers, and twice the ones the LP takes
    rest = np.array([k for k in order if fits[k] and k != 7])
    tokens = problem.packed.tokens
    non = rest[priority[rest] <= 0]
    price = (values.value[non] - priority[non]) / tokens[non]
    assert len(non) and price.min() >= 0 and np.ptp(price) < 1e-9
    reduced = values.value[rest] - price[0] * tokens[rest]
    assert (np.diff(reduced) <= 1e-12).all()  # ranked by reduced value
    taken = rest[priority[rest] > 0]
    assert (reduced[: len(taken)] > 0).all() and (reduced[len(taken):] <= 1e-12).all()
    assert np.ptp(priority[taken] - reduced[: len(taken)]) < 1e-9
    assert len(taken) > 0 and count == 10 + LP_TAKEN_FACTOR * len(taken) + 1  # and c7, the one provider, once
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 500)
    assert count >= int(fits.sum())  # a problem solved whole: every chunk it may hold


@pytest.mark.parametrize("cap", [1, 3, 10**6])
def test_the_count_takes_no_more_of_a_source_than_its_cap(cap):
    """Under a per-source cap the LP takes at most the cap of each source, and so does the count: the chunks
    of positive reduced value beyond a cap are not counted (with caps, most chunks have one)."""
    cands, reqs = instance(120, 4)
    problem = prepare(cands, {**reqs, "max_per_source": cap})
    values = chunk_values(problem.packed, problem.signals.freshness, None, problem.weights, None)
    fits = selectable(problem.packed, exclude_outside_window=True)
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 0)
    source = problem.packed.source
    positive = [int(((priority > 0) & fits & (source == s)).sum()) for s in range(len(problem.packed.source_names))]
    assert len(positive) == 4 and min(positive) >= 1 and max(positive) > 3
    assert count == 10 + LP_TAKEN_FACTOR * sum(min(p, cap) for p in positive)  # no required provider here
    assert (count < 10 + LP_TAKEN_FACTOR * sum(positive)) == (cap < max(positive))
    if cap == 1:
        assert count == 10 + LP_TAKEN_FACTOR * 4


def _sources_instance(rich: int, poor: int, caps):
    """Ten sources of strong chunks and ten of weak ones (reviewer's reproducer, scaled down): with a cap per
    source, the LP takes each source's best up to its cap."""
    rng = np.random.default_rng(0)
    cands = [{"id": f"r{s}_{k}", "source": f"rich{s}", "tokens": 50, "relevance": float(rng.uniform(0.7, 1.0)),
              "text": f"rich {s} {k}", "embedding": rng.standard_normal(16).tolist()}
             for s in range(10) for k in range(rich)]
    cands += [{"id": f"p{s}_{k}", "source": f"poor{s}", "tokens": 50, "relevance": float(rng.uniform(0.3, 0.6)),
               "text": f"poor {s} {k}", "embedding": rng.standard_normal(16).tolist()}
              for s in range(10) for k in range(poor)]
    return cands, {"token_budget": 20_000, "max_per_source": caps}


def test_the_reach_holds_what_the_lp_takes_of_every_source(monkeypatch):
    """The LP's chunks of each source rank right after the providers, so a source of strong chunks beyond its
    cap does not fill the reach (reviewer's reproducer: the weak sources' chunks were left uncompared, and the
    optimizer scored below greedy), and a source capped at 0 comes last and counts nothing."""
    cands, reqs = _sources_instance(60, 8, 5)
    problem = prepare(cands, reqs)
    values = chunk_values(problem.packed, problem.signals.freshness, None, problem.weights, None)
    fits = selectable(problem.packed, exclude_outside_window=True)
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 0)
    assert count == 10 + LP_TAKEN_FACTOR * 20 * 5  # 20 sources, each capped at 5
    top = {problem.packed.ids[k] for k in np.argsort(-priority, kind="stable")[:100].tolist()}
    for s in range(10):  # each source's 5 best first (every chunk has a positive reduced value here)
        for name in (f"rich{s}", f"poor{s}"):
            rows = [k for k in range(len(cands)) if cands[k]["source"] == name]
            best = sorted(rows, key=lambda k: -values.value[k])[:5]
            assert {cands[k]["id"] for k in best} <= top
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    opt = ctxselect.select(cands, reqs, core_size=10, exact_up_to=0)
    greedy = ctxselect.select(cands, reqs, method="greedy")
    assert opt.objective >= greedy.objective - 1e-9 and sum(i.startswith("p") for i in opt.ids) == 50

    banned = {**{f"rich{s}": 0 for s in range(10)}, **{f"poor{s}": 5 for s in range(10)}}
    cands, reqs = _sources_instance(60, 8, banned)
    problem = prepare(cands, reqs)
    values = chunk_values(problem.packed, problem.signals.freshness, None, problem.weights, None)
    fits = selectable(problem.packed, exclude_outside_window=True)
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 0)
    assert count == 10 + LP_TAKEN_FACTOR * 50
    order = np.argsort(-priority, kind="stable")
    assert all(cands[k]["source"].startswith("rich") for k in order[-600:].tolist())  # last: never selectable
    opt = ctxselect.select(cands, reqs, core_size=10, exact_up_to=0)
    assert opt.objective >= ctxselect.select(cands, reqs, method="greedy").objective - 1e-9 and len(opt.ids) == 50


def test_a_problem_solved_whole_is_never_cut(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    cands, reqs = instance(60, 4)
    sel = ctxselect.select(cands, reqs, core_size=5, exact_up_to=500)
    assert not any(why.startswith("not compared") for why in sel.excluded.values())
    assert sel.status == "optimal"


@pytest.mark.parametrize("method", ["greedy", "density", "mmr", "topk"])
def test_the_baselines_compare_every_pair(monkeypatch, method):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    cands, reqs = instance(60, 4)
    sel = ctxselect.select(cands, reqs, method=method, core_size=1, exact_up_to=0)
    assert not any(why.startswith("not compared") for why in sel.excluded.values())


def test_drift_losers_stay_in_the_bound_after_a_cut(monkeypatch):
    """A drift verdict rests on a cosine at the duplicate threshold, which can differ by a float32 ulp
    between the cut's row tiles and the full run's upper-triangle tiles: up to 5,000 candidates the
    bound after a cut counts the chunks drift alone dropped (reviewer's reproducer, seed-searched)."""
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    e = lambda k, tilt=0.0: [1.0 if j == k else 0.0 for j in range(6)][:5] + [tilt]  # noqa: E731
    rows = [("P", "Code 7781 is in force.", 1.0, e(0)), ("Q", "Code 9932 is in force.", 0.2, e(0, 0.1)),
            ("B", "Code 9932 is listed.", 0.85, e(1)), ("C", "Also 9932 noted.", 0.85, e(2)),
            ("F", "unrelated filler words", 0.5, e(3)), ("G", "more filler words", 0.4, e(4))]
    cands = [{"id": i, "text": t, "relevance": r, "tokens": 10, "doc_id": i.lower(), "embedding": v}
             for i, t, r, v in rows]
    problem = prepare(cands, {"token_budget": 100}, deadline=0.0, signal_options={"block_size": 1})
    p = 0
    assert problem.uncompared is not None and problem.signals.compared[p]  # P first: the most valuable
    assert not problem.eligible[p] and "near-duplicate" in problem.ineligible_reason[p]  # Q's side is corroborated
    assert problem.uncut_eligible[p]  # ... but drift alone: P may be eligible in the uncut problem
    assert (problem.uncut_eligible >= (problem.eligible | problem.uncompared)).all()


def test_required_providers_do_not_crowd_out_the_best_chunks(monkeypatch):
    """30 required aspects' providers come first in the reach, and on top of its count (reviewer's
    reproducer: they took every place, and the ten best chunks were left uncompared)."""
    rng = np.random.default_rng(0)
    aspects = 30
    cands = []
    for k in range(2_000):
        c = {"id": f"c{k}", "text": f"plain words {k}", "tokens": 50, "embedding": rng.standard_normal(8).tolist(),
             "relevance": 1.0 if k < 10 else 0.5 if k < 10 + 13 * aspects else 0.2}
        if 10 <= k < 10 + 13 * aspects:
            c["aspects"] = [f"a{(k - 10) % aspects}"]
        cands.append(c)
    reqs = {"token_budget": 600, "required_aspects": [f"a{k}" for k in range(aspects)]}
    whole = ctxselect.select(cands, reqs, exact_up_to=10**6)  # every pair compared, solved whole
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    sel = ctxselect.select(cands, reqs)
    assert any(why.startswith(BEYOND) for why in sel.excluded.values())
    assert not any(sel.excluded.get(f"c{k}", "").startswith(BEYOND) for k in range(10))
    assert sel.objective >= whole.objective - 1e-9 and sel.bound >= whole.objective - 1e-9


def test_a_time_cut_under_the_reach_is_called_one(monkeypatch, caplog):
    """The second review's reproducers: a deadline that stops the tiles is the time limit's cut even
    when the rows compared (a reach of half the rows or more, or rows chained by near-duplicates)
    reach the reach's count."""
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    rng = np.random.default_rng(1)
    cands = [{"id": f"c{k}", "text": f"words {chr(97 + k)}", "tokens": 10, "relevance": 0.1 + 0.04 * k,
              "embedding": rng.standard_normal(8).tolist()} for k in range(20)]
    p = prepare(cands, {"token_budget": 30}, deadline=0.0, signal_options={"block_size": 15}, reach=Reach(9, 0, True))
    assert p.signals.compared.sum() == 15 and p.signals.cut_by_time  # the reach asked for every pair
    cands = []
    for k in range(20):  # c1..c7 near-duplicates of c0, the most valuable
        e = np.zeros(20)
        e[0 if 1 <= k <= 7 else k] = 1.0
        if 1 <= k <= 7:
            e[k] = 0.05
        cands.append({"id": f"c{k}", "text": f"words {chr(97 + k)}", "tokens": 10,
                      "relevance": 1.0 if k == 0 else 0.1 + 0.01 * k, "embedding": e.tolist()})
    whole = prepare(cands, {"token_budget": 30}, signal_options={"block_size": 1}, reach=Reach(1, 0, True))
    p = prepare(cands, {"token_budget": 30}, deadline=0.0, signal_options={"block_size": 1}, reach=Reach(1, 0, True))
    assert p.signals.compared.sum() >= p.signals.reach and p.signals.cut_by_time and not whole.signals.cut_by_time
    assert p.signals.compared.sum() < whole.signals.compared.sum()
    assert all(why.startswith("not compared: the time limit") for why in p.ineligible_reason.values()
               if why.startswith("not compared"))
    slow_cosine(monkeypatch, 100.0)
    with caplog.at_level(logging.INFO, logger="ctxselect"):
        sel = ctxselect.select(cands, {"token_budget": 30}, time_limit=30, core_size=1, exact_up_to=0,
                               signal_options={"block_size": 1})
    assert "the time limit of 30 s cut the similarities" in sel.status_reason
    assert any("not compared" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


def test_reach_sizes_beyond_the_candidates_and_bad_fields(monkeypatch):
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    cands, reqs = instance(12, 4)
    sel = ctxselect.select(cands, reqs, core_size=10**12, exact_up_to=0)  # a reach past n: every pair
    assert not any(why.startswith("not compared") for why in sel.excluded.values())
    for bad, field in (((-5, 0, True), "core_size"), ((2.5, 0, True), "core_size"), (("a", 0, True), "core_size"),
                       ((1, "x", True), "exact_up_to"), ((1, None, True), "exact_up_to"), ((1, 0, "yes"), "enforce_gate")):
        with pytest.raises(ctxselect.InputError, match=field):
            Reach(*bad)
