"""Embeddings without a Python step per number: per-candidate lists, tuples and 1-d arrays of any
real dtype, or one (n, d) array for all candidates (``embeddings=``); every bad input is one
located line naming the candidate and the field."""

import numpy as np
import pytest

import ctxselect
from ctxselect import InputError
from ctxselect.model import embeddings as vectors

REQS = {"token_budget": 40}


def _cands(n, **extra):
    return [dict({"id": f"c{i}", "source": "s", "relevance": 0.5, "tokens": 5, "text": f"chunk number {i}"},
                 **{k: v[i] for k, v in extra.items()}) for i in range(n)]


def _matrix(n=6, d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _error(call) -> str:
    with pytest.raises(InputError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


@pytest.mark.parametrize("form", ["list", "tuple", "float64", "float32", "float16", "int64", "uint8", "list of numpy scalars"])
def test_every_real_form_of_a_candidate_embedding_packs_to_the_same_float64_matrix(form):
    m = _matrix()
    if form in ("int64", "uint8"):
        m = np.abs(m * 10).astype(form)
    rows = {"list": lambda r: r.tolist(), "tuple": lambda r: tuple(r.tolist()),
            "list of numpy scalars": lambda r: list(r.astype(np.float32))}.get(form, lambda r: r.astype(form))
    packed = ctxselect.pack(_cands(6, embedding=[rows(r) for r in m]), REQS)
    expected = np.array([np.asarray(rows(r), dtype=np.float64) for r in m])
    assert packed.embeddings.dtype == np.float64 and packed.embeddings.shape == (6, 4)
    np.testing.assert_array_equal(packed.embeddings, expected)
    for i, cand in enumerate(packed.candidates):  # each candidate holds its row of the one matrix
        assert np.shares_memory(cand.embedding, packed.embeddings)
        np.testing.assert_array_equal(cand.embedding, expected[i])
    assert not packed.embeddings.flags.writeable


@pytest.mark.parametrize("rows", ["arrays of mixed dtypes", "arrays and lists", "arrays of two lengths",
                                  "an array of booleans", "an array with NaN", "a 2-d array"])
def test_arrays_stacked_at_once_pack_as_row_by_row(rows, monkeypatch):
    """Candidates' arrays go into the matrix in one NumPy call (embeddings._stacked_arrays); any
    other input, or a bad array, takes the row-by-row loop: the same matrix, the same error."""
    m = np.abs(_matrix(6) * 10)
    given = [m[0].astype(np.float16), m[1].astype(np.float32), m[2].astype(np.int64), m[3].astype(np.uint64),
             m[4].astype(np.uint8), m[5]]
    if rows == "arrays and lists":
        given[3] = given[3].tolist()
    elif rows == "arrays of two lengths":
        given[4] = given[4][:3]
    elif rows == "an array of booleans":
        given[2] = given[2] > 5
    elif rows == "an array with NaN":
        given[4] = given[4].astype(np.float64)
        given[4][1] = np.nan
    elif rows == "a 2-d array":
        given[1] = given[1][None, :]
    ids = [f"c{i}" for i in range(6)]

    def outcome():
        try:
            return vectors.stack(given, ids)
        except InputError as err:
            return str(err)
    once = outcome()
    monkeypatch.setattr(vectors, "_stacked_arrays", lambda *args: False)
    by_row = outcome()
    if isinstance(by_row, str):
        assert once == by_row and "'c" in once
    else:
        assert rows in ("arrays of mixed dtypes", "arrays and lists")
        np.testing.assert_array_equal(once, by_row)
        assert once.dtype == np.float64 and not once.flags.writeable


def test_an_embeddings_array_packs_like_the_candidates_own():
    m = _matrix()
    own = ctxselect.pack(_cands(6, embedding=m.tolist()), REQS)
    given = ctxselect.pack(_cands(6), REQS, embeddings=m)
    np.testing.assert_array_equal(own.embeddings, given.embeddings)
    assert all(c.embedding is None for c in given.candidates)  # the matrix is the only copy
    assert np.shares_memory(given.embeddings, m) and not given.embeddings.flags.writeable
    assert m.flags.writeable  # the caller's array is left as it was
    f32 = ctxselect.pack(_cands(6), REQS, embeddings=m.astype(np.float32))
    np.testing.assert_array_equal(f32.embeddings, m.astype(np.float32).astype(np.float64))
    ints = ctxselect.pack(_cands(6), REQS, embeddings=np.arange(24).reshape(6, 4))
    assert ints.embeddings.dtype == np.float64 and ints.embeddings[5, 3] == 23.0
    rows = ctxselect.pack(_cands(6), REQS, embeddings=m.tolist())  # a list of rows, checked row by row
    np.testing.assert_array_equal(rows.embeddings, m)


def test_select_takes_the_embeddings_array_and_chooses_as_with_per_candidate_embeddings():
    m = _matrix(12, 8, seed=3)
    m[7] = m[2] + 1e-3  # a near-duplicate pair: cosine redundancy must see it either way
    cands = _cands(12, relevance=np.linspace(0.3, 0.9, 12).tolist())
    own = ctxselect.select([dict(c, embedding=r) for c, r in zip(cands, m.tolist())], REQS, "chunk", time_limit=30)
    for given in (m, m.astype(np.float32)):
        chosen = ctxselect.select(cands, REQS, "chunk", embeddings=given, time_limit=30)
        assert chosen.ids == own.ids and chosen.objective == pytest.approx(own.objective, rel=1e-6)
    signals = ctxselect.signals(ctxselect.pack(cands, REQS, embeddings=m))
    assert (2, 7) in signals.redundancy.as_dict()


def test_no_python_step_per_number_for_good_input(monkeypatch):
    def walked(*args):
        raise AssertionError("a row was walked number by number")

    monkeypatch.setattr(vectors, "_bad_component", walked)
    m = _matrix(50, 16)
    ctxselect.pack(_cands(50, embedding=m.tolist()), REQS)
    ctxselect.pack(_cands(50, embedding=list(m.astype(np.float32))), REQS)
    ctxselect.pack(_cands(50), REQS, embeddings=m)


ARRAY_CASES = [
    ("one dimension", np.zeros(6), ["field 'embeddings'", "a 2-d array", "shape (6,)"]),
    ("three dimensions", np.zeros((6, 2, 2)), ["field 'embeddings'", "shape (6, 2, 2)"]),
    ("too few rows", np.zeros((5, 4)), ["field 'embeddings'", "expected 6 rows, one per candidate", "found '5 rows'"]),
    ("too many rows", np.zeros((7, 4)), ["found '7 rows'"]),
    ("no columns", np.zeros((6, 0)), ["field 'embeddings'", "at least one column"]),
    ("booleans", np.zeros((6, 4), dtype=bool), ["field 'embeddings'", "real numbers", "dtype bool"]),
    ("complex", np.zeros((6, 4), dtype=complex), ["dtype complex128"]),
    ("text", np.full((6, 4), "0.5"), ["field 'embeddings'", "dtype <U3"]),
    ("objects", np.zeros((6, 4), dtype=object), ["dtype object"]),
    ("ragged rows", [[0.1, 0.2]] * 5 + [[0.1]], ["candidate 'c5'", "field 'embeddings[5]'", "2-dimensional"]),
    ("a boolean in a row list", [[0.1, 0.2]] * 3 + [[0.1, True]] + [[0.1, 0.2]] * 2, ["candidate 'c3'", "field 'embeddings[3][1]'"]),
    ("a missing row", [[0.1, 0.2]] * 5 + [None], ["candidate 'c5'", "field 'embeddings[5]'"]),
    ("text", "0.1 0.2", ["field 'embeddings'", "an (n, d) array of numbers"]),
]


@pytest.mark.parametrize("name,value,fragments", ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_a_bad_embeddings_argument_is_one_located_line(name, value, fragments):
    message = _error(lambda: ctxselect.pack(_cands(6), REQS, embeddings=value))
    for fragment in fragments:
        assert fragment in message, (fragment, message)


@pytest.mark.parametrize("bad,found,dtype", [
    (np.nan, "found nan", np.float64), (np.inf, "found inf", np.float64), (-np.inf, "found -inf", np.float64),
    (1.5e100, "found 1.5e+100", np.float64), (np.nan, "found nan", np.float32), (np.inf, "found inf", np.float32),
])
def test_the_first_bad_row_of_the_array_is_named(bad, found, dtype):
    m = _matrix().astype(dtype)
    m[3, 2] = bad
    m[5, 0] = np.nan  # a later bad row is not the one reported
    message = _error(lambda: ctxselect.select(_cands(6), REQS, embeddings=m))
    assert message.startswith("candidate 'c3', field 'embeddings[3][2]': expected a number in [-1e+100, 1e+100]"), message
    assert found in message


def test_embeddings_given_twice_or_to_packed_candidates_are_refused():
    m = _matrix()
    both = _cands(6, embedding=m.tolist())
    message = _error(lambda: ctxselect.pack(both, REQS, embeddings=m))
    assert "candidate 'c0', field 'embedding'" in message and "both" in message
    packed = ctxselect.pack(_cands(6), REQS)
    message = _error(lambda: ctxselect.select(packed, embeddings=m))
    assert "field 'embeddings'" in message and "already packed" in message


def _one_bad(i, value, n=6):
    rows = _matrix(n).tolist()
    rows[i] = value
    return lambda: ctxselect.pack(_cands(n, embedding=rows), REQS)


CANDIDATE_CASES = [
    ("a boolean among numbers", _one_bad(2, [0.1, True, 0.3, 0.4]), ["candidate 'c2'", "field 'embedding[1]'", "found true"]),
    ("all booleans", _one_bad(2, [True, False, True, True]), ["candidate 'c2'", "field 'embedding[0]'"]),
    ("numeric text", _one_bad(1, [0.1, 0.2, "1.5", 0.4]), ["candidate 'c1'", "field 'embedding[2]'", "found '1.5'"]),
    ("null component", _one_bad(1, [0.1, None, 0.2, 0.4]), ["field 'embedding[1]'", "found null"]),
    ("integer beyond any float", _one_bad(4, [0.1, 10**400, 0.2, 0.4]), ["candidate 'c4'", "field 'embedding[1]'"]),
    ("NaN in an array", _one_bad(5, np.array([0.1, 0.2, np.nan, 0.4])), ["candidate 'c5'", "field 'embedding[2]'", "found nan"]),
    ("infinity in float32", _one_bad(0, np.array([0.1, np.inf, 0, 0], dtype=np.float32)), ["candidate 'c0'", "field 'embedding[1]'", "found inf"]),
    ("boolean array", _one_bad(3, np.ones(4, dtype=bool)), ["candidate 'c3'", "field 'embedding'", "dtype bool"]),
    ("text array", _one_bad(3, np.array(["1", "2", "3", "4"])), ["field 'embedding'", "dtype <U1"]),
    ("2-d array", _one_bad(3, np.ones((2, 2))), ["candidate 'c3'", "field 'embedding'", "1-d array", "shape (2, 2)"]),
    ("empty array", _one_bad(3, np.ones(0)), ["field 'embedding'", "non-empty"]),
    ("a mapping", _one_bad(3, {"x": 1.0}), ["candidate 'c3'", "field 'embedding'", "non-empty list of numbers"]),
    ("bytes", _one_bad(3, b"\x01\x02\x03\x04"), ["field 'embedding'", "non-empty list of numbers"]),
    ("a number", _one_bad(3, 0.5), ["field 'embedding'", "non-empty list of numbers"]),
    ("dimension differs", _one_bad(3, [0.1, 0.2]), ["candidate 'c3'", "4-dimensional vector, as candidate 'c0' has", "found '2 dimensions'"]),
    ("missing", _one_bad(3, None), ["candidate 'c3'", "missing embedding", "4-dimensional"]),
]


@pytest.mark.parametrize("name,call,fragments", CANDIDATE_CASES, ids=[c[0] for c in CANDIDATE_CASES])
def test_a_bad_candidate_embedding_is_one_located_line(name, call, fragments):
    message = _error(call)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_the_first_offending_candidate_is_reported_whatever_its_fault():
    rows = _matrix(8).tolist()
    rows[2] = [0.1, np.nan, 0.3, 0.4]      # a value fault, found by the reductions over the matrix
    rows[5] = [0.1, "x", 0.3, 0.4]         # a type fault, found while the rows are copied in
    message = _error(lambda: ctxselect.pack(_cands(8, embedding=rows), REQS))
    assert message.startswith("candidate 'c2', field 'embedding[1]'"), message
    rows[2], rows[1] = _matrix(1).tolist()[0], [1e101, 0, 0, 0]
    message = _error(lambda: ctxselect.pack(_cands(8, embedding=rows), REQS))
    assert message.startswith("candidate 'c1', field 'embedding[0]'"), message
    rows[1] = [0, 0, 0, 0]
    message = _error(lambda: ctxselect.pack(_cands(8, embedding=rows), REQS))
    assert message.startswith("candidate 'c5', field 'embedding[1]'"), message


def test_a_candidate_built_alone_checks_and_keeps_its_embedding_read_only():
    cand = ctxselect.Candidate(id="a", source="s", relevance=0.5, tokens=3, embedding=np.arange(3, dtype=np.int32))
    assert cand.embedding.dtype == np.float64 and not cand.embedding.flags.writeable
    assert cand.to_dict()["embedding"] == [0.0, 1.0, 2.0] and type(cand.to_dict()["embedding"][0]) is float
    again = ctxselect.Candidate.from_dict(cand.to_dict())
    assert again == cand and again != ctxselect.Candidate.from_dict({**cand.to_dict(), "embedding": [0, 1, 3]})
    assert again != ctxselect.Candidate.from_dict({**cand.to_dict(), "embedding": None})
    with pytest.raises(InputError, match=r"candidate 'a', field 'embedding\[1\]': expected a number in \[-1e\+100, 1e\+100\], found nan"):
        ctxselect.Candidate(id="a", source="s", relevance=0.5, tokens=3, embedding=[0.0, float("nan")])
    with pytest.raises(InputError, match=r"candidate 'a', field 'embedding\[0\]'"):
        ctxselect.Candidate(id="a", source="s", relevance=0.5, tokens=3, embedding=[np.True_])
