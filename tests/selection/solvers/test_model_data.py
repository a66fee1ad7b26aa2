"""What the exact models read from a Problem (selection/solvers/model_data.py): the array forms the
branch and bound reads give what the CP-SAT builder's sets and lists give, and the one-value groups
are those of a plain pass per group."""

import numpy as np
import pytest

from ctxselect.selection.api import prepare
from ctxselect.selection.solvers.model_data import (
    cluster_members,
    cluster_parts,
    conflict_fields,
    forbidden_array,
    forbidden_pairs,
    one_value_groups,
    penalty_arrays,
    penalty_pairs,
)
from tests.strategies import random_instance


def _naive_one_value_groups(core, codes, groups=None):
    present = core[codes[core] >= 0]
    if groups is not None:
        present = present[groups[present] >= 0]
    group_of = groups[present] if groups is not None else np.zeros(len(present), dtype=np.int64)
    out = []
    for g in sorted(set(group_of.tolist())):
        members = present[group_of == g]
        values = codes[members]
        distinct = np.array(sorted(set(values.tolist())), dtype=codes.dtype)
        if len(distinct) >= 2:
            out.append((members, values, distinct))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_one_value_groups_as_a_pass_per_group(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    codes = rng.integers(-1, 4, size=n)
    groups = rng.integers(-1, 6, size=n)
    core = np.flatnonzero(rng.random(n) < 0.8)
    for by in (None, groups):
        got, want = one_value_groups(core, codes, by), _naive_one_value_groups(core, codes, by)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            for a, b in zip(g, w):
                assert a.dtype == b.dtype and a.tolist() == b.tolist()


@pytest.mark.parametrize("seed", range(60))
def test_the_array_forms_match_the_sets_and_lists(seed):
    cands, reqs, weights = random_instance(seed, n_max=30)
    for options in ({}, {"resolve_by_corroboration": False, "hard_conflict_severity": 0.2}):
        problem = prepare(cands, reqs, weights=weights, **options)
        for core in (np.flatnonzero(problem.eligible), np.flatnonzero(problem.eligible)[::2]):
            var_of = np.full(problem.n, -1, dtype=np.int64)
            var_of[core] = np.arange(len(core))
            for gate_on in (True, False):
                forbid_all, fields = conflict_fields(problem, gate_on)
                forbidden = forbidden_pairs(problem, var_of, forbid_all, fields)
                keys = forbidden_array(problem, var_of, forbid_all, fields)
                assert [divmod(k, max(problem.n, 1)) for k in keys.tolist()] == sorted(forbidden)
                za, zc, zp = penalty_arrays(problem, var_of, fields, keys)
                assert list(zip(za.tolist(), zc.tolist(), zp.tolist())) == penalty_pairs(problem, var_of, fields,
                                                                                         forbidden)
            members, sizes = cluster_members(problem, var_of)
            parts = cluster_parts(problem, var_of)
            assert [len(p) for p in parts] == sizes.tolist()
            assert np.concatenate(parts or [members[:0]]).tolist() == members.tolist()
