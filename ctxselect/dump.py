"""Candidate dumps: JSONL, one query per line, read as a stream and written whole or not at all.

A line holds ``query_id``, ``query``, ``requirements``, ``candidates`` and optionally ``gold`` (ids
of chunks that are each sufficient evidence, or a list of such id sets) and ``selected`` (what the
current assembler sent). Other keys (``meta``, ``labels`` ...) are kept as they are.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from . import checks
from .candidate import Candidate, coerce_candidates
from .errors import InputError
from .requirements import Requirements
from .tokens import TokenCounter

__all__ = ["Query", "read_dump", "read_jsonl", "write_dump", "write_jsonl"]


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
        query = checks.text(data.get("query") or "", "query")
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


def read_dump(path: str | os.PathLike, *, token_counter: TokenCounter | None = None) -> Iterator[Query]:
    """Read a JSONL dump as a stream of :class:`Query`.

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
        was found (malformed JSON, missing or mistyped fields, duplicate ids, bad values).
    """
    name = str(path)
    seen: set[str] = set()
    for line_no, data in read_jsonl(path, what="dump"):
        try:
            query = Query.from_dict(data, token_counter=token_counter)
        except InputError as err:
            raise err.located(file=name, line=line_no) from None
        if query.query_id in seen:
            raise InputError(file=name, line=line_no, query_id=query.query_id, field="query_id",
                             message="duplicate query id", expected="query ids unique within a dump")
        seen.add(query.query_id)
        yield query


def read_jsonl(path: str | os.PathLike, *, what: str = "file") -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line; a missing file or malformed JSON is an
    :class:`InputError` naming the file and line (``what`` names the kind of file)."""
    name = str(path)
    try:
        handle = open(path, "r", encoding="utf-8")
    except OSError as err:
        raise InputError(file=name, message=f"cannot open {what}: {err.strerror or err}") from None
    with handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line, parse_constant=_reject_constant)
            except (json.JSONDecodeError, ValueError) as err:
                raise InputError(file=name, line=line_no, message=f"malformed JSON ({err})") from None


def write_jsonl(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write JSON objects one per line, atomically (a temporary file in the same folder, renamed
    over ``path`` only when every row is written)."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    count = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            for row in rows:
                try:
                    line = json.dumps(row, ensure_ascii=False, allow_nan=False)
                except (TypeError, ValueError) as err:
                    raise InputError(file=str(path), message=f"row {count + 1} cannot be written as JSON ({err})") from None
                out.write(line + "\n")
                count += 1
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return count


def write_dump(path: str | os.PathLike, queries: Iterable[Query | Mapping[str, Any]]) -> int:
    """Write queries as a JSONL dump, atomically: the file is written whole or not at all.

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
    return write_jsonl(path, (Query.from_dict(item).to_dict() for item in queries))
