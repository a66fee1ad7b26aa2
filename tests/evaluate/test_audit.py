"""audit() against the 109 RAGScope vectors (tests/data/ragscope_vectors.json, copied from the
project's shared folder), and its rounding."""

import json

import pytest

import ctxselect
from ctxselect.evaluate.audit import js_round
from tests.conftest import DATA

VECTORS = json.loads((DATA / "ragscope_vectors.json").read_text())["vectors"]


def test_there_are_109_vectors():
    assert len(VECTORS) == 109


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_audit_vector(vector):
    assert ctxselect.audit(vector["chunks"]).to_dict() == vector["expected"]


def test_js_rounding_of_halves():
    assert [js_round(x) for x in (0.5, 1.5, 2.5, -0.5, -1.5, 62.5)] == [1, 2, 3, 0, -1, 63]
    assert round(2.5) == 2  # Python's banker's rounding would differ


def test_audit_errors_name_the_chunk():
    with pytest.raises(ctxselect.InputError, match=r"candidate 'a', field 'overlap_with_next'"):
        ctxselect.audit([{"id": "a", "overlap_with_next": 2}])
    with pytest.raises(ctxselect.InputError, match=r"candidate #0, field 'id'"):
        ctxselect.audit([{"tokens": 3}])
