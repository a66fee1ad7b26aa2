"""Timestamps: every accepted form becomes UTC epoch seconds (a float)."""

from __future__ import annotations

import math
import time
from datetime import date, datetime, timezone
from typing import Any

from .errors import InputError

__all__ = ["to_epoch_seconds", "to_iso", "epoch_now", "SECONDS_PER_DAY", "TIME_EXPECTED"]

SECONDS_PER_DAY = 86_400.0
TIME_EXPECTED = "an ISO-8601 string, a datetime or epoch seconds"


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
        if not math.isfinite(seconds):
            raise InputError(expected=TIME_EXPECTED, found=value, field=field)
        return seconds
    if isinstance(value, datetime):
        return _datetime_to_epoch(value)
    if isinstance(value, date):
        return _datetime_to_epoch(datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return _datetime_to_epoch(datetime.fromisoformat(text))
        except ValueError:
            pass
    raise InputError(expected=TIME_EXPECTED, found=value, has_found=True, field=field)


def to_iso(seconds: float) -> str:
    """UTC epoch seconds as ISO-8601 text ending in ``Z``."""
    text = datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()
    return text.replace("+00:00", "Z")
