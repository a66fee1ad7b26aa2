"""Dumps round-trip and write atomically; packing interns strings into arrays."""

import json
from datetime import datetime, timezone

import numpy as np
import pytest
from tests.conftest import EXAMPLES

import ctxselect

EXAMPLE = EXAMPLES / "support_desk.jsonl"


def test_example_dump_reads():
    queries = list(ctxselect.read_dump(EXAMPLE))
    assert [q.query_id for q in queries] == ["support-refund-annual", "support-billing-status",
                                             "support-refund-window"]
    first = queries[0]
    assert first.requirements.token_budget == 600
    assert first.selected[0] == "policy-refund-v2"
    assert first.extra["meta"]["note"].startswith("selected")


def test_read_dump_streams(tmp_path):
    path = tmp_path / "d.jsonl"
    good = {"query_id": "a", "requirements": {"token_budget": 5},
            "candidates": [{"id": "x", "source": "s", "tokens": 1, "relevance": 0.1}]}
    path.write_text(json.dumps(good) + "\n{broken\n")
    stream = ctxselect.read_dump(path)
    assert next(stream).query_id == "a"  # the good line arrives before the bad one is read
    with pytest.raises(ctxselect.InputError, match="line 2"):
        next(stream)


def test_round_trip(tmp_path):
    queries = list(ctxselect.read_dump(EXAMPLE))
    out = tmp_path / "copy.jsonl"
    assert ctxselect.write_dump(out, queries) == 3
    again = list(ctxselect.read_dump(out))
    for a, b in zip(queries, again):
        assert a.requirements == b.requirements
        assert a.candidates == b.candidates
        assert (a.selected, a.gold, dict(a.extra)) == (b.selected, b.gold, dict(b.extra))
        pa, pb = ctxselect.pack(a.candidates, a.requirements), ctxselect.pack(b.candidates, b.requirements)
        assert ctxselect.inspect(a.candidates, a.requirements).metrics == \
            ctxselect.inspect(b.candidates, b.requirements).metrics
        np.testing.assert_array_equal(pa.timestamp, pb.timestamp)


def test_write_dump_is_all_or_nothing(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("previous content\n")
    good = {"query_id": "a", "requirements": {"token_budget": 5},
            "candidates": [{"id": "x", "source": "s", "tokens": 1, "relevance": 0.1}]}
    bad = dict(good, query_id="b", candidates=[{"id": "x", "source": "s", "tokens": 0, "relevance": 0.1}])
    with pytest.raises(ctxselect.InputError, match="query 'b'"):
        ctxselect.write_dump(out, [good, bad])
    assert out.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


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


def test_pluggable_token_counter():
    cands = [{"id": "a", "source": "s", "relevance": 0.5, "text": "abcdefgh"}]
    assert ctxselect.pack(cands, {"token_budget": 5}, token_counter=len).tokens.tolist() == [8]
    ctxselect.set_token_counter(lambda text: 3)
    try:
        assert ctxselect.pack(cands, {"token_budget": 5}).tokens.tolist() == [3]
    finally:
        ctxselect.set_token_counter(None)
    assert ctxselect.pack(cands, {"token_budget": 5}).tokens.tolist() == [2]


def test_time_forms_agree():
    forms = ["2026-01-02T03:04:05Z", "2026-01-02T05:04:05+02:00",
             datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp()]
    stamps = {ctxselect.Candidate(id="a", source="s", relevance=0.1, tokens=1, timestamp=f).timestamp
              for f in forms}
    assert len(stamps) == 1


def test_requirements_round_trip_and_defaults():
    reqs = ctxselect.Requirements.from_dict({"budget": 50, "required_aspects": ["x"], "min_freshness": 0.5,
                                             "gate": {"max_stale_risk": 0.2}})
    assert reqs.token_budget == 50 and reqs.gate.min_freshness == 0.5 and reqs.gate.max_stale_risk == 0.2
    assert reqs.gate.min_coverage == 0.80  # article 000's default
    assert ctxselect.Requirements.from_dict(reqs.to_dict()) == reqs
