"""Candidate dumps as Parquet (pyarrow is an optional extra: ``pip install 'ctxselect[parquet]'``).

A path ending in ``.parquet`` (any case) is a Parquet dump wherever a dump is read or written
(:func:`ctxselect.model.io.read_dump`, :func:`ctxselect.model.io.write_dump`, every command).

The schema: one row per query, seven string columns (``large_string`` for the JSON ones) (the file's key-value metadata says
``ctxselect: dump/1``)::

    query_id      the query's id (required)
    query         the question's text (null: "")
    requirements  JSON text: the requirements object (required)
    candidates    JSON text: the list of candidate objects (required)
    gold          JSON text: gold ids or id sets (null: no gold)
    selected      JSON text: the list of selected ids (null: none)
    extra         JSON text: an object of the query's other keys, ``meta`` ... (null: none)

Nested values are JSON text, not Parquet structs, so that every field round-trips exactly: claim
fields whose values differ in kind from one candidate to the next (``true``, ``1``, ``"1"``),
embeddings, extra keys, ``null`` against absent. A JSONL dump written from a Parquet dump that was
written from it is the same file byte for byte.

Reading streams the file in batches of :data:`BATCH_ROWS` rows (never the whole file at once) and
is as strict as JSONL reading: every JSON cell goes through the same parser (no duplicate key, no
NaN, no lone surrogate), and every error names the file and the row (1-based over the file), and
the column for a cell. Writing is atomic (:func:`ctxselect.model.files.open_atomic`), a row group
every :data:`BATCH_ROWS` queries.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Iterator, Mapping

from ctxselect.errors import InputError, plain_reason
from ctxselect.model.files import open_atomic

__all__ = ["BATCH_ROWS", "COLUMNS", "is_parquet", "parquet_row_groups", "read_parquet_rows", "require_pyarrow", "write_parquet_rows"]

#: Rows read per batch and written per row group.
BATCH_ROWS = 64
#: The columns of a Parquet dump, in order.
COLUMNS = ("query_id", "query", "requirements", "candidates", "gold", "selected", "extra")
_TEXT = ("query_id", "query")
_OWN = COLUMNS[:-1]  # the keys with their own column (a query's own key "extra" goes into `extra`)
_REQUIRED = ("query_id", "requirements", "candidates")
_FORMAT = {b"ctxselect": b"dump/1"}


def is_parquet(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a Parquet dump (its name ends in ``.parquet``; ``-`` never does)."""
    return str(path).lower().endswith(".parquet")


def require_pyarrow(file: str | None = None) -> tuple[Any, Any]:
    """``(pyarrow, pyarrow.parquet)``, or an InputError naming the extra to install."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise InputError(file=file, message="Parquet dumps need pyarrow",
                         expected="pip install 'ctxselect[parquet]'") from None
    return pyarrow, pyarrow.parquet


def _reason(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def _check_schema(schema: Any, pa: Any, name: str) -> list[str]:
    present = list(schema.names)
    for column in present:
        if column not in COLUMNS:
            raise InputError(file=name, field=column, message="unknown column",
                             expected="the columns " + ", ".join(COLUMNS))
    for column in _REQUIRED:
        if column not in present:
            raise InputError(file=name, field=column, message="missing column",
                             expected="the columns " + ", ".join(COLUMNS))
    if len(set(present)) != len(present):
        raise InputError(file=name, message="a column given twice", expected="each column once")
    for column in present:
        kind = schema.field(column).type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)):
            raise InputError(file=name, field=column, message=f"a column of type {kind}",
                             expected="a string column" + ("" if column in _TEXT else " of JSON text"))
    return present


def _values(column: Any, name: str, first_row: int, field: str) -> list:
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        for k in range(len(column)):
            try:
                column[k].as_py()
            except UnicodeDecodeError as err:
                raise InputError(file=name, row=first_row + k, field=field, message=f"not UTF-8 text (byte "
                                 f"0x{err.object[err.start]:02x} at byte {err.start + 1} of the cell)") from None
        raise  # pragma: no cover - the whole column failed but no cell does


def _cell(column: str, value: Any) -> Any:
    from ctxselect.model.io import parse_json_text

    if column in _TEXT:
        return value
    return parse_json_text(value)


def parquet_row_groups(path: str | os.PathLike) -> list[tuple[int, int]]:
    """``(rows, bytes)`` of each row group of a Parquet dump, from its footer alone (how the
    dump is split into partitions: :mod:`ctxselect.model.partitions`).

    Raises
    ------
    InputError
        Without pyarrow, or for a file that is not Parquet.
    """
    name = str(path)
    pa, pq = require_pyarrow(name)
    try:
        with pq.ParquetFile(path) as source:
            meta = source.metadata
            return [(meta.row_group(k).num_rows, meta.row_group(k).total_byte_size) for k in range(meta.num_row_groups)]
    except (OSError, pa.ArrowException) as err:
        raise InputError(file=name, message=f"cannot open dump as Parquet: {_reason(err)}") from None


def read_parquet_rows(path: str | os.PathLike, row_groups: range | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Read a Parquet dump as ``(row number, query object)`` pairs, batch by batch: the whole
    file, or the row groups ``row_groups`` (a partition; rows keep their numbers in the file).

    Raises
    ------
    InputError
        Without pyarrow (naming the extra); for a file that cannot be opened or read or is not
        Parquet, an unknown or missing column, a column that is not text; for a cell that is not
        UTF-8 or not valid JSON (naming the row and column), or an ``extra`` that is not an object
        or repeats a column's key.
    """
    name = str(path)
    pa, pq = require_pyarrow(name)
    try:
        source = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as err:
        raise InputError(file=name, message=f"cannot open dump as Parquet: {_reason(err)}") from None
    with source:
        present = _check_schema(source.schema_arrow, pa, name)
        groups = list(range(source.metadata.num_row_groups) if row_groups is None else row_groups)
        row = sum(source.metadata.row_group(k).num_rows for k in range(groups[0])) if groups else 0
        batches = source.iter_batches(batch_size=BATCH_ROWS, row_groups=groups, columns=present, use_threads=False)
        while True:
            try:
                batch = next(batches, None)
            except (OSError, pa.ArrowException) as err:
                raise InputError(file=name, row=row + 1, message=f"cannot read dump: {_reason(err)}") from None
            if batch is None:
                return
            columns = {c: _values(batch.column(c), name, row + 1, c) for c in present}
            for k in range(batch.num_rows):
                row += 1
                data: dict[str, Any] = {}
                for column in present:
                    value = columns[column][k]
                    if value is None:
                        continue
                    try:
                        data[column] = _cell(column, value)
                    except ValueError as err:
                        raise InputError(file=name, row=row, field=column, message=str(err)) from None
                extra = data.pop("extra", None)
                if extra is not None:
                    if not isinstance(extra, dict):
                        raise InputError(file=name, row=row, field="extra", expected="a JSON object of the "
                                         "query's other keys", found=extra, has_found=True)
                    for key, value in extra.items():
                        if key in _OWN:
                            raise InputError(file=name, row=row, field=f"extra.{key}",
                                             message="a key that has its own column", expected="other keys")
                        data[key] = value
                yield row, data


def _json_text(value: Any, name: str, row: int, column: str) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, RecursionError) as err:
        reason = "a lone surrogate in a string" if isinstance(err, UnicodeEncodeError) else plain_reason(err)
        raise InputError(file=name, row=row, field=column, message=f"cannot be written as JSON ({reason})") from None
    return text


def write_parquet_rows(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write query objects (``Query.to_dict()``) as a Parquet dump, atomically.

    Returns
    -------
    int
        The number of rows written.
    """
    name = str(path)
    pa, pq = require_pyarrow(name)
    # JSON columns as large_string (64-bit offsets): 64 queries of big candidate lists can pass 2 GiB
    schema = pa.schema([pa.field(c, pa.string() if c in _TEXT else pa.large_string(), nullable=c != "query_id")
                        for c in COLUMNS], metadata=_FORMAT)
    count = 0
    with open_atomic(path, binary=True) as handle:
        writer = pq.ParquetWriter(handle, schema)
        try:
            group: dict[str, list] = {c: [] for c in COLUMNS}
            for item in rows:
                count += 1
                for column in COLUMNS:
                    if column == "extra":
                        other = {k: v for k, v in item.items() if k not in _OWN}
                        group[column].append(_json_text(other, name, count, column) if other else None)
                    elif column in _TEXT:
                        group[column].append(item.get(column))
                    else:
                        value = item.get(column)
                        group[column].append(None if column not in item else _json_text(value, name, count, column))
                if len(group["query_id"]) == BATCH_ROWS:
                    writer.write_table(pa.Table.from_pydict(group, schema=schema))
                    group = {c: [] for c in COLUMNS}
            if group["query_id"] or count == 0:
                writer.write_table(pa.Table.from_pydict(group, schema=schema))
        finally:
            writer.close()
    return count
