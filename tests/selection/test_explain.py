"""exclusion_reasons (every chunk's reason decided at once) against its one-chunk-at-a-time twin
(tests/naive/explain.py): the same reasons, in the same order, for the baselines' selections,
random and empty selections, with and without the gate and its ceiling."""

import numpy as np
import pytest

from ctxselect.evaluate.generate import generate_queries
from ctxselect.selection.api import prepare
from ctxselect.selection.explain import exclusion_reasons
from ctxselect.selection.solvers import baselines
from tests.naive.explain import naive_exclusion_reasons
from tests.strategies import random_instance


def assert_same_reasons(problem, rng):
    selections = [getattr(baselines, name)(problem) for name in ("greedy", "topk", "density", "mmr")]
    selections += [(rng.random(problem.n) < 0.3, {}), (np.zeros(problem.n, dtype=bool), {})]
    for mask, notes in selections:
        for gate in (True, False):
            for ceiling in (None, True, False):
                got = exclusion_reasons(problem, mask, enforce_gate=gate, notes=notes, ceiling=ceiling)
                want = naive_exclusion_reasons(problem, mask, enforce_gate=gate, notes=notes, ceiling=ceiling)
                assert list(got.items()) == list(want.items())


@pytest.mark.parametrize("seed", range(30))
def test_the_reasons_are_the_twins_on_random_instances(seed):
    cands, reqs, weights = random_instance(seed, 1, 30)
    rng = np.random.default_rng(seed)
    for severity in (1.0, 0.4):
        problem = prepare(cands, reqs, weights=weights, hard_conflict_severity=severity,
                          on_unresolved=("drop_both", "keep_both", "keep_stronger")[seed % 3])
        assert_same_reasons(problem, rng)


def test_the_reasons_are_the_twins_on_a_generated_query_with_a_question():
    query = generate_queries(queries=1, candidates=300, seed=5, gold_share=0.1)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    assert_same_reasons(problem, np.random.default_rng(5))


def test_every_kind_of_reason_is_given_in_the_docstrings_order():
    """One chunk per reason: c over the budget alone (ineligible), d a near-duplicate of the
    selected a, e noted by the selector, f past the source cap, g too big for what is left."""
    text = "the same words in the same order for both chunks here"
    cands = [{"id": "a", "source": "s", "tokens": 50, "relevance": 0.9, "text": text},
             {"id": "b", "source": "t", "tokens": 10, "relevance": 0.5},
             {"id": "c", "source": "t", "tokens": 500, "relevance": 0.5},
             {"id": "d", "source": "u", "tokens": 10, "relevance": 0.9, "text": text},
             {"id": "e", "source": "u", "tokens": 10, "relevance": 0.1},
             {"id": "f", "source": "s", "tokens": 10, "relevance": 0.1},
             {"id": "g", "source": "u", "tokens": 60, "relevance": 0.1}]
    problem = prepare(cands, {"token_budget": 100, "max_per_source": 1})
    mask = problem.packed.mask_of(["a", "b"])
    got = exclusion_reasons(problem, mask, enforce_gate=False, notes={4: "a note"})
    assert got["c"].startswith("over budget")
    assert got["d"] == "near-duplicate of `a`"
    assert got["e"] == "a note"
    assert got["f"].startswith("source cap: `s` already has 1")
    assert got["g"] == "does not fit: 60 tokens, 40 left in the budget"
    assert list(got.items()) == list(naive_exclusion_reasons(problem, mask, enforce_gate=False,
                                                             notes={4: "a note"}).items())
