"""Dumps read in byte-range partitions (the Dask bench's reader): every line read once, by the
partition it starts in, with the line numbers and the errors of read_jsonl, whatever the
partition size."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxselect.errors import InputError
from ctxselect.model import io as dump_module
from ctxselect.model import partitions
from ctxselect.model.io import read_jsonl
from ctxselect.model.partitions import READERS, JsonlReader, Partition, reader_for, split_file
from tests.conftest import EXAMPLES


def read_partitioned(path, target):
    """What the Dask client makes of the partitions, in order: (file line, value) pairs, or the
    first error with its file line."""
    offset = 0
    for part in split_file(path, target):
        rows = READERS[part.format].rows(part)
        try:
            for row, value in rows:
                yield offset + row, value
        except InputError as err:
            assert err.line is None  # the reader leaves the line to its caller
            raise err.located(line=offset + rows.lines) from None
        offset += rows.lines


def both(path, target):
    """read_jsonl's and the partitioned reader's outcome: the rows, or the error message."""
    out = []
    for reader in (lambda: read_jsonl(path, what="dump"), lambda: read_partitioned(path, target)):
        try:
            out.append(list(reader()))
        except InputError as err:
            out.append(str(err))
    return out


LINES = st.one_of(
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=40)), max_size=4).map(
        lambda d: json.dumps(d, ensure_ascii=False).encode()),
    st.sampled_from([b"", b"   ", b"\r", b'{"a": 1}\r', b"[1, 2", b'{"x": NaN}', b'"\xff"', b'{"k": 1, "k": 2}']),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=12), bom=st.booleans(), newline_at_end=st.booleans(),
       target=st.integers(1, 80))
def test_partitions_read_what_read_jsonl_reads(tmp_path, lines, bom, newline_at_end, target):
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
    path = tmp_path / "d.jsonl"
    path.write_bytes(data)
    whole, parts = both(path, target)
    assert parts == whole


def test_every_line_once_at_any_partition_size(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(EXAMPLES.joinpath("support_desk.jsonl").read_bytes() + b"\n\n" + b'{"tail": 1}')
    expected = list(read_jsonl(path))
    size = path.stat().st_size
    for target in (1, 2, 7, 100, 1000, size - 1, size, 10 * size):
        assert list(read_partitioned(path, target)) == expected, target
        parts = split_file(path, target)
        assert parts[0].start == 0 and parts[-1].stop == size
        assert all(a.stop == b.start for a, b in zip(parts, parts[1:]))
        assert sum(p.weight for p in parts) == size


def test_a_partition_inside_a_long_line_owns_nothing(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": "' + b"x" * 5000 + b'"}\n{"b": 2}\n')
    parts = split_file(path, 100)
    counts = []
    for part in parts:
        rows = READERS["jsonl"].rows(part)
        counts.append(len(list(rows)))
    assert counts[0] == 1 and counts[50] == 1 and sum(counts) == 2  # the second line starts at byte 5010


def test_the_line_cap_is_the_readers(tmp_path, monkeypatch):
    monkeypatch.setattr(dump_module, "MAX_LINE_BYTES", 100)
    fits = b'{"a": "' + b"x" * 90 + b'"}\n'
    path = tmp_path / "d.jsonl"
    path.write_bytes(fits + fits + b" " + fits)
    whole, parts = both(path, 30)
    assert whole == parts and "line 3: line longer than 100 bytes" in parts


def test_what_cannot_be_split(tmp_path):
    with pytest.raises(InputError, match=r"^<stdin>: a dump read in partitions must be a file"):
        split_file("-", 100)
    with pytest.raises(InputError, match=r"missing.jsonl: cannot open dump: No such file"):
        split_file(tmp_path / "missing.jsonl", 100)
    with pytest.raises(InputError, match=r"cannot open dump: Is a directory"):
        split_file(tmp_path, 100)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"pipe: a dump read in partitions must be a regular file"):
        split_file(fifo, 100)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert [(p.start, p.stop) for p in split_file(empty, 100)] == [(0, 0)]
    assert list(read_partitioned(empty, 100)) == []


def test_a_file_gone_before_the_worker_reads_it(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(b'{"a": 1}\n')
    (part,) = split_file(path, 100)
    path.unlink()
    with pytest.raises(InputError, match=r"d.jsonl: cannot open dump: No such file"):
        list(READERS["jsonl"].rows(part))


def test_a_partition_names_the_file_as_given_and_opens_it_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.jsonl").write_bytes(b'{"a": 1}\n')
    (part,) = split_file("d.jsonl", 100)
    assert part == Partition("jsonl", str(tmp_path / "d.jsonl"), "d.jsonl", 0, 9, 9)


def test_a_reader_is_chosen_by_suffix(monkeypatch):
    class Parquet(JsonlReader):
        format, suffixes = "parquet", (".parquet", ".pq")

    monkeypatch.setitem(partitions.READERS, "parquet", Parquet())
    assert reader_for("x/logs.PARQUET").format == "parquet"
    assert reader_for("x/logs.jsonl").format == reader_for("x/logs").format == "jsonl"


def test_a_parquet_dump_is_split_by_its_own_reader_never_as_jsonl(tmp_path):
    """A .parquet name goes to the Parquet reader (row groups, the footer read): a file that is
    not Parquet is one located line, never parsed as JSONL lines."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "dump.parquet"
    path.write_bytes(b"PAR1....PAR1")
    assert reader_for(str(path)).format == "parquet"
    with pytest.raises(InputError, match="cannot open dump as Parquet") as err:
        split_file(path, 100)
    assert "dump.parquet" in str(err.value) and "\n" not in str(err.value)
