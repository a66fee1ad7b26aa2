"""Errors raised by ctxselect, and the one formatter every message goes through.

Every problem with user input becomes an :class:`InputError` that names where it
happened (file, line, query, candidate, field), what was expected and what was
found. Code deep inside the library raises it with the parts it knows (for
example the candidate and the field); callers higher up add the parts they know
(the file and line) with :meth:`InputError.located`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["CtxSelectError", "InputError", "describe_value", "format_error", "plain_reason"]


class CtxSelectError(Exception):
    """Base class of every error ctxselect raises on purpose."""


#: How deep :func:`describe_value` looks into nested lists and objects before writing ``...``.
_DESCRIBE_DEPTH = 6

#: An integer with more bits than this is described by its size, not written out: Python refuses to
#: write an integer of more than 4,300 digits, and a message has no room for one of 60.
_INT_BITS_SHOWN = 190


def _describe_int(value: int) -> str:
    bits = int.bit_length(value)
    if bits <= _INT_BITS_SHOWN:
        return int.__repr__(value)
    sign = "a negative" if value < 0 else "an"
    return f"{sign} integer of {bits:,} bits (about {int(bits * math.log10(2)) + 1:,} digits)"


def _bounded_repr(value: Any, limit: int) -> str:
    """``repr`` of ``value`` written only up to a little past ``limit`` characters and
    :data:`_DESCRIBE_DEPTH` levels of lists, tuples, sets and dicts, without repr-ing the whole."""
    parts: list[str] = []
    size = 0

    def emit(text: str) -> bool:
        nonlocal size
        parts.append(text)
        size += len(text)
        return size > limit

    def walk(item: Any, depth: int) -> bool:  # True: enough has been written
        if size > limit:
            return True
        if isinstance(item, (list, tuple, set, frozenset, dict)):
            if depth >= _DESCRIBE_DEPTH:
                return emit("...")
            opening, closing = "[]" if isinstance(item, list) else "()" if isinstance(item, tuple) else "{}"
            if emit(opening):
                return True
            pairs = dict.items(item) if isinstance(item, dict) else None
            for i, entry in enumerate(pairs if pairs is not None else item):
                if i and emit(", "):
                    return True
                if pairs is not None:
                    if walk(entry[0], depth + 1) or emit(": ") or walk(entry[1], depth + 1):
                        return True
                elif walk(entry, depth + 1):
                    return True
            return emit(closing)
        return emit(_scalar(item, limit))

    walk(value, 0)
    return "".join(parts)


def _scalar(value: Any, limit: int) -> str:
    if isinstance(value, bool) or value is None:
        return repr(bool(value)) if value is not None else "None"
    if isinstance(value, int):
        return _describe_int(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, str):
        return str.__repr__(str.__getitem__(value, slice(0, limit + 1)))
    if isinstance(value, (bytes, bytearray)):
        return bytes.__repr__(bytes(value[: limit + 1]))
    return repr(value)


def describe_value(value: Any, limit: int = 60) -> str:
    """Render a found value for an error message: short, typed, never huge, never failing.

    Parameters
    ----------
    value : object
        What was found: any object at all (nested without limit, an integer of any size, an
        object whose ``__repr__`` raises).
    limit : int, optional
        The longest text returned (a value cut short ends in ``...``).

    Returns
    -------
    str
        ``null``/``true``/``false``, a number, a quoted string, ``<type> <repr>`` for anything
        else, or for an integer too long to write "an integer of N bits (about M digits)". Only
        the start of a long string or collection and a few levels of a nested one are looked at.
    """
    try:
        if isinstance(value, float) and not math.isfinite(value):
            return repr(value)
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int) and int.bit_length(value) > _INT_BITS_SHOWN:
            return _describe_int(value)
        if isinstance(value, (str, int, float)):
            text = _scalar(value, limit)
        else:
            text = f"{type(value).__name__} {_bounded_repr(value, limit)}"
    except Exception:  # noqa: BLE001 - a message must be written whatever the value does
        try:
            name = type(value).__name__
        except Exception:  # noqa: BLE001
            name = "object"
        return f"{str(name)[:limit]} (cannot be shown)"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


_INT_LIMIT = re.compile(r"Exceeds the limit \((\d+) digits\) for integer string conversion"
                        r"(?:: value has (\d+) digits)?")


def plain_reason(err: BaseException) -> str:
    """``str(err)``, except Python's refusal of a too-long integer, which tells a user to call
    ``sys.set_int_max_str_digits()``: that becomes what the input holds and what is read."""
    text = str(err)
    match = _INT_LIMIT.search(text)
    if match is None:
        return text
    found = f"of {int(match.group(2)):,} digits" if match.group(2) else "too long"
    return f"an integer {found}; at most {int(match.group(1)):,} digits are read"


#: How much of an id, field name or file name an error message quotes.
LOCATION_LIMIT = 80


def _short(value: str, limit: int = LOCATION_LIMIT, quote: bool = True) -> str:
    """``repr`` of ``value`` (or the text itself) cut to ``limit`` characters in the middle, so
    both ends stay: a long path keeps its file name, a long id its distinguishing suffix."""
    if not isinstance(value, str):  # an id that is not text: described, never repr-ed whole
        return describe_value(value, limit)
    text = str.__repr__(value) if quote else value
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
