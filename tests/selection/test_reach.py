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
from ctxselect.selection.solvers.core import LP_TAKEN_FACTOR, reach
from ctxselect.selection.value import chunk_values
from tests.selection.test_time_cut import instance

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
    problem = prepare(cands, reqs)
    values = chunk_values(problem.packed, problem.signals.freshness, None, problem.weights, None)
    fits = selectable(problem.packed, exclude_outside_window=True)
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 20, 20, 0)
    compared = {cands[k]["id"] for k in np.argsort(-priority, kind="stable")[:count]}
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
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 300, 0)
    assert np.isfinite(priority).all() and priority.shape == (120,)
    order = np.argsort(-priority, kind="stable")
    assert order[0] == 7
    assert set(order[-int((~fits).sum()):].tolist()) == set(np.flatnonzero(~fits).tolist())  # the unfit last
    assert fits[5] == False and not problem.packed.admissible[0]  # noqa: E712 (c0 is internal)
    # the others by value less one price λ >= 0 of a token; the count: the least plus twice those of positive reduced value
    rest = np.array([k for k in order if fits[k] and k != 7])
    price = (values.value[rest] - priority[rest]) / problem.packed.tokens[rest]
    assert price.min() >= 0 and np.ptp(price) < 1e-9
    taken = int((priority[rest] > 0).sum() + (values.value[7] - price[0] * problem.packed.tokens[7] > 0))
    assert taken > 0 and count == 10 + LP_TAKEN_FACTOR * taken
    priority, count = reach(problem.packed, values, fits, problem.capacity(True), 10, 300, 500)
    assert count >= int(fits.sum())  # a problem solved whole: every chunk it may hold


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
