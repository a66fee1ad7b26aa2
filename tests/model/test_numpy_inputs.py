"""NumPy scalars wherever a number is expected (every retriever returns them): accepted as the
Python number they equal, rejected with the same located message when out of range; NumPy's
bool is never a number."""

import numpy as np
import pytest

import ctxselect

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]


def _chunk(**over):
    return {"id": "a", "source": "s", "relevance": 0.9, "tokens": 30, "text": "refunds within 30 days", **over}


@pytest.mark.parametrize("kind", INTS)
def test_numpy_integers_are_counts_ids_and_times(kind):
    chunk = _chunk(id=kind(7), tokens=kind(30), rank=kind(1), timestamp=kind(100))
    reqs = {"token_budget": kind(100), "required_sources": {"s": kind(1)}, "max_chunks": kind(3),
            "max_per_source": kind(2), "now": kind(100)}
    sel = ctxselect.select([chunk], reqs, core_size=kind(50), exact_up_to=kind(60))
    assert sel.ids == ["7"] and sel.tokens == 30 and sel.report.passed
    assert ctxselect.pack([chunk], reqs).budget == 100


@pytest.mark.parametrize("kind", FLOATS)
def test_numpy_floats_are_scores_weights_and_thresholds(kind):
    chunk = _chunk(relevance=kind(0.5), timestamp=kind(1000.0))
    reqs = {"token_budget": kind(100.0), "decay_lambda": kind(0.25), "now": 1000,
            "gate": {"min_coverage": kind(0.5), "max_token_utilization": kind(0.75)}}
    sel = ctxselect.select([chunk], reqs, time_limit=kind(2.0), weights={"sharpen": kind(2.0)}, mmr_lambda=kind(0.5))
    assert sel.ids == ["a"]
    assert ctxselect.inspect([chunk], reqs).metrics["token_utilization"] == pytest.approx(0.3)
    expected = ctxselect.select([_chunk(relevance=float(kind(0.5)))], {**reqs, "token_budget": 100}, weights={"sharpen": 2.0})
    assert sel.objective == pytest.approx(expected.objective)


@pytest.mark.parametrize("value, message", [
    (np.float32(1.5), "field 'relevance': expected a number in [0, 1] (raw scores: relevance='minmax', 'sigmoid' or 'rank'), found 1.5"),
    (np.True_, "field 'relevance': expected a number in [0, 1] (raw scores: relevance='minmax', 'sigmoid' or 'rank'), found bool np.True_"),
    (np.float64("nan"), "field 'relevance': expected a number in [0, 1] (raw scores: relevance='minmax', 'sigmoid' or 'rank'), found np.float64(nan)"),
    (np.float32("inf"), "field 'relevance': expected a number in [0, 1]"),
])
def test_bad_numpy_scores_get_the_located_message(value, message):
    with pytest.raises(ctxselect.InputError, match=r"candidate 'a', " + message.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        ctxselect.select([_chunk(relevance=value)], {"token_budget": 100})


@pytest.mark.parametrize("value", [np.float32(10.5), np.int64(0), np.bool_(True), np.int64(-3)])
def test_bad_numpy_budgets_are_refused(value):
    with pytest.raises(ctxselect.InputError, match="field 'token_budget': expected a positive integer"):
        ctxselect.select([_chunk()], {"token_budget": value})


@pytest.mark.parametrize("value, plain", [(np.int64(3), 3), (np.uint8(3), 3), (np.float32(1.5), 1.5),
                                          (np.float64(1.5), 1.5), (np.bool_(True), True), (np.bool_(False), False)])
def test_numpy_claims_are_the_python_claims_they_equal(value, plain):
    """A NumPy integer or bool claim was refused ("expected a string, number, boolean or null, found
    int64 np.int64(3)") while np.float64 passed as itself; each is now the Python value, in fields
    and as a top-level claim: one claim with the Python value (one code), written as it."""
    from ctxselect.model.candidate import Candidate
    from ctxselect.packing import pack

    reqs = {"token_budget": 100, "conflict_fields": ["x"]}
    for put in (lambda v: {"fields": {"x": v}}, lambda v: {"x": v}):
        chunks = [_chunk(id="a", **put(value)), _chunk(id="b", text="returns are free of charge", **put(plain))]
        packed = pack(chunks, reqs)
        assert packed.field_values[:, 0].tolist() == [0, 0]  # one claim: no conflict
        assert packed.field_value_names == ((plain,),) and type(packed.field_value_names[0][0]) is type(plain)
        assert ctxselect.select(chunks, reqs, method="greedy").ids == ["a", "b"]
    claim = Candidate.from_dict(_chunk(fields={"x": value})).fields["x"]
    assert claim == plain and type(claim) is type(plain)


@pytest.mark.parametrize("value, message", [
    (np.float32("inf"), "expected a finite number, found inf"),
    (np.float64("nan"), "expected a finite number, found nan"),
    (np.complex128(1 + 2j), "expected a string, number, boolean or null, found complex128"),
    (np.datetime64("2020-01-01", "ns"), "expected a string, number, boolean or null, found datetime64")])
def test_numpy_claims_that_are_no_plain_scalar_are_refused(value, message):
    with pytest.raises(ctxselect.InputError, match=f"candidate 'a', field 'fields.x': {message}"):
        ctxselect.select([_chunk(fields={"x": value})], {"token_budget": 100})


def test_a_float16_time_limit_gives_a_finite_deadline_on_a_machine_up_for_days(monkeypatch):
    # the full suite failed on this machine after 18 h up: perf_counter() + np.float16(2.0) is float16,
    # infinite past 65,504 s ("field 'deadline': expected a finite number, found float16 inf")
    import ctxselect.selection.api as api

    monkeypatch.setattr(api.time, "perf_counter", lambda: 200_000.0)  # the clock of a machine up 2.3 days
    sel = ctxselect.select([_chunk(relevance=0.5)], {"token_budget": 100}, time_limit=np.float16(2.0))
    assert sel.status == "optimal" and sel.ids == ["a"], (sel.status, sel.status_reason)


def test_numpy_booleans_are_the_python_booleans_they_equal():
    # enforce_gate=np.bool_(True) (what array.any() gives) was "expected true or false", where NumPy
    # numbers are read as the Python numbers they equal
    chunks = [_chunk(id="a", doc_id="d", version="1"),
              _chunk(id="b", doc_id="d", version="2", text="returns are free of charge")]
    reqs = {"token_budget": 100, "version_conflicts": np.bool_(True)}
    sel = ctxselect.select(chunks, reqs, enforce_gate=np.bool_(False), exclude_outside_window=np.bool_(True),
                           resolve_by_corroboration=np.bool_(True))
    assert sel.ids == ["b"] and sel.excluded["a"].startswith("superseded by `b`")
    off = ctxselect.select(chunks, {**reqs, "version_conflicts": np.bool_(False)}, enforce_gate=np.bool_(False))
    assert sorted(off.ids) == ["a", "b"]
    with pytest.raises(ctxselect.InputError, match="field 'enforce_gate': expected true or false, found int"):
        ctxselect.select(chunks, reqs, enforce_gate=np.int64(1))
