"""Timestamps: every accepted form becomes UTC epoch seconds (a float)."""

from __future__ import annotations

import math
import time
from datetime import date, datetime, timezone
from typing import Any

from ctxselect.errors import InputError

__all__ = ["to_epoch_seconds", "to_iso", "epoch_now", "SECONDS_PER_DAY", "TIME_EXPECTED"]

SECONDS_PER_DAY = 86_400.0
TIME_EXPECTED = "an ISO-8601 string, a datetime or epoch seconds"
#: 0001-01-01T00:00:00Z, the earliest time a datetime can hold.
EARLIEST_SECONDS = -62_135_596_800.0
#: Epoch numbers from here on (the year 5138) are read as milliseconds or finer given by mistake,
#: never as seconds: 1,730,000,000,000 is 2024 in milliseconds, not the year 56,800.
LATEST_SECONDS = 1e11
#: 9999-12-31T23:59:59Z, the latest time a datetime can hold (reachable through ISO text).
LATEST_ISO_SECONDS = 253_402_300_799.0


def epoch_now() -> float:
    """The current time as UTC epoch seconds."""
    return time.time()


def _datetime_to_epoch(value: datetime) -> float:
    if value.tzinfo is None:  # naive datetimes are read as UTC
        value = value.replace(tzinfo=timezone.utc)
    return value.timestamp()


def to_epoch_seconds(value: Any, field: str = "timestamp") -> float:
    """Convert a timestamp to UTC epoch seconds.

    Parameters
    ----------
    value : str, datetime, date, int or float
        ISO-8601 text (``"2024-05-01"``, ``"2024-05-01T10:00:00Z"``, with or without an offset;
        naive times are UTC), a :class:`datetime.datetime` or :class:`datetime.date`, or epoch
        seconds.
    field : str
        The field name to report in an error.

    Returns
    -------
    float
        Seconds since 1970-01-01T00:00:00Z.

    Raises
    ------
    InputError
        When the value is none of the accepted forms, or not finite.
    """
    if isinstance(value, bool):
        raise InputError(expected=TIME_EXPECTED, found=value, field=field)
    if isinstance(value, (int, float)):
        seconds = float(value)
        if not math.isfinite(seconds) or seconds < EARLIEST_SECONDS:
            raise InputError(expected=TIME_EXPECTED + " from the year 1 on", found=value, field=field)
        if seconds >= LATEST_SECONDS:
            unit = next(u for u, scale in (("nanoseconds", 1e17), ("microseconds", 1e14),
                                           ("milliseconds", 0.0)) if seconds >= scale)
            raise InputError(field=field, expected="epoch seconds",
                             message=f"{value!r} looks like epoch {unit} (it would be after the year 5000)")
        return seconds
    if isinstance(value, datetime):
        return _in_range(_datetime_to_epoch(value), value, field)
    if isinstance(value, date):
        return _datetime_to_epoch(datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            parsed = None
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
