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


def test_conflict_descriptions_formatted_once_per_values_are_each_pairs():
    """_describe_pairs shares a description among pairs of equal field values, documents and
    versions only where describe_conflict reads nothing else: pairs with a chunk outside the scopes
    (ids quoted), with a claim conflict, or with no field or version reason (the texts' numbers)
    are described one by one. Checked on every listed conflict, both ways round, and random pairs."""
    from ctxselect.selection.explain import _describe_pairs, describe_conflict

    rng = np.random.default_rng(3)
    seen_alone = seen_shared = 0
    for seed in range(4):
        query = generate_queries(queries=1, candidates=250, seed=seed, gold_share=0.1)[0]
        problem = prepare(query.candidates, query.requirements, query.query)
        con = problem.conflicts
        rows = con.i.tolist() + con.j.tolist() + rng.integers(0, problem.n, 200).tolist()
        partners = con.j.tolist() + con.i.tolist() + rng.integers(0, problem.n, 200).tolist()
        rows, partners = zip(*[(i, j) for i, j in zip(rows, partners) if i != j])
        want = [describe_conflict(problem, i, j) for i, j in zip(rows, partners)]
        assert _describe_pairs(problem, list(rows), list(partners)) == want
        admissible = problem.packed.admissible
        seen_alone += sum(not (admissible[i] and admissible[j]) for i, j in zip(rows, partners))
        seen_shared += len(want) - len(set(want))
    assert seen_alone > 0 and seen_shared > 0  # precondition: both paths were taken
    assert _describe_pairs(problem, [], []) == []
    # claim conflicts and near-duplicates whose numbers differ, in and out of the scopes
    body = ("The storm power outage in the northern district affected {} people on March 3, 2021, and crews "
            "restored power to most homes within two days according to the utility company report. Engineers "
            "replaced damaged transformers along the coastal road and published a timeline of the repairs")
    counts = ["3,559", "10,000", "3559", "4,200"]
    chunks = [{"id": f"c{k}", "source": "s", "tokens": 5, "relevance": 0.5, "text": body.format(counts[k % 4]),
               "fields": {"f": k % 3}, "scope": "public" if k % 5 else "private"} for k in range(10)]
    problem = prepare(chunks, {"token_budget": 40, "conflict_fields": ["f"], "allowed_scopes": ["public"]})
    assert problem.signals.claim_conflicts  # precondition
    pairs = [(i, j) for i in range(problem.n) for j in range(problem.n) if i != j]
    want = [describe_conflict(problem, i, j) for i, j in pairs]
    assert _describe_pairs(problem, [i for i, _ in pairs], [j for _, j in pairs]) == want
    assert any("states" in w for w in want) and len(set(want)) < len(want)


def test_near_duplicate_group_checks_read_the_groups_as_the_loop_does():
    """group_members: the hard check (two selected members of one group) and the first selected
    member of each group, against the loops over problem.groups, on random masks."""
    from ctxselect.selection.constraints import group_members, hard_violations

    query = generate_queries(queries=1, candidates=400, seed=11, gold_share=0.1)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    assert len(problem.groups) >= 3  # precondition
    members, number = group_members(problem)
    assert group_members(problem)[0] is members  # built once per problem
    assert members.tolist() == [m for g in problem.groups for m in g.tolist()]
    rng = np.random.default_rng(11)
    outcomes = set()
    for share in (0.0, 0.02, 0.1, 0.5, 1.0):
        for _ in range(10):
            mask = rng.random(problem.n) < share
            loop = any(mask[g].sum() > 1 for g in problem.groups)
            outcomes.add(loop)
            assert ("selects two near-duplicates" in hard_violations(problem, mask)) == loop
    assert outcomes == {True, False}


@pytest.mark.parametrize("few", [0, 10**9])
def test_first_selected_mates_by_loop_and_by_arrays(monkeypatch, few):
    """Both ways of finding each chunk's first selected near-duplicate (a loop over a few groups,
    arrays over many) give the twin's reasons, and each other's mates."""
    from ctxselect.selection import explain

    query = generate_queries(queries=1, candidates=400, seed=11, gold_share=0.1)[0]
    problem = prepare(query.candidates, query.requirements, query.query)
    monkeypatch.setattr(explain, "_FEW_GROUPS", few)
    rng = np.random.default_rng(few % 7)
    found = 0
    for share in (0.0, 0.05, 0.3, 1.0):
        mask = rng.random(problem.n) < share
        want = {}
        for members in problem.groups:
            chosen = members[mask[members]]
            if len(chosen):
                for m in members.tolist():
                    want[m] = int(chosen[0])
        got = explain._first_selected_mates(problem, mask)
        assert got == want and all(type(k) is int and type(v) is int for k, v in got.items())
        found += len(got)
    assert found > 0  # precondition
    assert_same_reasons(problem, rng)


@pytest.mark.parametrize("few", [-1, 10**9])
def test_disagreeing_selected_by_loop_and_by_arrays(monkeypatch, few):
    """Both ways of finding each chunk's disagreeing selected chunk (Python loops up to _FEW
    chunks, arrays above) give the twin's reasons, and the same partners as each other."""
    from ctxselect.selection import explain

    problems = []
    for seed in range(12):
        cands, reqs, weights = random_instance(seed, 1, 30)
        problems.append(prepare(cands, reqs, weights=weights))
    query = generate_queries(queries=1, candidates=300, seed=5, gold_share=0.1)[0]
    problems.append(prepare(query.candidates, query.requirements, query.query))
    rng = np.random.default_rng(few % 5)
    for problem in problems:
        packed, all_fields = problem.packed, range(len(problem.packed.field_names))
        for share in (0.0, 0.1, 0.5, 1.0):
            mask = rng.random(problem.n) < share
            monkeypatch.setattr(explain, "_FEW", -1 - few)  # the other way
            other = [explain._disagreeing_selected(packed, mask, f) for f in (all_fields, problem.hard_fields)]
            monkeypatch.setattr(explain, "_FEW", few)
            got = [explain._disagreeing_selected(packed, mask, f) for f in (all_fields, problem.hard_fields)]
            assert [g.tolist() for g in got] == [o.tolist() for o in other]
        assert_same_reasons(problem, rng)
