"""audit() against the 109 RAGScope vectors (tests/data/ragscope_vectors.json, copied from the
project's shared folder), and its JavaScript arithmetic (Math.round, left-to-right sums) against
plain-Python twins."""

import json
import math
from functools import reduce
from operator import add

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.evaluate.audit import js_round, js_sum
from tests.conftest import DATA

VECTORS = json.loads((DATA / "ragscope_vectors.json").read_text())["vectors"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_audit_vector(vector):
    assert ctxselect.audit(vector["chunks"]).to_dict() == vector["expected"]


def math_round(x: float) -> int:
    """The twin of JavaScript's Math.round (ECMA-262): the integer closest to x, halves towards
    +infinity; x − floor(x) is exact for every double, so no sum rounds on the way."""
    low = math.floor(x)
    return int(low) + 1 if x - low >= 0.5 else int(low)


def test_js_rounding_of_halves():
    halves = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 62.5, 99.5]
    assert [js_round(x) for x in halves] == [1, 2, 3, 0, -1, -2, 63, 100]
    assert [js_round(x) for x in halves] == [math_round(x) for x in halves]


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_js_round_matches_math_round(x):
    assert js_round(x) == math_round(x)


@pytest.mark.parametrize("x", [0.49999999999999994, 2.0 ** 52 + 1])
def test_js_round_where_adding_a_half_rounds(x):
    assert js_round(x) == math_round(x)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=12))
def test_js_sum_adds_left_to_right(values):
    """As a JavaScript loop adds (Python 3.12's sum() compensates rounding; the audit must not)."""
    assert js_sum(values) == reduce(add, values, 0.0)
    assert js_sum([0.1] * 10) == 0.9999999999999999  # left to right: not 1.0


def test_audit_errors_name_the_chunk():
    with pytest.raises(ctxselect.InputError, match=r"candidate 'a', field 'overlap_with_next'"):
        ctxselect.audit([{"id": "a", "overlap_with_next": 2}])
    with pytest.raises(ctxselect.InputError, match=r"candidate #0, field 'id'"):
        ctxselect.audit([{"tokens": 3}])
