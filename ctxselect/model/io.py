"""Candidate dumps: JSONL, one query per line, read as a stream and written whole or not at all
(or Parquet, one query per row, for a name ending in ``.parquet``: :mod:`ctxselect.model.parquet`).

A line holds ``query_id``, ``query``, ``requirements``, ``candidates`` and optionally ``gold`` (ids
of chunks that are each sufficient evidence, or a list of such id sets) and ``selected`` (what the
current assembler sent). Other keys (``meta``, ``labels`` ...) are kept as they are.

Reading is strict: every line must be UTF-8 text (a byte-order mark at the start of the file is
allowed) of at most :data:`MAX_LINE_BYTES` bytes holding one JSON value with no duplicate key in
any object, no lone surrogate in any string and no NaN / Infinity; anything else is an
:class:`~ctxselect.errors.InputError` naming the file and line. Writing is atomic, through
:mod:`ctxselect.model.files` (:func:`open_atomic`, :func:`output_target` and :func:`write_jsonl`
live there and are re-exported here): a temporary file next to the target is renamed over it when
complete; a new file gets the mode the umask allows, an existing one keeps its mode, a symlink is
written through, and a target that is not a regular file is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets  # noqa: F401  kept as an attribute: tests patch ``io.secrets`` (the writer is in files.py)
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from ctxselect.errors import InputError, plain_reason
from ctxselect.model import validation as checks
from ctxselect.model.candidate import Candidate, coerce_candidates
from ctxselect.model.files import open_atomic, output_target, write_jsonl
from ctxselect.model.parquet import is_parquet, read_parquet_rows, write_parquet_rows
from ctxselect.model.requirements import Requirements
from ctxselect.model.tokens import TokenCounter

__all__ = ["MAX_LINE_BYTES", "Query", "display_name", "open_atomic", "output_target", "parse_json_text", "read_dump",
           "read_jsonl", "write_dump", "write_jsonl"]

#: The longest line (bytes, newline included) a dump or trace file may hold: 256 MiB. A longer
#: line (or an endless one, such as ``/dev/zero``) is an error naming the line, not a MemoryError.
MAX_LINE_BYTES = 256 * 1024 * 1024  # a 100,000-candidate query of 80-word chunks is ~70 MB


@dataclass(frozen=True)
class Query:
    """One line of a dump: a query, its requirements and its candidates.

    Attributes
    ----------
    query_id : str
    query : str
        The question's text ("" when unknown).
    requirements : Requirements
    candidates : list of Candidate
    gold : list of str, or list of list of str, or None
        Ids of supporting chunks; a list of lists gives alternative evidence sets.
    selected : list of str or None
        The ids the user's current assembler sent.
    extra : dict
        Any other keys of the line, written back unchanged.
    """

    query_id: str
    query: str
    requirements: Requirements
    candidates: list[Candidate]
    gold: list | None = None
    selected: list[str] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, token_counter: TokenCounter | None = None) -> "Query":
        """Validate one dump record.

        Raises
        ------
        InputError
            Naming the query id, candidate id and field.
        """
        if isinstance(data, Query):
            return data
        if not isinstance(data, Mapping):
            raise InputError(expected="a JSON object (one query per line)", found=data, has_found=True)
        qid = data.get("query_id")
        try:
            return cls._from_mapping(data, token_counter)
        except InputError as err:
            raise err.located(query_id=qid if isinstance(qid, str) else None) from None

    @classmethod
    def _from_mapping(cls, data: Mapping[str, Any], token_counter) -> "Query":
        for name in ("query_id", "requirements", "candidates"):
            if name not in data:
                raise InputError(field=name, message="missing required field",
                                 expected={"query_id": "a non-empty string",
                                           "requirements": "an object with token_budget",
                                           "candidates": "a list of candidates"}[name])
        qid = checks.label(data["query_id"], "query_id")
        query = "" if data.get("query") is None else checks.text(data["query"], "query")
        try:
            reqs = Requirements.from_dict(data["requirements"])
        except InputError as err:
            raise err.located(query_id=qid) from None
        if not isinstance(data["candidates"], list):
            raise InputError(query_id=qid, field="candidates", expected="a list of candidates",
                             found=data["candidates"])
        cands = coerce_candidates(data["candidates"], token_counter=token_counter)
        known = {c.id for c in cands}
        gold = _gold(data.get("gold"), known)
        selected = None
        if data.get("selected") is not None:
            selected = list(checks.string_list(data["selected"], "selected"))
            _known_ids(selected, known, "selected")
            _unique_ids(selected, "selected")
        extra = {k: v for k, v in data.items()
                 if k not in ("query_id", "query", "requirements", "candidates", "gold", "selected")}
        return cls(qid, query, reqs, cands, gold, selected, extra)

    @property
    def gold_sets(self) -> list[set[str]]:
        """Gold as a list of alternative evidence sets (empty when unlabelled)."""
        if not self.gold:
            return []
        if isinstance(self.gold[0], str):
            return [set(self.gold)]
        return [set(g) for g in self.gold]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query_id": self.query_id,
            "query": self.query,
            "requirements": self.requirements.to_dict(),
            "candidates": [c.to_dict() for c in self.candidates],
        }
        if self.gold is not None:
            out["gold"] = self.gold
        if self.selected is not None:
            out["selected"] = list(self.selected)
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out


def _known_ids(ids: Iterable[str], known: set[str], name: str) -> None:
    for cid in ids:
        if cid not in known:
            raise InputError(field=name, candidate_id=cid, message="unknown candidate id",
                             expected="ids of this query's candidates")


def _unique_ids(ids: Iterable[str], name: str) -> None:
    seen: set[str] = set()
    for cid in ids:
        if cid in seen:
            raise InputError(field=name, candidate_id=cid, message=f"duplicate id in {name}",
                             expected="each id at most once")
        seen.add(cid)


def _gold(value: Any, known: set[str]) -> list | None:
    if value is None:
        return None
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        sets = [list(checks.string_list(v, f"gold[{i}]")) for i, v in enumerate(value)]
        for ids in sets:
            _known_ids(ids, known, "gold")
        return sets
    ids = list(checks.string_list(value, "gold"))
    _known_ids(ids, known, "gold")
    return ids


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not valid JSON")


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (``json`` would keep the last)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate(value: Any) -> str | None:
    """The first string (key or value) of a parsed JSON value that is not valid Unicode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as err:
                return item[err.start]
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _not_utf8(raw: bytes, err: UnicodeDecodeError, first: bool) -> str:
    message = f"not UTF-8 text (byte 0x{raw[err.start]:02x} at byte {err.start + 1} of the line)"
    if first and raw.startswith(b"\x1f\x8b"):
        message += "; it looks gzip-compressed: decompress it first"
    elif first and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        message += "; it starts with a UTF-16 byte-order mark: convert it to UTF-8"
    elif first and raw.startswith(b"PAR1"):
        message += "; it looks like Parquet (a dump is read as Parquet when its name ends in .parquet)"
    return message


def parse_json_text(text: str) -> Any:
    """One JSON value, strictly: ValueError with the reason for malformed JSON, NaN / Infinity, a
    key given twice in an object, nesting too deep or a lone surrogate in a string."""
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_object)
    except _DuplicateKey as err:
        raise ValueError(f"duplicate key {err.key!r} in a JSON object") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as err:  # json.JSONDecodeError and the constants
        raise ValueError(f"malformed JSON ({plain_reason(err)})") from None
    if _SURROGATE_ESCAPE.search(text):
        bad = _lone_surrogate(value)
        if bad is not None:
            raise ValueError(f"a JSON string holds a lone surrogate (\\u{ord(bad):04x}), which is not Unicode text")
    return value


def _parse_line(raw: bytes, first: bool) -> tuple[bool, Any]:
    """(False, None) for a blank line, else (True, value); ValueError with the reason otherwise."""
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(_not_utf8(raw, err, first)) from None
    if not text.strip():
        return False, None
    return True, parse_json_text(text)


def read_dump(path: str | os.PathLike, *, token_counter: TokenCounter | None = None) -> Iterator[Query]:
    """Read a dump as a stream of :class:`Query`: JSONL, or Parquet when the name ends in
    ``.parquet`` (:mod:`ctxselect.model.parquet`, read batch by batch; errors name the row).

    Parameters
    ----------
    path : str or path-like
    token_counter : callable, optional
        Counts tokens of candidates without ``tokens``.

    Yields
    ------
    Query

    Raises
    ------
    InputError
        Naming the file, line, query id, candidate id and field, with what was expected and what
        was found (every problem :func:`read_jsonl` reports, missing or mistyped fields, duplicate
        ids, an id given twice in ``selected``, bad values).
    """
    name = display_name(path)
    seen: set[str] = set()
    if is_parquet(path):
        records, unit = read_parquet_rows(path), "row"
    else:
        records, unit = read_jsonl(path, what="dump"), "line"
    for number, data in records:
        where = {"file": name, unit: number}
        try:
            query = Query.from_dict(data, token_counter=token_counter)
        except InputError as err:
            raise err.located(**where) from None
        if query.query_id in seen:
            raise InputError(**where, query_id=query.query_id, field="query_id",
                             message="duplicate query id", expected="query ids unique within a dump")
        seen.add(query.query_id)
        yield query


def display_name(path: str | os.PathLike) -> str:
    """How errors name a dump: its path, ``<stdin>`` for ``-``."""
    return "<stdin>" if str(path) == "-" else str(path)


def read_jsonl(path: str | os.PathLike, *, what: str = "file") -> Iterator[tuple[int, Any]]:
    """Parse a JSONL file line by line.

    Parameters
    ----------
    path : str or path-like
        A file, or a pipe or device read as a stream (a directory is refused); ``"-"`` reads
        standard input.
    what : str
        What kind of file this is, for messages ("dump", "trace file").

    Yields
    ------
    (int, object)
        The line number and the parsed value of each non-blank line.

    Raises
    ------
    InputError
        Naming the file (and line): a file that cannot be opened or read, a line that is not
        UTF-8 text (a UTF-8 byte-order mark at the start of the file is accepted), longer than
        :data:`MAX_LINE_BYTES`, malformed or too deeply nested JSON, NaN or Infinity, a key given
        twice in one object, or a lone surrogate in a string.
    """
    name = display_name(path)
    if str(path) == "-":  # standard input, read as a stream and left open
        handle, closing = sys.stdin.buffer, contextlib.nullcontext()
    else:
        try:
            handle = closing = open(path, "rb")
        except OSError as err:
            raise InputError(file=name, message=f"cannot open {what}: {err.strerror or err}") from None
    with closing:
        line_no = 0
        while True:
            line_no += 1
            limit = MAX_LINE_BYTES
            try:
                raw = handle.readline(limit + 1)
            except OSError as err:
                raise InputError(file=name, line=line_no, message=f"cannot read {what}: {err.strerror or err}") from None
            except MemoryError:
                raise InputError(file=name, line=line_no, message="line too long to read") from None
            if not raw:
                return
            if len(raw) > limit:
                raise InputError(file=name, line=line_no,
                                 message=f"line longer than {limit:,} bytes (the limit, MAX_LINE_BYTES)") from None
            try:
                present, value = _parse_line(raw, line_no == 1)
            except ValueError as err:
                raise InputError(file=name, line=line_no, message=str(err)) from None
            del raw
            if present:
                yield line_no, value


def write_dump(path: str | os.PathLike, queries: Iterable[Query | Mapping[str, Any]]) -> int:
    """Write queries as a dump, atomically: the file is written whole or not at all. A name ending
    in ``.parquet`` writes Parquet (:mod:`ctxselect.model.parquet`); ``"-"`` writes JSONL to
    standard output (as it goes: a stream cannot be taken back).

    Parameters
    ----------
    path : str or path-like
    queries : iterable of Query or dict
        Dicts are validated as :meth:`Query.from_dict` does.

    Returns
    -------
    int
        The number of queries written.
    """
    rows = (Query.from_dict(item).to_dict() for item in queries)
    if is_parquet(path):
        return write_parquet_rows(path, rows)
    return write_jsonl(path, rows)
