"""Dumps read in partitions: small descriptions a process sends, and the readers that parse them
where they land (a Dask worker, ``ctxselect bench --engine dask``).

A :class:`Partition` names a file and a range of it: for JSONL a byte range, where the partition
owns every line whose first byte lies in ``[start, stop)`` (a line crossing ``stop`` is read whole
by the partition it starts in; the next partition skips it). Splitting a JSONL file reads nothing
but its size, so the process that splits never holds, or even reads, the dataset.

Rows are numbered within their partition (1, 2, ...; blank lines count, as in
:func:`~ctxselect.model.io.read_jsonl`): the owner of the partitions turns a row number into the
file's line number by adding the lines of the partitions before it, which each reader reports
(:attr:`PartitionRows.lines`). Errors a reader raises name the file but no line; the caller adds
it. A line is checked exactly as :func:`~ctxselect.model.io.read_jsonl` checks it (UTF-8, the
byte-order mark on the file's first line only, :data:`~ctxselect.model.io.MAX_LINE_BYTES`, strict
JSON), with the same messages.

Another format plugs in as a :class:`PartitionReader` in :data:`READERS` (looked up by name in
the worker, so it must be in this table at import time, not registered at run time), chosen by
file suffix in :func:`reader_for`: its ``split`` returns ranges of its own unit (row groups for
Parquet) and its ``rows`` yields ``(row number, mapping)`` pairs.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import Any, Iterator, Protocol

from ctxselect.errors import InputError
from ctxselect.model import io as dump_io
from ctxselect.model.io import _parse_line

__all__ = ["Partition", "PartitionReader", "PartitionRows", "JsonlReader", "ParquetReader", "READERS", "reader_for",
           "split_file"]

#: Bytes read at a time while looking for the first line a partition owns.
_SCAN = 1 << 20


@dataclass(frozen=True)
class Partition:
    """One piece of a dump, as sent to a worker (a few fields, whatever the size of the piece).

    Attributes
    ----------
    format : str
        The name of its reader in :data:`READERS` ("jsonl").
    path : str
        The file, as the workers open it (absolute).
    name : str
        The file as the user named it (every message uses this).
    start, stop : int
        The range, in the reader's unit (bytes for JSONL).
    weight : int
        Its share of the work, in bytes (for progress).
    """

    format: str
    path: str
    name: str
    start: int
    stop: int
    weight: int


class PartitionRows(Protocol):
    """An iterator of ``(row number within the partition, parsed value)`` for each non-blank row;
    ``lines`` is the number of rows (blank ones included) read so far: when the iterator is
    exhausted, the partition's row count; when it raised, the row that failed."""

    lines: int

    def __iter__(self) -> Iterator[tuple[int, Any]]: ...


class PartitionReader(Protocol):
    """How one file format is split (in the client) and read (in a worker)."""

    format: str
    suffixes: tuple[str, ...]

    def split(self, path: str, size: int, target: int) -> list[tuple[int, int, int]]:
        """``(start, stop, weight)`` ranges covering the file of ``size`` bytes, about ``target``
        bytes each."""
        ...

    def rows(self, part: Partition) -> PartitionRows:
        ...


class _JsonlRows:
    """The lines a JSONL partition owns, parsed (see :func:`JsonlReader.rows`)."""

    def __init__(self, part: Partition, what: str) -> None:
        self.part, self.what, self.lines = part, what, 0

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        part, name = self.part, self.part.name
        try:
            handle = open(part.path, "rb")
        except OSError as err:
            raise InputError(file=name, message=f"cannot open {self.what}: {err.strerror or err}") from None
        with handle:
            try:
                pos = _first_line(handle, part.start, part.stop)
            except OSError as err:
                raise InputError(file=name, message=f"cannot read {self.what}: {err.strerror or err}") from None
            while pos is not None and pos < part.stop:
                self.lines += 1
                limit = dump_io.MAX_LINE_BYTES  # read at run time, as read_jsonl does
                try:
                    raw = handle.readline(limit + 1)
                except OSError as err:
                    raise InputError(file=name, message=f"cannot read {self.what}: {err.strerror or err}") from None
                except MemoryError:
                    raise InputError(file=name, message="line too long to read") from None
                if not raw:
                    self.lines -= 1
                    return
                if len(raw) > limit:
                    raise InputError(file=name, message=f"line longer than {limit:,} bytes (the limit, "
                                                        "MAX_LINE_BYTES)")
                try:
                    present, value = _parse_line(raw, pos == 0)
                except ValueError as err:
                    raise InputError(file=name, message=str(err)) from None
                pos += len(raw)
                del raw
                if present:
                    yield self.lines, value


def _first_line(handle, start: int, stop: int) -> int | None:
    """The offset of the first line starting in ``[start, stop)``, with ``handle`` there; None
    when no line starts in the range (a line longer than the range began before it)."""
    if start == 0:
        handle.seek(0)
        return 0
    handle.seek(start - 1)
    if handle.read(1) == b"\n":
        return start
    pos = start
    while pos < stop - 1:  # a newline at stop - 1 starts the next partition's first line
        block = handle.read(min(_SCAN, stop - 1 - pos))
        if not block:
            return None
        found = block.find(b"\n")
        if found >= 0:
            pos += found + 1
            handle.seek(pos)
            return pos
        pos += len(block)
    return None


class JsonlReader:
    """JSONL split by byte ranges (see the module's description)."""

    format = "jsonl"
    suffixes: tuple[str, ...] = ()  # the default: any file no other reader claims

    def __init__(self, what: str = "dump") -> None:
        self.what = what

    def split(self, path: str, size: int, target: int) -> list[tuple[int, int, int]]:
        if size == 0:
            return [(0, 0, 0)]
        return [(a, min(a + target, size), min(a + target, size) - a) for a in range(0, size, target)]

    def rows(self, part: Partition) -> _JsonlRows:
        return _JsonlRows(part, self.what)


class _ParquetRows:
    """The rows of a Parquet partition's row groups, numbered within the partition (errors name
    the row of the file: :func:`ctxselect.model.parquet.read_parquet_rows`)."""

    def __init__(self, part: Partition) -> None:
        self.part, self.lines = part, 0

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        from ctxselect.model.parquet import read_parquet_rows

        first = None
        for row, data in read_parquet_rows(self.part.path, range(self.part.start, self.part.stop)):
            first = row if first is None else first
            self.lines = row - first + 1
            yield self.lines, data


class ParquetReader:
    """Parquet split by row groups, about ``target`` bytes (compressed) a partition; the client
    reads the footer only."""

    format = "parquet"
    suffixes: tuple[str, ...] = (".parquet",)

    def split(self, path: str, size: int, target: int) -> list[tuple[int, int, int]]:
        from ctxselect.model.parquet import parquet_row_groups

        groups = parquet_row_groups(path)
        out, start, weight = [], 0, 0
        for k, (_rows, size_k) in enumerate(groups):
            weight += max(1, size_k)
            if weight >= target or k == len(groups) - 1:
                out.append((start, k + 1, weight))
                start, weight = k + 1, 0
        return out or [(0, 0, 0)]

    def rows(self, part: Partition) -> _ParquetRows:
        return _ParquetRows(part)


#: The readers by name; :func:`reader_for` picks one by file suffix (JSONL when none claims it).
READERS: dict[str, PartitionReader] = {"jsonl": JsonlReader(), "parquet": ParquetReader()}


def reader_for(path: str) -> PartitionReader:
    """The reader of ``path``: the first in :data:`READERS` claiming its suffix, else JSONL."""
    lower = str(path).lower()
    for reader in READERS.values():
        if reader.suffixes and lower.endswith(reader.suffixes):
            return reader
    return READERS["jsonl"]


def split_file(path: str | os.PathLike, target: int, *, what: str = "dump") -> list[Partition]:
    """Partitions of about ``target`` bytes covering the file ``path`` (its size is all that is
    read).

    Raises
    ------
    InputError
        Naming the file: it cannot be opened, or it is standard input, a pipe or a device (only a
        regular file can be split by ranges).
    """
    name = str(path)
    if name == "-":
        raise InputError(file="<stdin>", message=f"a {what} read in partitions must be a file",
                         expected="a path to a regular file (standard input cannot be split)")
    try:
        info = os.stat(path)  # before opening: opening a pipe would wait for a writer
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if stat.S_ISREG(info.st_mode):
            with open(path, "rb"):
                pass
    except OSError as err:
        raise InputError(file=name, message=f"cannot open {what}: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(file=name, message=f"a {what} read in partitions must be a regular file",
                         expected="a path to a regular file (not a pipe or device)")
    reader = reader_for(name)
    full = os.path.abspath(path)
    return [Partition(reader.format, full, name, start, stop, weight)
            for start, stop, weight in reader.split(full, info.st_size, max(1, int(target)))]
