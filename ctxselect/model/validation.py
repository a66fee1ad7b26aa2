"""Small validators shared by the data model: each returns the normalised value or raises
:class:`~ctxselect.errors.InputError` naming the field, what was expected and what was found."""

from __future__ import annotations

import math
import numbers
from enum import Enum
from typing import Any, Mapping, TypeVar

import numpy as np

from ctxselect.errors import InputError

E = TypeVar("E", bound=Enum)

#: The largest count accepted anywhere (tokens, budget, rank, source minimums and maxima, chunk
#: caps): a trillion. Sums of a million such counts still fit the solver's 64-bit integers.
MAX_COUNT = 10**12
#: The largest objective weight: the solver scales coefficients to integers, and weights above
#: this would overflow its 64-bit arithmetic.
MAX_WEIGHT = 1e6
#: The longest text of one chunk or query (characters); longer texts are an error, not a slow call.
MAX_TEXT_CHARS = 2_000_000
#: The longest identifier (ids, sources, scopes, aspects, labels).
MAX_LABEL_CHARS = 4096


def _fail(field: str, expected: str, value: Any) -> InputError:
    return InputError(field=field, expected=expected, found=value, has_found=True)


def is_number(value: Any) -> bool:
    """A real number: Python's int and float, and NumPy's integer and floating scalars (every
    retriever returns those); never a bool (NumPy's bool_ is no ``numbers.Real``)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def plain_scalar(value: Any) -> Any:
    """NumPy's bool, integer and floating scalars (what a retriever returns) as Python's bool, int
    and float of the same value, so that ``3`` and ``np.int64(3)`` are one value everywhere (JSON,
    equality, interning); any other value unchanged (a float's finiteness is the caller's check)."""
    if isinstance(value, np.generic):
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return float(value)
    return value


def _as_int(value: Any) -> Any:
    """A NumPy integer scalar as a Python int (other values unchanged)."""
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, (int, bool)) else value


def text(value: Any, field: str, *, allow_empty: bool = True, limit: int = MAX_TEXT_CHARS) -> str:
    """A string of valid Unicode (no lone surrogates) of at most ``limit`` characters."""
    if value.__class__ is str and value.isascii() and len(value) <= limit and (allow_empty or value.strip()):
        return value  # the common case, decided by the checks below in a few steps
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise _fail(field, "a string" if allow_empty else "a non-empty string", value)
    if len(value) > limit:
        raise _fail(field, f"at most {limit:,} characters", f"{len(value):,} characters")
    try:
        if not value.isascii():  # an ASCII string holds no surrogate; the flag check is O(1)
            value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(field=field, expected="valid Unicode text",
                         found=f"a lone surrogate at character {err.start}") from None
    return value


def label(value: Any, field: str) -> str:
    """A non-empty identifier; integers (NumPy's too) are accepted and turned into text."""
    if value.__class__ is str and value.isascii() and len(value) <= MAX_LABEL_CHARS and value.strip():
        return value  # the common case, as text() decides it
    value = _as_int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > MAX_COUNT:
            raise _fail(field, f"a string, or an integer of at most {MAX_COUNT:,} in size", value)
        return str(value)
    return text(value, field, allow_empty=False, limit=MAX_LABEL_CHARS)


def boolean(value: Any, field: str) -> bool:
    """True or False; NumPy's ``np.bool_`` (what ``array.any()`` gives) as the Python value."""
    if isinstance(value, np.bool_):
        return bool(value)
    if not isinstance(value, bool):
        raise _fail(field, "true or false", value)
    return value


def _number_expected(low: float | None, high: float | None, low_open: bool) -> str:
    if low is not None and high is not None:
        return f"a number in {'(' if low_open else '['}{low:g}, {high:g}]"
    if low is not None:
        return f"a number {'>' if low_open else '>='} {low:g}"
    return "a finite number"


def number(value: Any, field: str, *, low: float | None = None, high: float | None = None,
           low_open: bool = False) -> float:
    """A finite number in the given range (the message is built only when the check fails: this
    runs for every embedding component)."""
    try:
        as_float = float(value) if is_number(value) else None
    except OverflowError:  # an integer beyond any float
        as_float = None
    if (as_float is None or not math.isfinite(as_float)
            or (low is not None and (as_float < low or (low_open and as_float == low)))
            or (high is not None and as_float > high)):
        found = value if as_float is None or not math.isfinite(as_float) else as_float
        raise _fail(field, _number_expected(low, high, low_open), found)
    return as_float


def integer(value: Any, field: str, *, low: int | None = None, high: int = MAX_COUNT) -> int:
    """An integer in [low, high] (``high`` defaults to :data:`MAX_COUNT`); integral floats pass,
    and NumPy's integer and floating scalars like Python's."""
    if value.__class__ is int and (low is None or value >= low) and value <= high:
        return value  # the common case, decided by the checks below in a few steps
    value = _as_int(value)
    if is_number(value) and not isinstance(value, int) and math.isfinite(float(value)) and float(value).is_integer():
        value = int(value)
    if (not isinstance(value, int) or isinstance(value, bool)
            or (low is not None and value < low) or value > high):
        expected = "an integer" if low is None else ("a positive integer" if low == 1 else f"an integer >= {low}")
        raise _fail(field, f"{expected} up to {high:,}", value)
    return value


def optional_text(value: Any, field: str) -> str:
    """A string, or ``None`` read as "" (a question's text, which may be unknown)."""
    return "" if value is None else text(value, field)


def string_list(value: Any, field: str) -> tuple[str, ...]:
    if (value.__class__ is list or value.__class__ is tuple) and all(
            item.__class__ is str and item.isascii() and len(item) <= MAX_LABEL_CHARS and item.strip() for item in value):
        return tuple(value)  # the common case: labels as label() keeps them
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise _fail(field, "a list of strings", value)
    out = []
    for i, item in enumerate(value):
        out.append(label(item, f"{field}[{i}]"))
    return tuple(out)


def mapping(value: Any, field: str, expected: str) -> Mapping[str, Any]:
    if value.__class__ is dict and all(key.__class__ is str and key for key in value):
        return value  # the common case, as the checks below decide it
    if not isinstance(value, Mapping):
        raise _fail(field, expected, value)
    for key in value:
        if not isinstance(key, str) or not key:
            raise _fail(field, expected + " with non-empty string keys", key)
    return value


def weighted_names(value: Any, field: str, *, weight: str, default: float) -> dict[str, float]:
    """A list of names (each with ``default``) or a mapping name -> positive number."""
    if isinstance(value, Mapping):
        mapping(value, field, f"a list of names or an object name -> {weight}")
        return {k: number(v, f"{field}.{k}", low=0.0, low_open=True) for k, v in value.items()}
    return {name: default for name in string_list(value, field)}


def parse_choice(enum: type[E], value, field: str) -> E:
    """``value`` as a member of ``enum``; an unknown value lists the valid ones."""
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except ValueError:
        raise InputError(field=field, expected="one of " + ", ".join(m.value for m in enum),
                         found=value, has_found=True) from None
