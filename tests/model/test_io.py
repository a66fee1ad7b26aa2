"""Dumps and JSON lines in: strict reading (issue 11: a byte order mark only at the start, errors
naming file and line, the line cap, pipes, surrogates), dumps that stream, round-trip and are
written all or nothing."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.model import io as dump_module
from ctxselect.model.io import read_jsonl
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "support_desk.jsonl"


def write_bytes(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    return path


def test_a_byte_order_mark_is_accepted_only_at_the_start(tmp_path):
    path = write_bytes(tmp_path, b'\xef\xbb\xbf{"a": 1}\r\n\n{"b": 2}\n')
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (3, {"b": 2})]
    path = write_bytes(tmp_path, b'{"a": 1}\n\xef\xbb\xbf{"b": 2}\n')
    with pytest.raises(InputError, match="line 2: malformed JSON"):
        list(read_jsonl(path))


@pytest.mark.parametrize("data,fragment", [
    (b'{"a": "caf\xc3"}\n', "line 1: not UTF-8 text (byte 0xc3 at byte 11 of the line)"),
    (b'{"a": 1}\n{"b": "\xed\xa0\x80"}\n', "line 2: not UTF-8 text (byte 0xed"),  # an encoded surrogate
    (b'{"a": 1}\n\x1f\x8b\n', "line 2: not UTF-8 text (byte 0x8b"),  # gzip's hint is for line 1 only
    (b'{"a": {"b": 1, "b": 2}}\n', "line 1: duplicate key 'b' in a JSON object"),
    (b'{"a\\n": 1, "a\\n": 2}\n', "duplicate key 'a\\n'"),
    (b'["\\ud800"]\n', "line 1: a JSON string holds a lone surrogate (\\ud800)"),
    (b'[{"x": ["\\uDBFF"]}]\n', "lone surrogate (\\udbff)"),
    (b'{"a": Infinity}\n', "line 1: malformed JSON (Infinity is not valid JSON)"),
])
def test_read_errors_name_the_file_and_line(tmp_path, data, fragment):
    path = write_bytes(tmp_path, data)
    with pytest.raises(InputError) as info:
        list(read_jsonl(path, what="dump"))
    assert str(info.value).startswith(f"{path}, line ") and fragment in str(info.value), str(info.value)


def test_a_surrogate_pair_is_text(tmp_path):
    path = write_bytes(tmp_path, b'{"emoji": "\\ud83d\\ude00", "escaped": "\\\\ud800"}\n')
    assert list(read_jsonl(path)) == [(1, {"emoji": "\U0001f600", "escaped": "\\ud800"})]


def test_the_line_cap_is_exact(tmp_path, monkeypatch):
    monkeypatch.setattr(dump_module, "MAX_LINE_BYTES", 100)
    fits = b'{"a": "' + b"x" * 90 + b'"}\n'
    assert len(fits) == 100
    assert list(read_jsonl(write_bytes(tmp_path, fits + fits)))[1][0] == 2
    with pytest.raises(InputError, match=r"line 2: line longer than 100 bytes"):
        list(read_jsonl(write_bytes(tmp_path, fits + b" " + fits)))
    with pytest.raises(InputError, match=r"line 1: line longer than 100 bytes"):
        list(read_jsonl(write_bytes(tmp_path, b" " * 500)))  # no newline at all


def test_a_pipe_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(EXAMPLE.read_bytes()))
    writer.start()
    try:
        assert [q.query_id for q in ctxselect.read_dump(fifo)] == [q.query_id for q in ctxselect.read_dump(EXAMPLE)]
    finally:
        writer.join(timeout=10)


def test_query_text_is_a_string_or_null(tmp_path):
    line = {"query_id": "q", "requirements": {"token_budget": 10},
            "candidates": [{"id": "c", "source": "s", "tokens": 1, "relevance": 0.5}]}
    for value, text in [(None, ""), ("", ""), ("why?", "why?")]:
        assert ctxselect.Query.from_dict({**line, "query": value}).query == text
    assert ctxselect.Query.from_dict(line).query == ""
    for value in (0, [], {}, False, 1.5):
        with pytest.raises(InputError, match=r"query 'q', field 'query': expected a string"):
            ctxselect.Query.from_dict({**line, "query": value})


def test_selected_ids_are_unique(tmp_path):
    line = {"query_id": "q", "requirements": {"token_budget": 10}, "selected": ["a", "b", "a"],
            "candidates": [{"id": k, "source": "s", "tokens": 1, "relevance": 0.5} for k in "ab"]}
    with pytest.raises(InputError, match=r"candidate 'a', field 'selected': duplicate id in selected"):
        ctxselect.Query.from_dict(line)


def test_a_dump_round_trips_hostile_strings(tmp_path):
    hostile = ["[/x]", "a\nb", "\x1b[31m", "\u202e", "é", "\U0001f600"]
    line = {"query_id": "q\x00", "query": "\t", "requirements": {"token_budget": 10},
            "candidates": [{"id": h, "source": h, "tokens": 1, "relevance": 0.5, "text": h} for h in hostile]}
    out = tmp_path / "out.jsonl"
    ctxselect.write_dump(out, [line])
    query = next(ctxselect.read_dump(out))
    assert query.query_id == "q\x00" and [c.id for c in query.candidates] == hostile
    assert json.loads(out.read_text(encoding="utf-8"))["candidates"][4]["text"] == "é"


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

