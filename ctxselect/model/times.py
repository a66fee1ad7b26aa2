"""Timestamps: every accepted form becomes UTC epoch seconds (a float), the same on every Python.

**ISO text** is read by this module's own grammar, never by :meth:`datetime.fromisoformat`, whose
accepted forms changed in Python 3.11: 3.10 refuses ``"20240501"``, ``"...T10:00:00.5Z"``,
``"...+0200"`` and week dates that 3.11 to 3.13 read, and every version reads ``"2024-05-01+02:00"``
as 02:00 (the ``+`` taken for the date–time separator). The grammar (ASCII digits only)::

    date     YYYY-MM-DD | YYYYMMDD | YYYY-Www[-D] | YYYYWww[D]      (ISO week dates, D = 1..7)
    time     HH[:MM[:SS[.f]]] | HH[MM[SS[.f]]]    (f: 1 or more digits, "." or ",", cut to µs)
    offset   Z | z | ±HH[:MM[:SS[.ffffff]]] | ±HH[MM[SS]]
    text     date [("T" | "t" | " ") time] [" "] [offset]

A time without an offset is UTC; a date alone is its midnight (at its offset when one is given, as
in XML Schema's ``xs:date``: ``"2024-05-01+02:00"`` is 2024-04-30T22:00Z). Surrounding whitespace
is ignored. Refused, unlike 3.11's ``fromisoformat``: a fraction of an hour or a minute (3.11
reads ``"T10.5"`` as 10:00:00.5), separators other than ``T``, ``t`` and a space, and offset
seconds of 60.

**Epoch numbers** are seconds, from the year 1 up to (not including) 1e11, the year 5138. A larger
number is refused, naming the unit it most likely is (milliseconds below 1e14, microseconds
below 1e17, else nanoseconds) and what it would be in it, rather than recognised. Why refuse:
no magnitude rule reads every millisecond value without misreading a real seconds value.
Milliseconds before 1973-03-03 are below 1e11 and are valid seconds (1970 to 5138); milliseconds
from 1973 to 1978-01-11 (1e11 to 2.534e11) are also seconds of the years 5138 to 9999, which ISO
text may name (9999-12-31T23:59:59Z, 253,402,300,799, is a common "never expires"). Only numbers
from 2.534e11 on cannot be seconds, so a rule would read most milliseconds and silently misread or
refuse the rest, and could read one file's values in two units. A timestamp's unit belongs to
whoever wrote the file: one error, at the first such value, with the fix (divide by 1000, or
write ISO text, as :func:`ctxselect.write_dump` does) is a rule a user can predict.
"""

from __future__ import annotations

import numbers

import math
import re
import time
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ctxselect.errors import InputError, describe_value

__all__ = ["to_epoch_seconds", "to_iso", "epoch_now", "SECONDS_PER_DAY", "TIME_EXPECTED"]

SECONDS_PER_DAY = 86_400.0
TIME_EXPECTED = "an ISO-8601 string, a datetime or epoch seconds"
#: 0001-01-01T00:00:00Z, the earliest time a datetime can hold.
EARLIEST_SECONDS = -62_135_596_800.0
#: Epoch numbers from here on (the year 5138) are refused as milliseconds or finer given by
#: mistake, never read as seconds: 1,730,000,000,000 is 2024 in milliseconds, not the year 56,800.
LATEST_SECONDS = 1e11
#: 9999-12-31T23:59:59Z, the latest time a datetime can hold (reachable through ISO text).
LATEST_ISO_SECONDS = 253_402_300_799.0
#: (unit, seconds per unit, first value read as that unit) for refused epoch numbers.
_FINER_UNITS = (("nanoseconds", 1e-9, 1e17), ("microseconds", 1e-6, 1e14), ("milliseconds", 1e-3, LATEST_SECONDS))

_TIME = (r"(?P<H>\d{2})(?:(?P<tc>:?)(?P<M>\d{2})(?:(?P=tc)(?P<S>\d{2})(?:[.,](?P<f>\d+))?)?)?")
_OFFSET = (r"(?P<Z>[Zz])|(?P<sign>[+-])(?P<oH>\d{2})"
           r"(?:(?P<oc>:?)(?P<oM>\d{2})(?:(?P=oc)(?P<oS>\d{2})(?:\.(?P<of>\d{1,6}))?)?)?")
_ISO = re.compile(
    r"(?P<y>\d{4})(?:-(?P<m>\d{2})-(?P<d>\d{2})|(?P<mb>\d{2})(?P<db>\d{2})"
    r"|-W(?P<w>\d{2})(?:-(?P<wd>\d))?|W(?P<wb>\d{2})(?P<wdb>\d)?)"
    rf"(?:[Tt ]{_TIME})?(?: ?(?:{_OFFSET}))?",
    re.ASCII,
)


def epoch_now() -> float:
    """The current time as UTC epoch seconds."""
    return time.time()


def _datetime_to_epoch(value: datetime) -> float:
    if value.tzinfo is None:  # naive datetimes are read as UTC
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def _parse_iso(text: str) -> datetime | None:
    """``text`` by the module's grammar as a datetime (aware when it has an offset), or ``None``
    when it does not follow the grammar or names no calendar time (2024-02-30, 25:00, W54)."""
    m = _ISO.fullmatch(text)
    if m is None:
        return None
    g = m.groupdict()
    try:
        year = int(g["y"])
        if g["w"] or g["wb"]:
            day = date.fromisocalendar(year, int(g["w"] or g["wb"]), int(g["wd"] or g["wdb"] or 1))
        else:
            day = date(year, int(g["m"] or g["mb"]), int(g["d"] or g["db"]))
        tz = None
        if g["Z"]:
            tz = timezone.utc
        elif g["sign"]:
            parts = [int(g["oH"]), int(g["oM"] or 0), int(g["oS"] or 0)]
            if parts[1] > 59 or parts[2] > 59:
                return None
            offset = timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2],
                               microseconds=int((g["of"] or "").ljust(6, "0")))
            tz = timezone(-offset if g["sign"] == "-" else offset)  # ValueError from 24 hours on
        micro = int((g["f"] or "")[:6].ljust(6, "0"))
        return datetime(day.year, day.month, day.day, int(g["H"] or 0), int(g["M"] or 0), int(g["S"] or 0),
                        micro, tzinfo=tz)
    except ValueError:
        return None


def _epoch_number(value: int | float, field: str) -> float:
    """An epoch number as seconds, or the :class:`InputError` that names the unit it looks like."""
    try:
        magnitude = float(value)
    except OverflowError:  # an int past every float
        magnitude = math.inf if value > 0 else -math.inf
    if math.isnan(magnitude) or magnitude < EARLIEST_SECONDS or (isinstance(value, float) and math.isinf(magnitude)):
        raise InputError(expected=TIME_EXPECTED + " from the year 1 on", found=value, has_found=True, field=field)
    if magnitude < LATEST_SECONDS:
        return magnitude
    shown = describe_value(value)
    unit, scale = next((u, s) for u, s, first in _FINER_UNITS if magnitude >= first)
    seconds = magnitude * scale
    expected = "epoch seconds below 1e11 (the year 5138) or ISO-8601 text"
    if seconds > LATEST_ISO_SECONDS:
        message = f"{shown} is after the year 9999 even as epoch nanoseconds"
    elif magnitude <= LATEST_ISO_SECONDS:  # also a time a datetime can hold, in seconds
        message = f"{shown} looks like epoch {unit} ({to_iso(seconds)}) or epoch seconds after the year 5000"
    else:
        message = f"{shown} looks like epoch {unit} ({to_iso(seconds)})"
        expected = f"epoch seconds ({seconds!r}) or ISO-8601 text"
    raise InputError(field=field, message=message, expected=expected)


def to_epoch_seconds(value: Any, field: str = "timestamp") -> float:
    """Convert a timestamp to UTC epoch seconds.

    Parameters
    ----------
    value : str, datetime, date, int or float
        ISO-8601 text by the module's grammar (``"2024-05-01"``, ``"2024-05-01T10:00:00Z"``,
        ``"20240501T100000.5+0200"``, ``"2024-W18-3"``; naive times are UTC), a
        :class:`datetime.datetime` or :class:`datetime.date`, or epoch seconds (below 1e11; a
        larger number is refused as milliseconds or finer, see the module docstring).
    field : str
        The field name to report in an error.

    Returns
    -------
    float
        Seconds since 1970-01-01T00:00:00Z.

    Raises
    ------
    InputError
        When the value is none of the accepted forms, not finite, outside the years 1 to 9999, or
        an epoch number that looks like milliseconds, microseconds or nanoseconds (the message
        names the unit, the time it would be, and the seconds to give instead).
    """
    if isinstance(value, bool):
        raise InputError(expected=TIME_EXPECTED, found=value, field=field)
    if isinstance(value, numbers.Real):  # NumPy's scalars too
        return _epoch_number(int(value) if isinstance(value, numbers.Integral) else float(value), field)
    if isinstance(value, datetime):
        return _in_range(_datetime_to_epoch(value), value, field)
    if isinstance(value, date):
        return _datetime_to_epoch(datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        parsed = _parse_iso(value.strip())
        if parsed is not None:
            return _in_range(_datetime_to_epoch(parsed), value, field)
    raise InputError(expected=TIME_EXPECTED, found=value, has_found=True, field=field)


def _in_range(seconds: float, value: Any, field: str) -> float:
    """``seconds`` when it names a UTC time in the years 1 to 9999 (an offset can push a
    datetime past either end), else an :class:`InputError`."""
    if EARLIEST_SECONDS <= seconds <= LATEST_ISO_SECONDS:
        return seconds
    raise InputError(field=field, expected="a time in the years 1 to 9999 (UTC)", found=value, has_found=True)


def to_iso(seconds: float) -> str:
    """UTC epoch seconds as ISO-8601 text ending in ``Z`` (every value :func:`to_epoch_seconds`
    returns can be written)."""
    text = datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()
    return text.replace("+00:00", "Z")
