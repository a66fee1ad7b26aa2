"""Fuzz target: any JSON-ish value where a dump line, candidate or requirement goes.

Hypothesis draws whole hostile values and, more usefully, a valid dump line with one field (at any
depth) replaced by a hostile value. Reading it must give a ``Query`` or an :class:`InputError`
(one line); selecting and inspecting a query that reads must give a result or an
:class:`InputError` — never another exception — and the result keeps the hard constraints.
The example count is bounded so CI spends a few seconds here; raise ``CTXSELECT_FUZZ_EXAMPLES``
for a longer hunt.
"""

import copy
import json
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect import InputError
from ctxselect.model.io import Query

EXAMPLES = int(os.environ.get("CTXSELECT_FUZZ_EXAMPLES", "150"))

EDGES = [None, True, False, 0, -1, 1, 2**31, 2**53 + 1, 2**63, 2**64, 10**30, -(2**70), 5e-324, 1e-7, 0.5,
         1e13, 1e308, float("inf"), float("nan"), 1_730_000_000_000, -1e12, "", " ", "[/x]", "[red]c1[/red]",
         "\x1b[31m", "\u202e", "a\nb", "\ud800", "NaN", "2024-01-01", "9999-12-31T23:59:59-05:00",
         "0001-01-01T00:00:00+01:00", "public", "internal", "c1", "c2", [], {}, ["c1", "c1"], ["public", "public"]]
hostile_scalars = st.one_of(
    st.sampled_from(EDGES), st.none(), st.booleans(), st.integers(),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
)
json_values = st.recursive(hostile_scalars,
                           lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                           max_leaves=12)

GOOD = {
    "query_id": "q1", "query": "what is the refund window in 2024?",
    "requirements": {"token_budget": 300, "required_aspects": {"a": 0.6, "b": 0.4},
                     "required_sources": {"policy": 1}, "max_per_source": 3, "allowed_scopes": ["public"],
                     "conflict_fields": ["window"], "now": "2026-01-01", "gate": {"min_coverage": 0.5}},
    "candidates": [
        {"id": "c1", "source": "policy", "tokens": 80, "relevance": 0.9, "text": "The refund window is 30 days in 2024.",
         "timestamp": "2025-12-01", "aspects": ["a"], "fields": {"window": 30}, "scope": "public",
         "doc_id": "d", "version": "2"},
        {"id": "c2", "source": "policy", "tokens": 60, "relevance": 0.7, "text": "The refund window is 14 days in 2024.",
         "timestamp": "2023-01-01", "aspects": ["a", "b"], "fields": {"window": 14}, "scope": "public",
         "doc_id": "d", "version": "1"},
        {"id": "c3", "source": "faq", "tokens": 40, "relevance": 0.5, "text": "Refunds go to the original card.",
         "aspects": ["b"], "scope": "internal", "rank": 3},
    ],
    "gold": ["c1"], "selected": ["c1", "c3"],
}


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _paths(item, prefix + (k,))


PATHS = [p for p in _paths(GOOD) if p]


INT_EDGES = [0, 1, 2**31, 2**53 + 1, 2**62, 2**63, 2**64, 10**12, 10**12 + 1, 10**30, 1_730_000_000_000, -1]
FLOAT_EDGES = [0.0, 5e-324, 1e-7, 1e-300, 0.9999999999, 1.0, 1e6, 1e13, 1e308, -0.0]
TEXT_EDGES = ["", " ", "[/x]", "[red]c1[/red]", "\x1b[2J", "\u202eevil", "a\nb", "x\ud800", "c1", "c2", "public",
              "internal", "policy", "30 days", "1,500", "١٢٣", "語" * 50, "x" * 5000, "2024-02-30", "9999-12-31"]


@st.composite
def _same_kind(draw, value):
    """A hostile value of the same JSON kind as ``value`` (valid-looking, extreme)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return draw(st.sampled_from(INT_EDGES))
    if isinstance(value, float):
        return draw(st.sampled_from(FLOAT_EDGES))
    if isinstance(value, str):
        return draw(st.sampled_from(TEXT_EDGES))
    if isinstance(value, list) and value:
        extra = draw(st.lists(st.sampled_from(value), max_size=3))
        return draw(st.permutations(value + extra))  # duplicates, another order
    return draw(json_values)


@st.composite
def mutated_lines(draw):
    line = copy.deepcopy(GOOD)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        target = line
        try:
            for key in path[:-1]:
                target = target[key]
            old = target[path[-1]]
            target[path[-1]] = draw(st.one_of(_same_kind(old), _same_kind(old), st.sampled_from(EDGES),
                                              json_values))
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation replaced a parent
    return line


def _check_selection(query: Query, method: str) -> None:
    try:
        sel = ctxselect.select(query.candidates, query.requirements, query.query, method, time_limit=0.5)
    except InputError as err:
        assert "\n" not in str(err)
        return
    packed = ctxselect.pack(query.candidates, query.requirements)
    mask = packed.mask_of(sel.ids)
    assert len(sel.ids) == len(set(sel.ids))
    assert int(packed.tokens[mask].sum()) <= packed.budget
    allowed = query.requirements.allowed_scopes
    if allowed is not None:  # from the raw scopes, not from the library's packing
        chosen = [c for c in query.candidates if c.id in set(sel.ids)]
        assert all(c.scope in set(allowed) for c in chosen), (allowed, [c.scope for c in chosen])
    assert set(sel.excluded) == set(packed.ids) - set(sel.ids)
    json.dumps(sel.to_dict(), allow_nan=False)  # every number finite, every value JSON


def _exercise(line) -> None:
    try:
        query = Query.from_dict(line)
    except InputError as err:
        assert "\n" not in str(err)
        return
    for method in ("greedy", "optimal"):
        _check_selection(query, method)
    try:
        report = ctxselect.inspect(query.candidates, query.requirements)
    except InputError:
        return
    assert all(np.isfinite(v) for v in report.metrics.values())
    json.dumps(report.to_dict(), allow_nan=False)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_lines())
def test_a_mutated_dump_line_reads_or_fails_cleanly(line):
    _exercise(line)


@settings(max_examples=EXAMPLES // 3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_any_json_value_as_a_line_fails_cleanly(value):
    _exercise(value)


@settings(max_examples=EXAMPLES // 3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, json_values)
def test_any_json_value_as_candidates_or_requirements(cands, reqs):
    for call in (lambda: ctxselect.select(cands, reqs), lambda: ctxselect.inspect(cands, reqs)):
        try:
            call()
        except InputError as err:
            assert "\n" not in str(err)
