"""When a deferred card is due again: the one reader of the date a reviewer types.

The review panel's defer box and ``npc-nb review``'s defer prompt both hand what was
typed to ``defer_time`` (through ``ReviewSession.defer_time``), so the two front ends
accept exactly the same forms. Case and spaces around the answer do not matter:

- an empty answer, or ``tomorrow``: the start (00:00) of tomorrow;
- ``next week``: the start of the day seven days after today, the same weekday as
  today (not the next Monday); ``+1w`` says the same;
- ``+3d``, ``+2w``: the start of the day 3 days, 2 weeks after today;
- ``+12h``: exactly 12 hours from now;
- a weekday, ``friday`` or ``fri``: the start of the next Friday strictly after today
  (on a Friday, the Friday a week later);
- an ISO 8601 date, ``2026-12-31``: the start of that day; or an ISO date and time,
  ``2026-12-31T09:30`` or ``2026-12-31 09:30``, with an offset (``+01:00``, ``Z``) if
  it is not local time.

Anything else is refused, an ``InvalidValueError`` listing these forms: in particular what
could be read two ways (``next friday``: this coming one or the one after? ``12/01``:
which is the month?) and every time that is not in the future (the card would be due
at once; a skip shows it again later in the same review).

Relative forms count from ``now``, which the caller passes: the session's clock in use,
a fixed moment in tests. A naive ``now`` is the machine's local time, and naive times
typed are read in the same frame as ``now``. The answer is an aware datetime in UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

from ..errors import InvalidValueError

__all__ = ["WEEKDAYS", "accepted_forms", "defer_time"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: ``+3d``: a count and a unit (days, weeks from the start of today; hours from now).
_OFFSET = re.compile(r"\+\s*(\d{1,6})\s*([dwh])")
_DAYS_AHEAD = {"today": 0, "tomorrow": 1, "next week": 7}  # today: refused as past


def defer_time(typed: str | date | datetime | None, *, now: datetime) -> datetime:
    """When a card deferred with ``typed`` is due again (aware, UTC); the forms are in
    this module's docstring. ``None`` and ``""`` mean tomorrow. A ``date`` is the start
    of that day, a ``datetime`` that moment. Refused with an ``InvalidValueError`` that lists
    the accepted forms: a form not listed, or a time not after ``now``."""
    moment = _moment(typed, now)
    if moment <= now.astimezone(UTC):
        raise _refused(
            typed,
            now,
            f"Defer until a future time; {_shown(typed)} is not after now "
            f"({now:%Y-%m-%d %H:%M}), so the card would be due at once",
            hint="To see it again later in this review, skip it (s).",
        )
    return moment


def accepted_forms(now: datetime) -> str:
    """The forms ``defer_time`` accepts, in one sentence for a refusal or a prompt."""
    return f"Accepted: {_forms(now)}."


def _forms(now: datetime) -> str:
    example = date(now.year + 1, 1, 31).isoformat()
    return (
        "tomorrow (also an empty answer), next week (7 days from today), +3d or +2w (days "
        "or weeks after today), +12h (hours from now), a weekday such as friday (the next "
        f"one after today), or an ISO date or time such as {example} or {example}T09:30"
    )


def _refused(typed: object, now: datetime, lead: str, hint: str = "") -> InvalidValueError:
    """The error for a defer time ``typed`` that is not allowed: it lists the forms."""
    return InvalidValueError("until", typed, _forms(now), lead=lead, hint=hint)


def _moment(typed: str | date | datetime | None, now: datetime) -> datetime:
    """``typed`` as an aware UTC datetime, not yet checked to be in the future."""
    if isinstance(typed, datetime):
        return _utc(typed, now)
    if isinstance(typed, date):
        return _start_of(typed, now)
    if typed is None:
        typed = ""
    if not isinstance(typed, str):
        raise _refused(typed, now, f"Defer until a date or a time, not {typed!r}")
    words = " ".join(typed.lower().split())
    if not words:
        words = "tomorrow"
    today = now.date()
    if words in _DAYS_AHEAD:
        return _start_of(today + timedelta(days=_DAYS_AHEAD[words]), now)
    if (weekday := _weekday(words)) is not None:
        return _start_of(today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1), now)
    if (offset := _OFFSET.fullmatch(words)) is not None:
        return _after(int(offset.group(1)), offset.group(2), now)
    try:
        return _utc(datetime.fromisoformat(words.upper()), now)
    except ValueError:
        raise _refused(typed, now, f"Cannot tell when {typed.strip()!r} is") from None


def _weekday(words: str) -> int | None:
    """Monday 0 ... Sunday 6 for a weekday's name or its first three letters."""
    for number, name in enumerate(WEEKDAYS):
        if words in (name, name[:3]):
            return number
    return None


def _after(count: int, unit: str, now: datetime) -> datetime:
    try:
        if unit == "h":
            return now.astimezone(UTC) + timedelta(hours=count)
        return _start_of(now.date() + timedelta(days=count * (7 if unit == "w" else 1)), now)
    except OverflowError:
        raise _refused(
            f"+{count}{unit}", now, f"+{count}{unit} is further ahead than a calendar goes"
        ) from None


def _start_of(day: date, now: datetime) -> datetime:
    """00:00 of ``day`` in ``now``'s frame (its time zone, or local time if naive)."""
    return _utc(datetime.combine(day, time()), now)


def _utc(moment: datetime, now: datetime) -> datetime:
    """``moment`` in UTC; a naive one is read in ``now``'s frame."""
    if moment.tzinfo is None and now.tzinfo is not None:
        moment = moment.replace(tzinfo=now.tzinfo)
    return moment.astimezone(UTC)  # a naive moment (and now) is the machine's local time


def _shown(typed: object) -> str:
    if isinstance(typed, str):
        return repr(typed.strip()) if typed.strip() else "tomorrow"
    return str(typed)
