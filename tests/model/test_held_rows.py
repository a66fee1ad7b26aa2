"""Validated candidates' own embeddings are kept as rows (PackedCandidates.embedding_data): the
cosine normalises them a block at a time, bit for bit as it normalises the stacked matrix, and the
matrix is made only when ``embeddings`` is read."""

import numpy as np
import pytest

import ctxselect
from ctxselect import Candidate, InputError
from ctxselect.features import similarity
from ctxselect.kernels.norms import _unit_rows
from ctxselect.model import embeddings as vectors
from ctxselect.selection.api import prepare

REQS = {"token_budget": 60}


def _candidates(n=11, d=5, seed=3):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, d))
    m[4] = m[1] * 3.0  # a parallel copy: a redundant pair
    m[min(7, n - 1)] = 0.0  # a zero row
    return [Candidate(id=f"c{i}", source=f"s{i % 3}", relevance=0.2 + (i % 16) / 20, tokens=5 + i, text=f"chunk {i}",
                      embedding=m[i]) for i in range(n)], m


@pytest.mark.parametrize("block_rows", [1, 3, 640])
def test_held_rows_normalise_and_pair_as_the_matrix(block_rows, monkeypatch):
    monkeypatch.setattr(similarity, "HELD_BLOCK_ROWS", block_rows)
    cands, m = _candidates()
    packed = ctxselect.pack(cands, REQS)
    assert isinstance(packed.embedding_data, vectors.HeldRows) and packed.embedding_dim == 5
    assert all(row is cand.embedding for row, cand in zip(packed.embedding_data, cands))  # no copy
    held = similarity.normalised_rows(packed.embedding_data, packed.ids)
    stacked = similarity.normalised_rows(np.stack([c.embedding for c in cands]))
    assert held.dtype == np.float32 and held.tobytes() == stacked.tobytes()
    given = ctxselect.pack([Candidate(id=c.id, source=c.source, relevance=c.relevance, tokens=c.tokens, text=c.text)
                            for c in cands], REQS, embeddings=m)  # the same embeddings as one array
    a, b = ctxselect.signals(packed), ctxselect.signals(given)
    assert a.similarity == b.similarity == "cosine"
    for name in ("i", "j", "weight"):
        assert np.array_equal(getattr(a.redundancy, name), getattr(b.redundancy, name))
    assert (1, 4) in set(zip(a.redundancy.i.tolist(), a.redundancy.j.tolist()))
    # the matrix, made on first use: the candidates' rows, read-only, then kept
    matrix = packed.embeddings
    assert matrix.dtype == np.float64 and not matrix.flags.writeable and np.array_equal(matrix, m)
    assert packed.embedding_data is matrix and packed.embeddings is matrix


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_a_select_on_held_rows_chooses_as_on_the_array(seed):
    cands, m = _candidates(40, 8, seed=seed)
    bare = [Candidate(id=c.id, source=c.source, relevance=c.relevance, tokens=c.tokens, text=c.text) for c in cands]
    assert isinstance(prepare(cands, REQS, "chunk").packed.embedding_data, vectors.HeldRows)
    for method in ("optimal", "greedy", "mmr"):
        one = ctxselect.select(cands, REQS, "chunk", method=method)
        two = ctxselect.select(bare, REQS, "chunk", method=method, embeddings=m)
        assert one.ids == two.ids and one.objective == two.objective and one.status == two.status


def test_held_rows_compile_no_kernel_of_their_own():
    cands, m = _candidates(30, 6)
    bare = [Candidate(id=c.id, source=c.source, relevance=c.relevance, tokens=c.tokens, text=c.text) for c in cands]
    ctxselect.select(bare, REQS, "chunk", embeddings=m)  # a packed matrix: read-only float64
    known = set(_unit_rows.signatures)
    ctxselect.select(cands, REQS, "chunk")
    assert set(_unit_rows.signatures) == known


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e150])
@pytest.mark.parametrize("read", ["select", "embeddings"])
def test_a_held_row_changed_behind_validation_is_the_error_a_matrix_gives(value, read, monkeypatch):
    """A Candidate's owner can make its array writeable, change it and make it read-only again:
    the held rows are checked where they are read, with the message pack gives for a matrix."""
    monkeypatch.setattr(similarity, "HELD_BLOCK_ROWS", 3)
    cands, m = _candidates()
    row = cands[8].embedding
    row.flags.writeable = True
    row[2] = value
    row.flags.writeable = False
    packed = ctxselect.pack(cands, REQS)
    assert isinstance(packed.embedding_data, vectors.HeldRows)
    with pytest.raises(InputError) as held:
        ctxselect.select(cands, REQS, "chunk") if read == "select" else packed.embeddings
    dicts = [{"id": c.id, "source": c.source, "relevance": c.relevance, "tokens": c.tokens, "text": c.text,
              "embedding": c.embedding.tolist()} for c in cands]
    with pytest.raises(InputError) as stacked:
        ctxselect.pack(dicts, REQS)
    assert str(held.value) == str(stacked.value)
    assert str(held.value).startswith("candidate 'c8', field 'embedding[2]'") and "\n" not in str(held.value)


def test_rows_that_are_views_are_not_held():
    """A Candidate built from a dict holds its row of the packed matrix: a view whose base can change."""
    dicts = [{"id": f"c{i}", "source": "s", "relevance": 0.5, "tokens": 5, "text": f"t {i}",
              "embedding": [float(i + 1), 1.0, 0.5]} for i in range(5)]
    cands = list(ctxselect.pack(dicts, REQS).candidates)
    cands[2].embedding.base[2, 0] = 1e200
    packed_again = None
    with pytest.raises(InputError) as info:
        packed_again = ctxselect.pack(cands, REQS)
    assert packed_again is None and str(info.value).startswith("candidate 'c2', field 'embedding[0]'")


def test_a_plain_tuple_is_an_array_to_normalised_rows():
    with pytest.raises(InputError) as info:
        similarity.cosine_pairs((1.0, 2.0), 0.5)
    assert "(n, d) array" in str(info.value)
    i, j, _ = similarity.cosine_pairs((np.array([1.0, 0.0]), np.array([2.0, 0.0])), 0.5)  # two rows
    assert i.tolist() == [0] and j.tolist() == [1]


@pytest.mark.parametrize("case", ["writeable", "float32", "two lengths", "a list", "none", "2-d", "empty",
                                  "zero length", "a view", "all views of one array", "a bytes base",
                                  "big-endian", "all writeable"])
def test_only_validated_rows_are_held(case):
    rows = [np.arange(3.0) + k for k in range(4)]
    for r in rows:
        r.flags.writeable = False
    if case == "writeable":
        rows[2] = rows[2].copy()
    elif case == "float32":
        rows[1] = rows[1].astype(np.float32)
    elif case == "two lengths":
        rows[3] = rows[3][:2]
    elif case == "a list":
        rows[0] = rows[0].tolist()
    elif case == "none":
        rows[2] = None
    elif case == "2-d":
        rows = [r[None, :] for r in rows]
    elif case == "empty":
        rows = []
    elif case == "zero length":
        rows = [np.empty(0) for _ in rows]
        for r in rows:
            r.flags.writeable = False
    elif case == "a view":
        rows[1] = np.arange(6.0)[::2]
        rows[1].flags.writeable = False
    elif case == "all views of one array":  # one base for every row: one kind, its base not None
        whole = np.arange(12.0).reshape(4, 3)
        whole.flags.writeable = False
        rows = list(whole)
    elif case == "a bytes base":  # a hashable base
        rows[2] = np.frombuffer(np.arange(3.0).tobytes(), dtype=np.float64)
    elif case == "big-endian":
        rows[0] = rows[0].astype(">f8")
        rows[0].flags.writeable = False
    elif case == "all writeable":
        rows = [r.copy() for r in rows]
    assert vectors.held_rows(rows) is None
    good = [np.arange(3.0) + k for k in range(4)]
    for r in good:
        r.flags.writeable = False
    held = vectors.held_rows(good)
    assert isinstance(held, vectors.HeldRows) and all(a is b for a, b in zip(held, good)) and len(held) == 4


def test_dicts_and_mixed_candidates_still_pack_a_matrix():
    cands, m = _candidates(6, 4)
    packed = ctxselect.pack([{"id": c.id, "source": c.source, "relevance": c.relevance, "tokens": c.tokens,
                              "text": c.text, "embedding": m[k].tolist()} for k, c in enumerate(cands)], REQS)
    assert isinstance(packed.embedding_data, np.ndarray) and packed.embeddings is packed.embedding_data
    mixed = ctxselect.pack(cands[:3] + [{"id": "d", "source": "s", "relevance": 0.5, "tokens": 5, "text": "x",
                                         "embedding": m[3].tolist()}], REQS)
    assert isinstance(mixed.embedding_data, np.ndarray) and mixed.embedding_dim == 4
    none = ctxselect.pack([Candidate(id="a", source="s", relevance=0.5, tokens=5, text="x")], REQS)
    assert none.embedding_data is None and none.embeddings is None and none.embedding_dim is None
