"""What a reviewer may type for a defer date (the panel's box and the terminal's prompt
read it with the same function), counted from a fixed ``now``: never the wall clock."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from npc_nb.errors import InvalidValueError
from npc_nb.review.dates import defer_time

BERLIN = ZoneInfo("Europe/Berlin")
#: A Friday evening in Berlin (UTC+1 in December).
NOW = datetime(2026, 12, 4, 20, 19, tzinfo=BERLIN)


def berlin(*fields: int) -> datetime:
    return datetime(*fields, tzinfo=BERLIN).astimezone(UTC)


@pytest.mark.parametrize(
    ("typed", "due"),
    [
        ("", berlin(2026, 12, 5)),  # empty: tomorrow
        ("tomorrow", berlin(2026, 12, 5)),
        ("  Tomorrow ", berlin(2026, 12, 5)),
        ("next week", berlin(2026, 12, 11)),  # seven days on: a Friday, not next Monday
        ("NEXT   week", berlin(2026, 12, 11)),
        ("+1w", berlin(2026, 12, 11)),
        ("+3d", berlin(2026, 12, 7)),
        ("+2w", berlin(2026, 12, 18)),
        ("+12h", berlin(2026, 12, 5, 8, 19)),  # hours count from now, not from midnight
        ("saturday", berlin(2026, 12, 5)),
        ("mon", berlin(2026, 12, 7)),
        ("thursday", berlin(2026, 12, 10)),
        ("friday", berlin(2026, 12, 11)),  # today is a Friday: the next one
        ("2027-01-31", berlin(2027, 1, 31)),
        ("2027-01-31T09:30", berlin(2027, 1, 31, 9, 30)),
        ("2027-01-31 09:30", berlin(2027, 1, 31, 9, 30)),
        ("2027-01-31T09:30Z", datetime(2027, 1, 31, 9, 30, tzinfo=UTC)),
        ("2027-01-31T09:30+05:00", datetime(2027, 1, 31, 4, 30, tzinfo=UTC)),
        (date(2027, 1, 31), berlin(2027, 1, 31)),
        (datetime(2027, 1, 31, 9, 30), berlin(2027, 1, 31, 9, 30)),
    ],
)
def test_each_accepted_form_is_due_when_the_docs_say(typed: object, due: datetime) -> None:
    assert defer_time(typed, now=NOW) == due  # type: ignore[arg-type]


def test_day_forms_start_at_local_midnight_across_a_clock_change() -> None:
    """Berlin moves its clocks on 2026-03-29: a week later is still midnight there."""
    friday = datetime(2026, 3, 27, 12, 0, tzinfo=BERLIN)
    assert defer_time("next week", now=friday) == datetime(2026, 4, 2, 22, 0, tzinfo=UTC)
    assert defer_time("+24h", now=friday) == datetime(2026, 3, 28, 11, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "typed",
    ["someday", "next friday", "12/01", "01.02.2027", "in a week", "3d", "+3", "-2d", "week"],
)
def test_unknown_or_ambiguous_forms_are_refused_listing_the_accepted_ones(typed: str) -> None:
    with pytest.raises(InvalidValueError) as refused:
        defer_time(typed, now=NOW)
    message = str(refused.value)
    assert f"Cannot tell when {typed!r} is" in message
    for form in ("tomorrow", "next week", "+3d", "+12h", "friday", "2027-01-31"):
        assert form in message


@pytest.mark.parametrize(
    "typed", ["today", "+0d", "+0h", "2026-12-04", "2026-01-01", "2026-12-04T20:00"]
)
def test_a_time_that_is_not_in_the_future_is_refused(typed: str) -> None:
    with pytest.raises(InvalidValueError, match="Defer until a future time") as refused:
        defer_time(typed, now=NOW)
    assert "skip it (s)" in str(refused.value) and "next week" in str(refused.value)


def test_a_count_beyond_the_calendar_is_refused_not_a_crash() -> None:
    with pytest.raises(InvalidValueError, match="further ahead than a calendar goes"):
        defer_time("+999999w", now=NOW)
