"""Time parsing: every accepted form of one instant gives the same epoch seconds."""

import calendar
from datetime import datetime, timezone

import ctxselect


def test_time_forms_agree():
    forms = ["2026-01-02T03:04:05Z", "2026-01-02T05:04:05+02:00",
             datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp()]
    stamps = {ctxselect.Candidate(id="a", source="s", relevance=0.1, tokens=1, timestamp=f).timestamp
              for f in forms}
    assert stamps == {float(calendar.timegm((2026, 1, 2, 3, 4, 5)))}  # a naive datetime is UTC
