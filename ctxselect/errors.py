"""Errors raised by ctxselect, and the one formatter every message goes through.

Every problem with user input becomes an :class:`InputError` that names where it
happened (file, line, query, candidate, field), what was expected and what was
found. Code deep inside the library raises it with the parts it knows (for
example the candidate and the field); callers higher up add the parts they know
(the file and line) with :meth:`InputError.located`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["CtxSelectError", "InputError", "describe_value", "format_error"]


class CtxSelectError(Exception):
    """Base class of every error ctxselect raises on purpose."""


def describe_value(value: Any, limit: int = 60) -> str:
    """Render a found value for an error message: short, typed, never huge."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
    elif value is None:
        return "null"
    elif isinstance(value, bool):
        return "true" if value else "false"
    elif isinstance(value, (int, float)):
        text = repr(value)  # a huge integer is cut below like any long value
    else:
        text = f"{type(value).__name__} {value!r}"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


#: How much of an id, field name or file name an error message quotes.
LOCATION_LIMIT = 80


def _short(value: str, limit: int = LOCATION_LIMIT, quote: bool = True) -> str:
    """``repr`` of ``value`` (or the text itself) cut to ``limit`` characters in the middle, so
    both ends stay: a long path keeps its file name, a long id its distinguishing suffix."""
    text = repr(value) if quote else value
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return text[:head] + "..." + text[len(text) - (limit - 3 - head):]


def format_error(
    *,
    file: str | None = None,
    line: int | None = None,
    query_id: str | None = None,
    candidate_id: str | None = None,
    candidate_index: int | None = None,
    field: str | None = None,
    expected: str | None = None,
    found: str | None = None,
    message: str | None = None,
    row: int | None = None,
) -> str:
    """Format one error message from its parts; every ctxselect error uses this."""
    where = []
    if file is not None:
        where.append(_short(str(file), quote=False))
    if line is not None:
        where.append(f"line {line}")
    if row is not None:
        where.append(f"row {row}")  # a Parquet dump's row (1-based over the file)
    if query_id is not None:
        where.append(f"query {_short(query_id)}")
    if candidate_id is not None:
        where.append(f"candidate {_short(candidate_id)}")
    elif candidate_index is not None:
        where.append(f"candidate #{candidate_index}")
    if field is not None:
        where.append(f"field {_short(field)}")
    what = []
    if expected is not None:
        what.append(f"expected {expected}")
    if found is not None:
        what.append(f"found {found}")
    body = ", ".join(what)
    if message:
        body = f"{message}; {body}" if body else message
    head = ", ".join(where)
    if head and body:
        return f"{head}: {body}"
    return head or body or "invalid input"


@dataclass(frozen=True)
class _Location:
    file: str | None = None
    line: int | None = None
    query_id: str | None = None
    candidate_id: str | None = None
    field: str | None = None
    candidate_index: int | None = None
    row: int | None = None


class InputError(CtxSelectError, ValueError):
    """Bad input: a candidate, requirement, dump line or argument that cannot be used.

    Attributes
    ----------
    file, line, row, query_id, candidate_id, field : str or int or None
        Where the problem is, as far as it is known.
    expected : str or None
        What a valid value looks like.
    found : str or None
        What was found instead (already rendered for display).
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        expected: str | None = None,
        found: Any = None,
        has_found: bool | None = None,
        file: str | None = None,
        line: int | None = None,
        query_id: str | None = None,
        candidate_id: str | None = None,
        field: str | None = None,
        candidate_index: int | None = None,
        row: int | None = None,
    ) -> None:
        self.detail = message
        self.expected = expected
        if has_found is None:
            has_found = found is not None
        self.found = describe_value(found) if has_found else None
        self._loc = _Location(file, line, query_id, candidate_id, field, candidate_index, row)
        super().__init__(self._render())

    # -- location ---------------------------------------------------------------
    @property
    def file(self) -> str | None:
        return self._loc.file

    @property
    def line(self) -> int | None:
        return self._loc.line

    @property
    def row(self) -> int | None:
        return self._loc.row

    @property
    def query_id(self) -> str | None:
        return self._loc.query_id

    @property
    def candidate_id(self) -> str | None:
        return self._loc.candidate_id

    @property
    def field(self) -> str | None:
        return self._loc.field

    def located(self, **parts: Any) -> "InputError":
        """Return this error with location parts filled in where still unknown."""
        known = {k: v for k, v in parts.items() if v is not None and getattr(self._loc, k) is None}
        if not known:
            return self
        clone = InputError.__new__(InputError)
        clone.detail, clone.expected, clone.found = self.detail, self.expected, self.found
        clone._loc = replace(self._loc, **known)
        Exception.__init__(clone, clone._render())
        return clone

    def _render(self) -> str:
        loc = self._loc
        return format_error(
            file=loc.file,
            line=loc.line,
            query_id=loc.query_id,
            candidate_id=loc.candidate_id,
            candidate_index=loc.candidate_index,
            field=loc.field,
            expected=self.expected,
            found=self.found,
            message=self.detail,
            row=loc.row,
        )
