"""Packing interns strings into arrays."""

from datetime import datetime, timezone

import numpy as np
import pytest

import ctxselect


def test_pack_arrays():
    cands = [
        {"id": "a", "source": "policy", "tokens": 10, "relevance": 0.9, "scope": "public",
         "doc_id": "d", "version": "2", "aspects": ["steps", "extra"], "fields": {"w": 30},
         "timestamp": "2026-10-22T00:00:00Z"},
        {"id": "b", "source": "wiki", "tokens": 20, "relevance": 0.5, "scope": "internal",
         "doc_id": "d", "version": "1", "w": 14},  # article 000's shape: claim at the top level
        {"id": "c", "source": "policy", "text": "one two three four five six seven eight nine ten",
         "relevance": 0.1, "timestamp": datetime(2026, 11, 1, tzinfo=timezone.utc)},
    ]
    reqs = {"token_budget": 100, "required_aspects": {"steps": 2.0, "availability": 1.0},
            "required_sources": {"status": 1, "policy": 2}, "allowed_scopes": ["public"],
            "conflict_fields": ["w"], "now": "2026-11-01T00:00:00Z", "max_per_source": {"wiki": 1}}
    p = ctxselect.pack(cands, reqs)
    assert p.n == 3 and p.ids == ("a", "b", "c")
    assert p.tokens.tolist() == [10, 20, 13]  # 10 words x 1.3, the default counter
    assert p.source_names == ("status", "policy", "wiki")  # required sources first
    assert p.source.tolist() == [1, 2, 1]
    assert p.source_min.tolist() == [1, 2, 0]
    assert p.source_max[2] == 1 and p.source_max[1] > 10**9
    assert p.admissible.tolist() == [True, False, False]
    assert p.aspect_names == ("steps", "availability", "extra")
    assert p.aspect_weights.tolist() == [2.0, 1.0, 0.0]
    assert p.aspects.tolist() == [[True, False, True], [False, False, False], [False, False, False]]
    assert p.field_values[:, 0].tolist() == [0, 1, -1]
    assert p.field_value_names == ((30, 14),)
    assert p.doc.tolist() == [0, 0, -1] and p.version.tolist() == [0, 1, -1]
    assert p.has_timestamp.tolist() == [True, False, True]
    assert p.age_days.tolist() == pytest.approx([10.0, 0.0, 0.0])
    assert p.embeddings is None
    for array in (p.tokens, p.relevance, p.source, p.scope, p.doc, p.aspects, p.field_values, p.age_days):
        assert isinstance(array, np.ndarray) and array.dtype != object


def test_pack_embeddings_and_masks():
    cands = [{"id": str(i), "source": "s", "tokens": 1, "relevance": 0.5, "embedding": [i, 1.0]}
             for i in range(3)]
    p = ctxselect.pack(cands, {"token_budget": 5})
    assert p.embeddings.shape == (3, 2) and p.embeddings.dtype == np.float64
    assert p.mask_of(["2", "0"]).tolist() == [True, False, True]
    with pytest.raises(ctxselect.InputError, match="candidate 'zz'.*unknown candidate id"):
        p.index_of(["zz"])


@pytest.mark.parametrize("values", [[], [None], [None] * 5, [None, 3.5, None], [2.0, None], [1.0, -0.0, 7e9],
                                    [None, None, 0.0]])
@pytest.mark.parametrize("missing", [np.nan, -np.inf, np.inf])
def test_times_are_the_plain_conversion(values, missing):
    """Times as float64 with ``missing`` for None: the shortcut for no time given is the plain conversion."""
    from ctxselect.packing import _times

    plain = np.array(values, dtype=np.float64)
    plain[np.isnan(plain)] = missing
    got = _times(values, missing)
    assert got.dtype == np.float64 and got.shape == (len(values),)
    assert np.array_equal(got, plain, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(plain))
