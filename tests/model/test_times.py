"""Time parsing: every accepted form of one instant gives the same epoch seconds, on every Python
from 3.10 to 3.13 (ISO text is read by ctxselect's own grammar, not ``datetime.fromisoformat``,
whose accepted forms changed in 3.11), and epoch numbers too large for seconds are refused with
the unit they look like."""

import calendar
from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.model.times import to_epoch_seconds, to_iso


def utc(*parts) -> float:
    """Epoch seconds of a UTC time, computed without the parser under test."""
    return float(calendar.timegm(parts + (0,) * (6 - len(parts))))


def test_time_forms_agree():
    forms = ["2026-01-02T03:04:05Z", "2026-01-02T05:04:05+02:00",
             datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc).timestamp()]
    stamps = {ctxselect.Candidate(id="a", source="s", relevance=0.1, tokens=1, timestamp=f).timestamp
              for f in forms}
    assert stamps == {float(calendar.timegm((2026, 1, 2, 3, 4, 5)))}  # a naive datetime is UTC


MAY_1_10H = utc(2024, 5, 1, 10)

# Forms Python 3.10's fromisoformat refuses and 3.11-3.13's read: the same value on every version now.
FORMS_3_10_REFUSED = [
    ("20240501", utc(2024, 5, 1)),
    ("20240501T100000Z", MAY_1_10H),
    ("2024-05-01T1000", MAY_1_10H),
    ("2024-05-01T10:00:00.5Z", MAY_1_10H + 0.5),
    ("2024-05-01T10:00:00,5", MAY_1_10H + 0.5),
    ("2024-05-01T10:00:00.1234567", MAY_1_10H + 0.123456),  # cut to microseconds, as 3.11 cuts
    ("2024-05-01T12:00:00+0200", MAY_1_10H),
    ("2024-05-01T12:00:00+02", MAY_1_10H),
    ("2024-05-01T10Z", MAY_1_10H),
    ("2024-05-01T10:00:00 Z", MAY_1_10H),
    ("2024-W18-3", utc(2024, 5, 1)),
    ("2024W183", utc(2024, 5, 1)),
    ("2024-W18", utc(2024, 4, 29)),  # the week's Monday
    ("2020-W53-7", utc(2021, 1, 3)),
]
# Forms every version reads, kept.
FORMS_ALL_READ = [
    ("2024-05-01", utc(2024, 5, 1)),
    ("2024-05-01T10", MAY_1_10H),
    ("2024-05-01 10:00", MAY_1_10H),
    ("2024-05-01t10:00:00", MAY_1_10H),
    ("2024-05-01T10:00:00.123", MAY_1_10H + 0.123),
    ("2024-05-01T12:00:00 +02:00", MAY_1_10H),
    ("2024-05-01T10:00:00-00:00", MAY_1_10H),
    ("2024-05-01T10:00:30+00:00:30", MAY_1_10H),
    ("  2024-05-01T10:00:00z\n", MAY_1_10H),  # surrounding space and a lower-case z
    ("0001-01-01", -62_135_596_800.0),
]


@pytest.mark.parametrize("text, seconds", FORMS_3_10_REFUSED + FORMS_ALL_READ,
                         ids=[t for t, _ in FORMS_3_10_REFUSED + FORMS_ALL_READ])
def test_iso_forms_read_the_same_on_every_python(text, seconds):
    assert to_epoch_seconds(text) == pytest.approx(seconds, abs=1e-6)


def test_a_date_with_an_offset_is_its_midnight_there():
    """Every fromisoformat reads "2024-05-01+02:00" as 02:00 (the "+" taken for the date-time
    separator); it is midnight at +02:00, as in XML Schema's xs:date."""
    assert to_epoch_seconds("2024-05-01+02:00") == utc(2024, 4, 30, 22)
    assert to_epoch_seconds("2024-05-01-05:00") == utc(2024, 5, 1, 5)
    assert to_epoch_seconds("2024-05-01Z") == utc(2024, 5, 1)


@pytest.mark.parametrize("text", [
    "2024-05-01T10.5",              # 3.11-3.13 read 10:00:00.5; ISO means 10:30
    "2024-05-01T10:00.5",           # likewise a fraction of a minute
    "2024-05-01x10:00",             # any separator passes fromisoformat on every version
    "2024-05-01T10:00:00Z+00:00",   # 3.10 read this
    "2024-05-01T10:00:00+00:00:60",  # every version read +00:01
    "2024-05-01T24:00", "2024-05-01T23:59:60", "2024-02-30", "2024-W53-1", "2024-W18-8", "0000-01-01",
    "２０２４-05-01", "2024-05-01T10:00:00+24:00", "2024-05-01T10:00:0000", "2024-W183", "1730000000",
    "2024-05-01T", "2024-5-1", "",
])
def test_text_outside_the_grammar_is_refused(text):
    with pytest.raises(ctxselect.InputError, match=r"^field 'valid_to': expected an ISO-8601 string"):
        to_epoch_seconds(text, "valid_to")


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)),
       st.integers(-23 * 60 - 59, 23 * 60 + 59), st.sampled_from(["T", "t", " "]))
def test_isoformat_output_reads_back(moment, offset_minutes, sep):
    """Whatever datetime.isoformat writes (with its offset, in basic form, or with Z) reads back
    as the same instant."""
    aware = moment.replace(tzinfo=timezone(timedelta(minutes=offset_minutes)))
    expected = aware.timestamp()
    assert to_epoch_seconds(aware.isoformat(sep)) == expected
    basic = f"{aware:%Y}".zfill(4) + f"{aware:%m%dT%H%M%S}" + (f".{aware.microsecond:06d}" if aware.microsecond else "")
    assert to_epoch_seconds(basic + f"{aware:%z}") == expected
    as_utc = moment.isoformat()
    assert to_epoch_seconds(as_utc + "Z") == to_epoch_seconds(as_utc) == moment.replace(tzinfo=timezone.utc).timestamp()


def test_datetimes_and_dates():
    assert to_epoch_seconds(date(2024, 5, 1)) == utc(2024, 5, 1)
    aware = datetime(2024, 5, 1, 12, tzinfo=timezone(timedelta(hours=2)))
    assert to_epoch_seconds(aware) == MAY_1_10H
    with pytest.raises(ctxselect.InputError, match="years 1 to 9999"):
        to_epoch_seconds("9999-12-31T23:59:59-05:00")


def test_epoch_seconds_up_to_the_year_5138():
    assert to_epoch_seconds(1_730_000_000) == 1_730_000_000.0
    assert to_epoch_seconds(99_999_999_999) == 99_999_999_999.0
    assert to_iso(to_epoch_seconds(-62_135_596_800)) == "0001-01-01T00:00:00Z"


def one_line_error(value, field="timestamp") -> str:
    with pytest.raises(ctxselect.InputError) as info:
        to_epoch_seconds(value, field)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_milliseconds_are_refused_with_the_time_and_the_fix():
    assert one_line_error(1_730_000_000_000) == (
        "field 'timestamp': 1730000000000 looks like epoch milliseconds (2024-10-27T03:33:20Z); "
        "expected epoch seconds (1730000000.0) or ISO-8601 text")
    assert "looks like epoch microseconds (2024-10-27T03:33:20Z)" in one_line_error(1_730_000_000_000_000)
    assert "looks like epoch nanoseconds (2024-10-27T03:33:20Z)" in one_line_error(1_730_000_000_000_000_000)


def test_numbers_that_may_be_seconds_after_5000_name_both_readings():
    """253,402,300,799 is 9999-12-31T23:59:59Z in seconds and 1978-01-11 in milliseconds: neither is
    guessed; ISO text says which."""
    message = one_line_error(253_402_300_799, "valid_to")
    assert message.startswith("field 'valid_to': 253402300799 looks like epoch milliseconds "
                              "(1978-01-11T21:31:40.799000Z) or epoch seconds after the year 5000")
    assert "expected epoch seconds below 1e11 (the year 5138) or ISO-8601 text" in message
    assert to_epoch_seconds("9999-12-31T23:59:59Z") == 253_402_300_799.0


@pytest.mark.parametrize("value", [10 ** 400, -10 ** 400, 3e20], ids=["1e400", "-1e400", "3e20"])
def test_numbers_past_every_unit_are_an_input_error(value):
    """10**400 used to escape as an OverflowError from float()."""
    message = one_line_error(value)
    assert message.startswith("field 'timestamp'") and len(message) < 200


def test_errors_name_the_candidate():
    with pytest.raises(ctxselect.InputError, match=r"^candidate 'a', field 'timestamp': 1730000000000 looks like"):
        ctxselect.Candidate(id="a", source="s", relevance=0.1, tokens=1, timestamp=1_730_000_000_000)
