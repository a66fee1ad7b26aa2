"""The prefilter's table of exotic code points is computed once per Python and code, then read
from the kernel cache directory: the same table, and a damaged file is computed again."""

import numpy as np

from ctxselect import _config
from ctxselect.text import claim_keys


def _fresh(monkeypatch, directory):
    monkeypatch.setattr(_config, "CACHE_DIR", str(directory))
    claim_keys.exotic_code_points.cache_clear()


def test_the_stored_table_is_the_computed_one(tmp_path, monkeypatch):
    expected = claim_keys.find_exotic_code_points()
    _fresh(monkeypatch, tmp_path)
    first = claim_keys.exotic_code_points()
    stored = list(tmp_path.glob("exotic-*.npy"))
    assert len(stored) == 1 and not list(tmp_path.glob("*.tmp"))
    assert (first is None) == (expected is None) and (expected is None or np.array_equal(first, expected))
    _fresh(monkeypatch, tmp_path)
    np.testing.assert_array_equal(claim_keys.exotic_code_points(), np.load(stored[0]))
    marked = np.array([0xD800, 0xD801], dtype=np.int64)  # a table no computation gives: read, not recomputed
    np.save(stored[0], marked)
    _fresh(monkeypatch, tmp_path)
    np.testing.assert_array_equal(claim_keys.exotic_code_points(), marked)
    claim_keys.exotic_code_points.cache_clear()


def test_a_damaged_or_unwritable_cache_means_computing(tmp_path, monkeypatch):
    expected = claim_keys.find_exotic_code_points()
    _fresh(monkeypatch, tmp_path)
    claim_keys.exotic_code_points()
    (path,) = tmp_path.glob("exotic-*.npy")
    path.write_bytes(b"not a table")
    _fresh(monkeypatch, tmp_path)
    got = claim_keys.exotic_code_points()
    assert (got is None) == (expected is None) and (expected is None or np.array_equal(got, expected))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _fresh(monkeypatch, blocker / "sub")  # no such directory: nothing stored, the table computed
    got = claim_keys.exotic_code_points()
    assert (got is None) == (expected is None) and (expected is None or np.array_equal(got, expected))
    claim_keys.exotic_code_points.cache_clear()
