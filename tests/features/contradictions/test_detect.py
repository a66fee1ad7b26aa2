"""Detection merges each kind's pairs into one list: highest severity, kinds OR-ed, the superseded
side kept — checked against a plain dict merge."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxselect.features.contradictions.detect import merge_contradictions


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=40),
                                            st.sampled_from([0.2, 0.5, 1.0]), st.sampled_from([1, 2, 4, 8]),
                                            st.booleans()), max_size=5))
def test_contradiction_merge_matches_a_dict_merge(n, raw_parts):
    """The merge that never sorts its largest part gives what a plain dict merge gives."""
    parts, expected = [], {}
    for pairs, severity, kind, with_superseded in raw_parts:
        keys = sorted({(a, b) for a, b in pairs if a < b < n})
        i = np.array([a for a, _ in keys], dtype=np.int64)
        j = np.array([b for _, b in keys], dtype=np.int64)
        superseded = np.where(i % 2 == 0, i, -1) if with_superseded else None
        parts.append((i, j, severity, kind, superseded))
        for k, key in enumerate(keys):
            s0, k0, u0 = expected.get(key, (-1.0, 0, -1))
            expected[key] = (max(s0, severity), k0 | kind, max(u0, -1 if superseded is None else int(superseded[k])))
    merged = merge_contradictions(n, parts)
    got = {(int(a), int(b)): (float(w), int(k), int(u))
           for a, b, w, k, u in zip(merged.i, merged.j, merged.weight, merged.kind, merged.superseded)}
    assert got == expected
    assert list(zip(merged.i.tolist(), merged.j.tolist())) == sorted(expected)
    assert merged.kind.dtype == np.uint8 and merged.i.dtype == np.int64



def test_versions_with_digits_that_are_not_decimal_order_without_a_traceback():
    """'²' is a digit to str.isdigit but no decimal: a version holding it is a name part, not a
    number (int('²') raised ValueError through select())."""
    import ctxselect

    chunks = [{"id": "a", "source": "s", "tokens": 5, "relevance": 0.5, "doc_id": "d", "version": "v²"},
              {"id": "b", "source": "s", "tokens": 5, "relevance": 0.4, "doc_id": "d", "version": "v٣"},
              {"id": "c", "source": "s", "tokens": 5, "relevance": 0.3, "doc_id": "d", "version": "v2"}]
    selection = ctxselect.select(chunks, {"token_budget": 15})
    assert len(selection.ids) == 1  # one version of the document, the others superseded
    assert set(selection.excluded) == {"a", "b", "c"} - set(selection.ids)
