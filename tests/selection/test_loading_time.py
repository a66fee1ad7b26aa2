"""Loading is not counted against ``time_limit``: the seconds a first call spends loading kernels
its input needs (``load_for``) or importing OR-Tools for its first CP-SAT solve
(``cpsat.solver_loaded``) move the call's deadlines and come back as ``timings["load"]``. Forced,
not timed: the loaders here sleep 0.3 s against a 0.05 s limit, so a deadline that did not move
would leave the solver nothing (a late start, said in the reason) or CP-SAT 1 ms."""

import time

import ctxselect
from ctxselect.evaluate.generate import generate_queries
from ctxselect.selection import api
from ctxselect.selection.solvers import cpsat, exact

SLEEP = 0.3


def _query():
    return generate_queries(queries=1, candidates=40, seed=40, embedding_dim=0)[0]


def test_the_inputs_loading_moves_the_deadline(monkeypatch):
    ctxselect.warm_up()  # everything loaded: the only loading is the one below

    def slow_load(packed, similarity="auto", timings=None):
        time.sleep(SLEEP)
        timings["load"] = SLEEP
        return SLEEP

    monkeypatch.setattr(api, "load_for", slow_load)
    q = _query()
    sel = ctxselect.select(q.candidates, q.requirements, q.query, time_limit=0.05)
    assert sel.timings["load"] == SLEEP and sel.timings["total"] > SLEEP
    assert sel.status == "optimal" and "before the solver" not in sel.status_reason


def test_or_tools_first_import_moves_cp_sats_time(monkeypatch):
    """A query the branch and bound leaves to CP-SAT (its node limit), OR-Tools' import slowed:
    CP-SAT still gets the time left of its limit, and proves the optimum."""
    ctxselect.warm_up()
    calls = []

    def slow_import():
        calls.append(1)
        time.sleep(SLEEP)
        return SLEEP

    monkeypatch.setattr(cpsat, "solver_loaded", slow_import)
    monkeypatch.setattr(cpsat, "NODE_LIMIT", 1)  # the branch and bound stops at once: CP-SAT solves
    monkeypatch.setattr(exact, "NODE_LIMIT", 1)
    q = _query()
    sel = ctxselect.select(q.candidates, q.requirements, q.query, time_limit=0.05)
    assert calls and sel.timings["load"] >= SLEEP and sel.timings["model"] < SLEEP
    assert sel.status == "optimal", sel.status_reason
