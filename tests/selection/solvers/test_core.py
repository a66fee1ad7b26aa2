"""The core: above ``exact_up_to`` eligible candidates CP-SAT solves a core, and the bound it
reports still covers the whole problem's optimum."""

import numpy as np
import pytest

import ctxselect


def test_core_above_exact_limit_reports_feasible_with_a_valid_bound():
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


def naive_first(key, k):
    """The twin of ``core._first``: the first ``k`` positions of a stable sort."""
    return set(sorted(range(len(key)), key=lambda i: (key[i], i))[: max(k, 0)])


@pytest.mark.parametrize("seed", range(4))
def test_the_core_picks_are_a_stable_sorts_first_k(seed):
    """The core's top-k by partition equals a stable sort's first k, ties to the lower position
    (fixed, random, all-equal and edge sizes)."""
    from ctxselect.selection.solvers.core import _first

    rng = np.random.default_rng(seed)
    cases = [(np.array([]), 3), (np.array([1.0]), 0), (np.array([2.0, 1.0, 1.0, 0.0]), 2),
             (np.zeros(9), 4), (np.array([-0.0, 0.0, -1.0]), 2), (np.arange(5.0), 9)]
    cases += [(rng.integers(0, 4, int(n)).astype(float) * rng.choice([1.0, -1.0]), int(rng.integers(-1, 40)))
              for n in rng.integers(0, 40, 300)]
    for key, k in cases:
        assert set(_first(key, k).tolist()) == naive_first(key.tolist(), k), (key, k)
