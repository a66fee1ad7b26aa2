"""The checks of a selection: :func:`satisfies`, the short-circuiting check the solver's tiers use,
against the full list :func:`violations` gives, on random instances and random selections (fixed
seeds), every tier and ceiling."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ctxselect.selection import constraints
from ctxselect.selection.api import prepare
from ctxselect.selection.constraints import hard_violations, satisfies, violations
from ctxselect.selection.solvers.registry import BASELINES, Method
from tests.strategies import random_instance

CHECKS = list(itertools.product((True, False), (True, False), (None, True, False)))


def _masks(problem, rng, count: int):
    """Random selections of every density, the empty one, everything and the baselines' picks."""
    yield np.zeros(problem.n, dtype=bool)
    yield np.ones(problem.n, dtype=bool)
    for method in (Method.GREEDY, Method.DENSITY):
        yield BASELINES[method](problem)[0]
    for _ in range(count):
        yield rng.random(problem.n) < rng.uniform(0.05, 0.9)


@pytest.mark.parametrize("seed", range(40))
def test_satisfies_is_an_empty_violations_list(seed):
    cands, reqs, weights = random_instance(seed, n_max=14)
    problem = prepare(cands, reqs, weights=weights)
    rng = np.random.default_rng(seed)
    seen = set()
    for mask in _masks(problem, rng, 25):
        for gate_on, sources_on, ceiling in CHECKS:
            found = violations(problem, mask, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=ceiling)
            constraints._CONFLICTS.clear()  # the check computes its own conflicts
            ok = satisfies(problem, mask, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=ceiling)
            assert ok == (not found), (seed, mask.nonzero(), gate_on, sources_on, ceiling, found)
            seen.add(ok)
    assert seen or problem.n == 0


def test_satisfies_on_generated_queries_both_ways():
    """Selections of 200 generated candidates that pass and that fail, at the first check or the
    gate's last."""
    from ctxselect.evaluate.generate import generate_queries

    outcomes = set()
    for seed in range(3):
        query = generate_queries(queries=1, candidates=200, seed=seed, gold_share=0.15)[0]
        problem = prepare(query.candidates, query.requirements, query.query)
        rng = np.random.default_rng(seed)
        masks = list(_masks(problem, rng, 10))
        masks += [m & problem.eligible for m in masks]
        for mask in masks:
            for gate_on, sources_on, ceiling in CHECKS:
                found = violations(problem, mask, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=ceiling)
                ok = satisfies(problem, mask, enforce_gate=gate_on, enforce_sources=sources_on, ceiling=ceiling)
                assert ok == (not found)
                outcomes.add(ok)
    assert outcomes == {True, False}


def test_hard_violations_keep_their_order():
    cands, reqs, weights = random_instance(3, n_max=14)
    problem = prepare(cands, reqs, weights=weights)
    everything = np.ones(problem.n, dtype=bool)
    found = hard_violations(problem, everything, ceiling=True)
    order = ["selects an ineligible chunk", "exceeds the token budget", "max_token_utilization",
             "selects both chunks of a hard conflict", "selects two near-duplicates",
             "exceeds a per-source maximum", "exceeds the maximum chunk count"]
    assert found == sorted(found, key=order.index)
    assert found
