"""Parquet dumps (issue 15.6): the same queries as JSONL, read in batches, errors naming the row, and a
one-line error naming the extra when pyarrow is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.evaluate.generate import GeneratorConfig, generate_queries
from ctxselect.model import parquet as parquet_module
from ctxselect.model.io import read_dump, write_dump
from tests.conftest import EXAMPLES, ROOT

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

EXAMPLE = EXAMPLES / "support_desk.jsonl"


def tricky_query(qid: str = "q-é") -> dict:
    """Every kind of value a dump may hold: claim fields of mixed kinds, embeddings, extra keys
    (one named `extra`, one null), gold sets, selected, unicode and escapes."""
    cands = [
        {"id": "a", "source": "wiki", "tokens": 12, "relevance": 0.1 + 0.2, "text": "Zürich 東京 \"quoted\"\n",
         "fields": {"price": 1, "flag": True, "code": "1", "ratio": 1e-300}, "embedding": [0.1, -2.5e-8, 3.0],
         "timestamp": "2026-01-01T00:00:00Z", "title": {"nested": [1, None, {"x": "y"}]}},
        {"id": "b", "source": "news", "tokens": 7, "relevance": 0.9, "fields": {"price": 1.5, "flag": False,
         "code": 1}, "embedding": [1e-5, 2.0, 1 / 3], "doc_id": "d", "version": "2"},
    ]
    return {"query_id": qid, "query": "what \U0001f600?", "requirements": {"token_budget": 15,
            "conflict_fields": {"price": 0.5}, "gate": {"min_coverage": 0.2}},
            "candidates": cands, "gold": [["a"], ["b"]], "selected": ["b", "a"],
            "meta": {"planted": None, "k": [1.25, "x"]}, "extra": {"kept": True}, "nothing": None}


def jsonl_bytes(queries) -> bytes:
    return b"".join(json.dumps(q.to_dict(), ensure_ascii=False, allow_nan=False).encode() + b"\n" for q in queries)


@pytest.mark.parametrize("config", [
    GeneratorConfig(queries=5, candidates=20, seed=3),
    GeneratorConfig(queries=3, candidates=15, embedding_dim=8, planted_rate=1.0, planted_majority_rate=0.5, seed=4),
])
def test_a_generated_dump_round_trips_through_parquet_byte_for_byte(tmp_path, config):
    jsonl, parquet, again = tmp_path / "g.jsonl", tmp_path / "g.parquet", tmp_path / "again.jsonl"
    assert write_dump(jsonl, generate_queries(config)) == config.queries
    assert write_dump(parquet, read_dump(jsonl)) == config.queries
    assert write_dump(again, read_dump(parquet)) == config.queries
    assert again.read_bytes() == jsonl.read_bytes()
    assert pq.ParquetFile(parquet).schema_arrow.names == list(parquet_module.COLUMNS)
    assert pq.ParquetFile(parquet).schema_arrow.metadata == {b"ctxselect": b"dump/1"}


def test_every_kind_of_field_round_trips(tmp_path):
    original = [ctxselect.Query.from_dict(tricky_query()), ctxselect.Query.from_dict(
        {"query_id": "plain", "requirements": {"token_budget": 3}, "candidates": [{"id": "x", "source": "s",
                                                                                   "relevance": 1, "tokens": 1}]})]
    path = tmp_path / "t.PARQUET"  # the extension in any case
    write_dump(path, original)
    back = list(read_dump(path))
    assert [q.to_dict() for q in back] == [q.to_dict() for q in original]
    assert jsonl_bytes(back) == jsonl_bytes(original)
    assert back[0].extra == {"meta": {"planted": None, "k": [1.25, "x"]}, "extra": {"kept": True}, "nothing": None}
    assert back[0].candidates[0].embedding is not None and back[1].gold is None and back[1].selected is None


def test_reading_goes_batch_by_batch_and_rows_count_across_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet_module, "BATCH_ROWS", 4)
    rows = [{"query_id": f"q{k}", "requirements": {"token_budget": 5},
             "candidates": [{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}]} for k in range(10)]
    path = tmp_path / "many.parquet"
    write_dump(path, rows)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3  # 4 + 4 + 2
    batches = []
    real = pq.ParquetFile.iter_batches

    def spy(self, batch_size, **kwargs):
        for batch in real(self, batch_size=batch_size, **kwargs):
            batches.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("read the whole file"))
    stream = read_dump(path)
    assert next(stream).query_id == "q0" and batches == [4]  # one batch read for the first query
    assert [q.query_id for q in stream] == [f"q{k}" for k in range(1, 10)] and batches == [4, 4, 2]
    rows[8]["candidates"][0]["relevance"] = 2
    table = pq.read_table(path)
    bad = table.set_column(3, "candidates", pa.array([json.dumps(r["candidates"]) for r in rows]))
    pq.write_table(bad, tmp_path / "bad.parquet", row_group_size=4)
    with pytest.raises(InputError) as info:
        list(read_dump(tmp_path / "bad.parquet"))
    assert str(info.value).startswith(f"{tmp_path / 'bad.parquet'}, row 9, query 'q8', candidate 'a', "
                                      "field 'relevance': expected a number in [0, 1]")


def table_of(**columns) -> "pa.Table":
    base = {"query_id": ["q1"], "requirements": ['{"token_budget": 5}'],
            "candidates": ['[{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}]']}
    base.update(columns)
    return pa.table({k: v for k, v in base.items() if v is not None})


@pytest.mark.parametrize("columns,message", [
    ({"candidates": ['[{"id": "a", "source": "s", "tokens": 1, "relevance": NaN}]']},
     "row 1, field 'candidates': malformed JSON (NaN is not valid JSON)"),
    ({"requirements": ['{"token_budget": 5, "token_budget": 6}']},
     "row 1, field 'requirements': duplicate key 'token_budget' in a JSON object"),
    ({"candidates": ['[{"id": "\\ud800", "source": "s", "tokens": 1}]']}, "row 1, field 'candidates': a JSON "
     "string holds a lone surrogate (\\ud800)"),
    ({"candidates": ["[{"]}, "row 1, field 'candidates': malformed JSON"),
    ({"query_id": ["q1", "q1"], "requirements": ['{"token_budget": 5}'] * 2,
      "candidates": ['[{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}]'] * 2},
     "row 2, query 'q1', field 'query_id': duplicate query id"),
    ({"query_id": [None]}, "row 1, field 'query_id': missing required field"),
    ({"candidates": ['{"id": "a"}']}, "row 1, query 'q1', field 'candidates': expected a list of candidates"),
    ({"extra": ['[1]']}, "row 1, field 'extra': expected a JSON object of the query's other keys, found list"),
    ({"extra": ['{"gold": ["a"]}']}, "row 1, field 'extra.gold': a key that has its own column"),
    ({"labels": ['{}']}, "field 'labels': unknown column; expected the columns query_id, query, requirements"),
    ({"candidates": None}, "field 'candidates': missing column"),
    ({"requirements": [5]}, "field 'requirements': a column of type int64; expected a string column of JSON text"),
    ({"query_id": [7]}, "field 'query_id': a column of type int64; expected a string column"),
])
def test_bad_rows_and_columns_are_located(tmp_path, columns, message):
    path = tmp_path / "bad.parquet"
    pq.write_table(table_of(**columns), path)
    with pytest.raises(InputError) as info:
        list(read_dump(path))
    assert str(info.value).startswith(f"{path}, ") and message in str(info.value), str(info.value)


def test_a_file_that_is_not_parquet(tmp_path):
    path = tmp_path / "dump.parquet"
    path.write_bytes(EXAMPLE.read_bytes())
    with pytest.raises(InputError, match=r"dump.parquet: cannot open dump as Parquet: "):
        list(read_dump(path))
    with pytest.raises(InputError, match=r"missing.parquet: cannot open dump as Parquet: .*[Nn]o such file"):
        list(read_dump(tmp_path / "missing.parquet"))
    jsonl = tmp_path / "p.jsonl"
    write_dump(tmp_path / "p.parquet", read_dump(EXAMPLE))
    jsonl.write_bytes((tmp_path / "p.parquet").read_bytes())
    with pytest.raises(InputError, match=r"line 1: not UTF-8 text .*it looks like Parquet \(a dump is read as "
                                         r"Parquet when its name ends in .parquet\)"):
        list(read_dump(jsonl))


def test_a_cell_that_is_not_utf8_names_its_row(tmp_path):
    good = '[{"id": "a", "source": "s", "tokens": 1, "relevance": 0.5}]'.encode()
    data = good + b'[{"id": "\xff"}]'
    offsets = pa.py_buffer(pa.array([0, len(good), len(data)], pa.int32()).buffers()[1])
    broken = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(data)])
    table = pa.table({"query_id": ["q1", "q2"], "requirements": ['{"token_budget": 5}'] * 2, "candidates": broken})
    path = tmp_path / "latin.parquet"
    pq.write_table(table, path)
    with pytest.raises(InputError) as info:
        list(read_dump(path))
    assert str(info.value) == f"{path}, row 2, field 'candidates': not UTF-8 text (byte 0xff at byte 10 of the cell)"


def test_missing_pyarrow_is_one_error_naming_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "d.parquet"
    write_dump(path, read_dump(EXAMPLE))
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    expected = f"{path}: Parquet dumps need pyarrow; expected pip install 'ctxselect[parquet]'"
    with pytest.raises(InputError) as info:
        list(read_dump(path))
    assert str(info.value) == expected
    out = tmp_path / "new.parquet"
    with pytest.raises(InputError, match="need pyarrow"):
        write_dump(out, read_dump(EXAMPLE))
    assert not out.exists() and list(tmp_path.iterdir()) == [path]


def test_jsonl_reading_never_imports_pyarrow():
    code = ("import sys, ctxselect; list(ctxselect.read_dump(sys.argv[1])); "
            "print('pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(EXAMPLE)], capture_output=True, text=True, check=True,
                         cwd=ROOT, timeout=300)
    assert out.stdout.strip() == "False"


def test_write_to_a_bad_target_keeps_the_rules(tmp_path):
    folder = tmp_path / "x.parquet"
    folder.mkdir()
    with pytest.raises(InputError, match="not a regular file"):
        write_dump(folder, read_dump(EXAMPLE))
    assert [p.name for p in tmp_path.iterdir()] == ["x.parquet"] and not list(folder.iterdir())


def test_an_empty_dump_is_a_valid_file(tmp_path):
    path = tmp_path / "empty.parquet"
    assert write_dump(path, []) == 0
    assert list(read_dump(path)) == [] and Path(path).stat().st_size > 0
