"""selection/versions.Supersession against its plain-Python twin (tests/naive/versions.py: the newer
chunks read pair by pair from the listed version conflicts), on fixed, random and edge inputs, and
on one long document in two versions, where the pairs number a quarter of n²."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ctxselect
from ctxselect.packing import pack
from ctxselect.selection.versions import supersession
from tests.helpers import MiB, peak_memory
from tests.naive.versions import naive_first_newer


def _chunk(k, doc=None, version=None, stamp=None):
    c = {"id": f"c{k}", "source": "s", "tokens": 5, "relevance": 0.5, "text": f"text {k}"}
    if doc is not None:
        c["doc_id"] = doc
    if version is not None:
        c["version"] = version
    if stamp is not None:
        c["timestamp"] = stamp
    return c


def _packed(chunks, version_conflicts=True):
    return pack(chunks, {"token_budget": 100, "version_conflicts": version_conflicts})


def test_a_later_version_supersedes_and_the_first_allowed_newer_is_named():
    packed = _packed([_chunk(0, "d", "v9"), _chunk(1, "d", "v10"), _chunk(2, "d", "v2"), _chunk(3, "e", "v1"),
                      _chunk(4, "d", "v10")])
    s = supersession(packed)
    assert s.first_newer(np.ones(5, bool)) == {0: 1, 2: 0}  # v10 > v9 > v2 (natural order); e alone
    assert s.first_newer(np.array([True, False, True, True, True])) == {0: 4, 2: 0}
    assert s.first_newer(np.array([False, False, True, True, False])) == {}


def test_versions_that_rank_alike_go_by_timestamp_only_when_both_are_dated():
    packed = _packed([_chunk(0, "d", "v1", 100.0), _chunk(1, "d", "V1", 200.0), _chunk(2, "d", "v.1"),
                      _chunk(3, "d", "v_1", 100.0)])
    got = supersession(packed).first_newer(np.ones(4, bool))
    assert got == {0: 1, 3: 1} == naive_first_newer(packed, np.ones(4, bool))


def test_nothing_without_version_conflicts_docs_or_versions():
    chunks = [_chunk(0, "d", "v1"), _chunk(1, "d", "v2"), _chunk(2, None, "v3"), _chunk(3, "d", None)]
    assert supersession(_packed(chunks, version_conflicts=False)).first_newer(np.ones(4, bool)) == {}
    assert supersession(_packed(chunks)).first_newer(np.ones(4, bool)) == {0: 1}
    assert not supersession(_packed([_chunk(0, "d", "v1"), _chunk(1, "d", "v1")]))


@pytest.mark.parametrize("seed", range(60))
def test_random_documents_equal_the_pairwise_twin(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 40)
    chunks = [_chunk(k, rng.choice(["a", "b", "c", None]), rng.choice(["v1", "V1", "v.1", "v2", "v10", "x", "2", None]),
                     rng.choice([1e9, 1e9 + 5, 1e9 + 9, None])) for k in range(n)]
    packed = _packed(chunks, version_conflicts=rng.random() < 0.9)
    s = supersession(packed)
    for _ in range(5):
        allowed = np.array([rng.random() < 0.6 for _ in range(n)])
        assert s.first_newer(allowed) == naive_first_newer(packed, allowed)


def test_one_long_document_in_two_versions():
    # 3,000 chunks of one document, v0 and v1 alternating: 2.25 M version pairs, read from the codes
    n = 3000
    packed = _packed([_chunk(k, "handbook", f"v{k % 2}", 1e9 + k) for k in range(n)])
    allowed = np.zeros(n, bool)
    allowed[[7, 2001]] = True
    got = supersession(packed).first_newer(allowed)
    assert got == {k: 7 for k in range(0, n, 2)}


def test_select_on_one_document_in_two_versions_takes_memory_linear_in_n():
    # a helper's hunt: 5,000 chunks of one document in v0 and v1 took 5 s and 1.4 GB (6.25 M version
    # pairs listed, then merged, penalised and inverted); the codes make none
    n = 4000
    chunks = [{"id": f"c{k}", "source": f"s{k % 3}", "tokens": 10 + k % 7, "relevance": (k % 97) / 97,
               "text": f"handbook section {k}", "doc_id": "handbook", "version": f"v{k % 2}",
               "timestamp": 1.7e9 + k} for k in range(n)]
    sel, peak = peak_memory(lambda: ctxselect.select(chunks, {"token_budget": 400}, time_limit=5))
    assert peak < 128 * MiB, peak / MiB  # 53 MiB; its 4 M version pairs took 837 MiB (2026-12-06)
    assert sel.ids and {c[-1] for c in (chunks[int(i[1:])]["version"] for i in sel.ids)} == {"1"}
    assert sel.excluded["c0"].startswith("superseded by `c1`")
