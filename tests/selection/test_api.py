"""select(): the hard constraints are invariants under any weights and inputs, checked against the
twin's problem built from the raw candidates (tests/naive/select.py); hypothesis draws the
instances, structure and texts (tests.strategies.selection_instances). Also: determinism, versions
and near-duplicates, and memory on identical chunks."""


from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.selection.api import prepare
from tests.helpers import MiB, peak_memory
from tests.naive.select import all_subsets, mask_of, naive_feasible, naive_sources_met, raw_problem
from tests.strategies import selection_instances

weights = st.fixed_dictionaries({
    "relevance": st.floats(0, 5), "coverage": st.floats(0, 5), "redundancy": st.floats(0, 5),
    "contradiction": st.floats(0, 5), "tokens": st.floats(0, 5)})
methods = st.sampled_from(["greedy", "topk", "density", "mmr", "optimal"])
METHODS = ["greedy", "topk", "density", "mmr"]


@settings(max_examples=150, deadline=None)
@given(selection_instances(), weights, methods, st.floats(0.3, 1.0), st.booleans())
def test_hard_constraints_always_hold(instance, w, method, hard_severity, enforce_gate):
    cands, reqs, _ = instance
    sel = ctxselect.select(cands, reqs, method=method, weights=w, enforce_gate=enforce_gate,
                           hard_conflict_severity=hard_severity)
    twin = raw_problem(cands, reqs, w, hard_conflict_severity=hard_severity)
    chosen = [c for c in cands if c["id"] in set(sel.ids)]
    assert len(sel.ids) == len(set(sel.ids)) == len(chosen)
    assert sum(c["tokens"] for c in chosen) <= reqs["token_budget"]
    assert all(c.get("scope") in reqs["allowed_scopes"] for c in chosen)
    # eligibility, hard pairs, near-duplicate groups, source maximums and the chunk cap
    mask = mask_of(twin, sel.ids)
    assert naive_feasible(twin, mask[None, :], gate_on=False, sources_on=False)[0]
    if method == "optimal":  # the tiers it keeps, it meets; the utilization ceiling even with the gate relaxed
        gate_on = enforce_gate and "gate" not in sel.relaxed
        ceiling = enforce_gate and (gate_on or sel.status != "fallback")
        assert naive_feasible(twin, mask[None, :], gate_on=gate_on, sources_on="sources" not in sel.relaxed,
                              ceiling=ceiling)[0]
    assert set(sel.excluded) == {c["id"] for c in cands} - set(sel.ids)
    assert all(isinstance(r, str) and r for r in sel.excluded.values())


@settings(max_examples=100, deadline=None)
@given(selection_instances(), weights)
def test_source_minimums_hold_whenever_possible(instance, w):
    cands, reqs, _ = instance
    sel = ctxselect.select(cands, reqs, weights=w, enforce_gate=False)
    twin = raw_problem(cands, reqs, w)
    possible = naive_feasible(twin, all_subsets(twin.n), gate_on=False, sources_on=True).any()
    counts = {}
    for c in cands:
        if c["id"] in set(sel.ids):
            counts[c["source"]] = counts.get(c["source"], 0) + 1
    met = all(counts.get(s, 0) >= m for s, m in reqs["required_sources"].items())
    assert met == possible
    assert (sel.relaxed == []) == possible
    # an unmeetable minimum takes what there is: as many required chunks as any subset holds
    X = all_subsets(twin.n)
    feasible = naive_feasible(twin, X, gate_on=False, sources_on=False)
    held = sum(min(counts.get(s, 0), m) for s, m in reqs["required_sources"].items())
    assert held == naive_sources_met(twin, X)[feasible].max()


@settings(max_examples=40, deadline=None)
@given(selection_instances(), weights, methods)
def test_identical_input_gives_identical_output(instance, w, method):
    cands, reqs, _ = instance
    a = ctxselect.select(cands, reqs, method=method, weights=w)
    b = ctxselect.select(cands, reqs, method=method, weights=w)
    assert (a.ids, a.objective, a.status, a.excluded) == (b.ids, b.objective, b.status, b.excluded)


def test_versions_and_duplicates_are_never_both_selected():
    text = "The refund window for annual plans is thirty days from the purchase date for all customers"
    cands = [{"id": "v1", "source": "policy", "tokens": 20, "relevance": 0.9, "doc_id": "d", "version": "1", "text": "old rules"},
             {"id": "v2", "source": "policy", "tokens": 20, "relevance": 0.5, "doc_id": "d", "version": "2", "text": "new rules"},
             {"id": "dup1", "source": "wiki", "tokens": 20, "relevance": 0.8, "text": text},
             {"id": "dup2", "source": "wiki", "tokens": 20, "relevance": 0.8, "text": text + "."}]
    reqs = {"token_budget": 200}
    for method in METHODS + ["optimal"]:
        sel = ctxselect.select(cands, reqs, method=method)
        assert not {"v1", "v2"} <= set(sel.ids) and not {"dup1", "dup2"} <= set(sel.ids), method
    sel = ctxselect.select(cands, reqs, method="greedy")
    assert sel.excluded["dup2"] == "near-duplicate of `dup1`"
    assert "v2" in sel.ids  # the newer version wins although it is less relevant
    assert sel.excluded["v1"] == "superseded by `v2` (a newer version of the same document)"
    old_rules = ctxselect.select(cands, reqs, method="greedy", resolve_by_corroboration=False)
    assert old_rules.excluded["v2"] == "conflicts with `v1` (version '2' vs '1' of doc 'd')"



def test_select_on_identical_chunks_stays_linear_in_memory():
    n = 4000
    text = ("The support desk handles refund requests within 14 days according to policy and the team "
            "answered 3,559 people last quarter")
    chunks = [{"id": f"c{i}", "source": "s", "tokens": 5, "relevance": 0.5, "text": text} for i in range(n)]
    selection, peak = peak_memory(lambda: ctxselect.select(chunks, {"token_budget": 100}, time_limit=1))
    assert len(selection.ids) == 1
    assert peak < 64 * MiB



def test_aspect_weights_summing_past_the_largest_float_weigh_as_their_ratios():
    """1e308 thrice sums to inf: ω / Σω was 0, so covering aspects added nothing to the objective,
    and the optimal selection's gate passed on a nan coverage. They now weigh as 1.0 weights do."""
    chunks = [{"id": "c0", "relevance": 0.9, "tokens": 5, "aspects": ["a", "b"]},
              {"id": "c1", "relevance": 0.5, "tokens": 5}]
    for method in ("greedy", "optimal"):
        huge, ordinary = (ctxselect.select(chunks, {"token_budget": 20, "required_aspects": dict.fromkeys("abc", w),
                                                    "gate": {"min_coverage": 0.9}}, "q", method)
                          for w in (1e308, 1.0))
        assert (huge.ids, huge.objective, huge.report.metrics) == (ordinary.ids, ordinary.objective,
                                                                   ordinary.report.metrics)
        assert huge.objective > 1.0  # the coverage term (w_cov · 2/3) counts
        assert not huge.report.passed
        if method == "optimal":  # the diagnosis of the gate out of reach
            assert huge.infeasible == ordinary.infeasible
            assert any("coverage 0.90 is out of reach: all eligible candidates together cover 0.67" in line
                       for line in huge.infeasible)
    problem = prepare(chunks, {"token_budget": 20, "required_aspects": dict.fromkeys("abc", 1e308)}, "q")
    assert problem.aspect_gain[:3].tolist() == [1 / 3] * 3


def _input_error(call) -> str:
    try:
        call()
    except ctxselect.InputError as err:
        return str(err)
    raise AssertionError("no InputError")


def test_packed_candidates_refuse_requirements_other_than_their_own():
    """select(pack(cands, reqs), other) ignored ``other``: budget 5 and scopes ["nobody"] returned
    every public chunk, status optimal. Other requirements are now an InputError; the same pass."""
    cands = [{"id": f"c{i}", "source": "s", "tokens": 40, "relevance": 0.5, "scope": "public",
              "text": f"chunk number {i} about topic {i}"} for i in range(4)]
    reqs = {"token_budget": 200, "allowed_scopes": ["public"]}
    packed = ctxselect.pack(cands, reqs)
    for other in ({"token_budget": 5, "allowed_scopes": ["nobody"]}, {"token_budget": 200}):
        for method in ("optimal", "greedy"):
            message = _input_error(lambda: ctxselect.select(packed, other, "q", method))
            assert "field 'requirements'" in message and "already packed" in message
        assert "already packed" in _input_error(lambda: prepare(packed, other))
    same = ctxselect.select(packed, dict(reqs), "q", "greedy")
    assert same.ids == ctxselect.select(packed, None, "q", "greedy").ids
    assert len(same.ids) == 4


def test_exclude_outside_window_and_resolve_by_corroboration_must_be_booleans():
    """select(exclude_outside_window="false") ran as True (a non-empty string is truthy) while
    ContextSelector refused it; select() and prepare() now check both as the selector does."""
    cands = [{"id": "a", "source": "s", "tokens": 5, "relevance": 0.5, "text": "a chunk"}]
    for name in ("exclude_outside_window", "resolve_by_corroboration"):
        for value in ("false", 0, None):
            for call in (lambda: ctxselect.select(cands, {"token_budget": 10}, **{name: value}),
                         lambda: prepare(cands, {"token_budget": 10}, **{name: value}),
                         lambda: ctxselect.ContextSelector(10, **{name: value})):
                message = _input_error(call)
                assert f"field '{name}': expected true or false" in message


def test_equal_calls_give_equal_selections():
    """Two identical calls compared unequal: ``timings`` (wall clock) took part in ``==``."""
    cands = [{"id": f"c{i}", "source": "s", "tokens": 5, "relevance": 0.1 * i, "text": f"chunk {i} text"}
             for i in range(5)]
    for method in ("greedy", "optimal"):
        a, b = (ctxselect.select(cands, {"token_budget": 12}, "q", method) for _ in range(2))
        assert a.timings["total"] > 0 and b.timings["total"] > 0  # precondition: wall-clock timings
        assert a == b
