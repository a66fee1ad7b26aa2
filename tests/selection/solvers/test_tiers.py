"""The optimizer's run over the tiers: the time limit bounds every CP-SAT call, and a fallback says
which tiers it breaks."""

import numpy as np

import ctxselect


def test_the_time_limit_bounds_every_solver_call(monkeypatch):
    """A tiny limit on a large instance: every CP-SAT call gets at most the limit as its own time
    budget (``max_time_in_seconds``), and whatever the status, the selection is valid and a
    status short of optimal names the limit. No wall-clock assertion: how long this machine takes
    is not what the limit promises (an ``elapsed < 30`` check could only fail on a slow machine)."""
    from ortools.sat.python import cp_model

    budgets = []
    solve = cp_model.CpSolver.solve

    def recording_solve(self, *args, **kwargs):
        budgets.append(self.parameters.max_time_in_seconds)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(cp_model.CpSolver, "solve", recording_solve)
    rng = np.random.default_rng(0)
    n = 3000
    cands = [{"id": str(k), "source": f"s{k % 7}", "tokens": int(rng.integers(20, 300)),
              "relevance": float(rng.random()), "aspects": [f"a{int(x)}" for x in rng.integers(0, 40, 2)],
              "fields": {"f": int(rng.integers(0, 50))} if k % 3 == 0 else {}} for k in range(n)]
    reqs = {"token_budget": 4000, "required_aspects": [f"a{k}" for k in range(40)],
            "conflict_fields": {"f": 0.5}, "min_coverage": 0.0, "min_freshness": 0.0}
    limit = 0.05
    sel = ctxselect.select(cands, reqs, time_limit=limit)
    assert budgets and all(0 < b <= limit for b in budgets), budgets
    # 3,000 eligible candidates (more than exact_up_to): CP-SAT solves a core, never proves optimality
    assert sel.status in ("feasible", "fallback"), sel.status
    if sel.status == "fallback":  # the limit ran out before CP-SAT found a selection
        assert sel.status_reason.startswith(f"time limit of {limit:g} s reached before CP-SAT found a selection")
        assert sel.bound is None
    else:
        assert sel.status_reason.startswith("optimal on a core of 300 candidates"), sel.status_reason
        assert sel.bound >= sel.objective
    chosen = set(sel.ids)
    assert len(chosen) == len(sel.ids)
    assert sum(c["tokens"] for c in cands if c["id"] in chosen) <= 4000
    assert set(sel.excluded) == {c["id"] for c in cands} - chosen


def test_fallback_says_which_tiers_it_breaks(monkeypatch):
    """When CP-SAT finds nothing in time, the baseline returned names every tier it misses."""
    import math

    import ctxselect.selection.solvers.tiers as selection_module
    from ctxselect.selection.solvers.cpsat import OptimalResult

    monkeypatch.setattr(selection_module, "solve_optimal",
                        lambda problem, **kw: OptimalResult(None, "unknown", math.inf, -math.inf, True, {}))
    chunks = [{"id": f"p{k}", "source": "policy", "tokens": 30, "relevance": 0.9} for k in range(3)]
    chunks.append({"id": "st", "source": "status", "tokens": 30, "relevance": 0.1})
    sel = ctxselect.select(chunks, {"token_budget": 90, "required_sources": ["status"], "min_coverage": 0})
    assert sel.status == "fallback"
    assert "sources" in sel.relaxed and "st" not in sel.ids
    assert "does not meet" in sel.status_reason and "sources" in sel.status_reason
