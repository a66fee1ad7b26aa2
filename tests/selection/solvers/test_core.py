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
    assert cored.status == "feasible" and "core of " in cored.status_reason
    assert cored.objective <= proven.objective + 1e-9 <= cored.bound + 1e-9  # the bound covers the optimum
    with pytest.raises(ctxselect.InputError, match="field 'exact_up_to'"):
        ctxselect.select(cands, reqs, exact_up_to=-1)


def test_the_status_reason_names_the_core_solved_not_the_core_size_asked(monkeypatch):
    """core_size=1 said "optimal on a core of 1 candidates" when the core held dozens (the best
    providers and the baselines' selections join it): the reason now counts the core solved."""
    from ctxselect.selection.solvers import cpsat

    sizes = []
    choose = cpsat.choose_core
    monkeypatch.setattr(cpsat, "choose_core", lambda *a, **kw: sizes.append(len(core := choose(*a, **kw))) or core)
    rng = np.random.default_rng(4)
    cands = [{"id": f"c{k}", "source": "s", "tokens": int(rng.integers(10, 60)),
              "relevance": float(rng.random())} for k in range(40)]
    sel = ctxselect.select(cands, {"token_budget": 200}, core_size=1, exact_up_to=0)
    assert sizes and sizes[-1] > 1  # precondition: the core held more than core_size
    assert f"on a core of {sizes[-1]} candidates (40 are eligible)" in sel.status_reason, sel.status_reason


def naive_first(key, k):
    """The twin of ``providers.smallest``: the first ``k`` positions of a stable sort."""
    return set(sorted(range(len(key)), key=lambda i: (key[i], i))[: max(k, 0)])


@pytest.mark.parametrize("seed", range(4))
def test_the_core_picks_are_a_stable_sorts_first_k(seed):
    """The core's top-k by partition equals a stable sort's first k, ties to the lower position
    (fixed, random, all-equal and edge sizes)."""
    from ctxselect.features.providers import smallest as _first

    rng = np.random.default_rng(seed)
    cases = [(np.array([]), 3), (np.array([1.0]), 0), (np.array([2.0, 1.0, 1.0, 0.0]), 2),
             (np.zeros(9), 4), (np.array([-0.0, 0.0, -1.0]), 2), (np.arange(5.0), 9)]
    cases += [(rng.integers(0, 4, int(n)).astype(float) * rng.choice([1.0, -1.0]), int(rng.integers(-1, 40)))
              for n in rng.integers(0, 40, 300)]
    for key, k in cases:
        assert set(_first(key, k).tolist()) == naive_first(key.tolist(), k), (key, k)


def _split_problem(rng, n):
    from ctxselect.selection.api import prepare

    chunks = [{"id": f"c{k}", "source": f"s{int(rng.integers(0, 3))}", "tokens": int(rng.integers(5, 40)),
               "relevance": float(rng.random()),
               "fields": {"f": [1, 2, 3, None][int(rng.integers(0, 4))]}} for k in range(n)]
    reqs = {"token_budget": int(rng.integers(20, 120)), "conflict_fields": {"f": 1.0}, "min_coverage": 0,
            "max_per_source": int(rng.integers(1, 4))}
    return prepare(chunks, reqs)


def _best_agreeing(problem, capacity):
    """The best score over every subset within the capacity and the source caps whose chunks agree
    on the hard fields (the brute-force optimum the split bound must cover), n <= 12."""
    from ctxselect.selection.problem import score

    packed = problem.packed
    best = 0.0
    for bits in range(1 << problem.n):
        mask = np.array([bits >> i & 1 for i in range(problem.n)], dtype=bool)
        if (mask & ~problem.eligible).any() or packed.tokens[mask].sum() > capacity:
            continue
        if (np.bincount(packed.source[mask], minlength=len(packed.source_names)) > packed.source_max).any():
            continue
        if any(len(set(packed.field_values[mask, f][packed.field_values[mask, f] >= 0].tolist())) > 1
               for f in problem.hard_fields):
            continue
        best = max(best, score(problem, mask))
    return best


@pytest.mark.parametrize("seed", range(5))
def test_the_split_bound_covers_the_optimum_and_is_never_looser(seed):
    """Splitting on a hard field's values gives a bound that still covers the best selection whose
    chunks agree on the field, and is never above the bound without the split."""
    from ctxselect.selection.solvers.core import upper_bound

    rng = np.random.default_rng(seed)
    for _ in range(12):
        problem = _split_problem(rng, int(rng.integers(1, 11)))
        capacity = problem.capacity(False)
        split, plain = upper_bound(problem, capacity), upper_bound(problem, capacity, ())
        assert split <= plain + 1e-12
        assert split >= _best_agreeing(problem, capacity) - 1e-9


def test_the_split_bound_is_tighter_where_the_field_binds():
    """Two strong chunks that disagree on a hard field: no selection holds both, and the split
    bound knows it (the plain LP counts both)."""
    from ctxselect.selection.api import prepare
    from ctxselect.selection.solvers.core import upper_bound

    chunks = [{"id": "a", "source": "s", "tokens": 10, "relevance": 0.9, "fields": {"f": 1}},
              {"id": "b", "source": "t", "tokens": 10, "relevance": 0.9, "fields": {"f": 2}},
              {"id": "c", "source": "u", "tokens": 10, "relevance": 0.2}]
    problem = prepare(chunks, {"token_budget": 100, "conflict_fields": {"f": 1.0}, "min_coverage": 0})
    capacity = problem.capacity(False)
    split, plain = upper_bound(problem, capacity), upper_bound(problem, capacity, ())
    best = _best_agreeing(problem, capacity)
    assert plain == pytest.approx(float(problem.value[problem.value > 0].sum()))
    assert best - 1e-9 <= split < plain - 1e-6
    assert split == pytest.approx(best)  # one strong chunk and the weak one: the LP is integral here


def test_the_core_holds_what_the_lp_values_most(monkeypatch):
    """Chunks of middling value and size that the LP fills the budget with (three of 30 tokens)
    are in a core of 4, where the best values (100-token chunks) and the best values per token
    (1-token chunks of little worth), the core below LP_CORE_FROM eligible chunks, leave one out."""
    from ctxselect.selection.api import prepare
    from ctxselect.selection.solvers import core as core_module
    from ctxselect.selection.solvers.core import choose_core

    chunks = ([{"id": f"a{k}", "source": "s", "tokens": 100, "relevance": 1.0} for k in range(2)]
              + [{"id": f"b{k}", "source": "s", "tokens": 1, "relevance": 0.2} for k in range(2)]
              + [{"id": f"c{k}", "source": "s", "tokens": 30, "relevance": 0.9} for k in range(3)])
    problem = prepare(chunks, {"token_budget": 100, "min_coverage": 0})
    assert not {4, 5, 6} <= set(choose_core(problem, 4, [], 0).tolist())  # below LP_CORE_FROM: one left out
    monkeypatch.setattr(core_module, "LP_CORE_FROM", 0)
    problem = prepare(chunks, {"token_budget": 100, "min_coverage": 0})
    core = choose_core(problem, 4, [], 0)
    assert {4, 5, 6} <= set(core.tolist()) and len(core) == 4
    whole = ctxselect.select(chunks, {"token_budget": 100, "min_coverage": 0})
    cored = ctxselect.select(chunks, {"token_budget": 100, "min_coverage": 0}, core_size=4, exact_up_to=0)
    assert cored.objective == pytest.approx(whole.objective)


def test_the_relaxation_cache_keeps_no_problem_alive(monkeypatch):
    """The relaxation is cached per problem in a WeakKeyDictionary: nothing it holds refers to the
    problem, so a problem is freed once its call is over (a cached value holding it kept every
    problem above LP_CORE_FROM eligible chunks alive for the life of the process)."""
    import gc
    import weakref

    from ctxselect.evaluate.generate import generate_queries
    from ctxselect.selection import api
    from ctxselect.selection.solvers import core as core_module

    monkeypatch.setattr(core_module, "LP_CORE_FROM", 0)
    query = generate_queries(queries=1, candidates=80, seed=2)[0]
    made = []
    prepare = api.prepare

    def keep_a_weak_reference(*args, **kwargs):
        problem = prepare(*args, **kwargs)
        made.append(weakref.ref(problem))
        return problem

    monkeypatch.setattr(api, "prepare", keep_a_weak_reference)
    selection = ctxselect.select(query.candidates, query.requirements, query.query, core_size=10, exact_up_to=0)
    assert selection.status == "feasible" and made
    del selection
    gc.collect()
    assert all(ref() is None for ref in made)
