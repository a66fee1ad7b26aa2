"""Validated candidates' own embeddings are kept as rows (PackedCandidates.embedding_data): the
cosine normalises them a block at a time, bit for bit as it normalises the stacked matrix, and the
matrix is made only when ``embeddings`` is read."""

import numpy as np
import pytest

import ctxselect
from ctxselect import Candidate, InputError
from ctxselect.features import similarity
from ctxselect.model import embeddings as vectors

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
    assert isinstance(packed.embedding_data, tuple) and packed.embedding_dim == 5
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


def test_a_select_on_held_rows_chooses_as_on_the_array():
    cands, m = _candidates(40, 8, seed=5)
    bare = [Candidate(id=c.id, source=c.source, relevance=c.relevance, tokens=c.tokens, text=c.text) for c in cands]
    one = ctxselect.select(cands, REQS, "chunk")
    two = ctxselect.select(bare, REQS, "chunk", embeddings=m)
    assert one.ids == two.ids and one.objective == two.objective and one.status == two.status


def test_a_held_row_made_bad_behind_validation_is_a_located_error(monkeypatch):
    monkeypatch.setattr(similarity, "HELD_BLOCK_ROWS", 3)
    cands, _ = _candidates()
    bad = np.array(cands[8].embedding)
    bad[2] = np.nan
    bad.flags.writeable = False
    object.__setattr__(cands[8], "embedding", bad)  # past the Candidate's own check
    with pytest.raises(InputError) as info:
        ctxselect.select(cands, REQS, method="optimal")
    message = str(info.value)
    assert "'c8'" in message and "\n" not in message


@pytest.mark.parametrize("case", ["writeable", "float32", "two lengths", "a list", "none", "2-d", "empty"])
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
    assert vectors.held_rows(rows) is None
    good = [np.arange(3.0) + k for k in range(4)]
    for r in good:
        r.flags.writeable = False
    assert vectors.held_rows(good) == tuple(good)


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
