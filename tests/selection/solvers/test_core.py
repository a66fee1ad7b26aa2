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
