"""Time: the one conversion of a caller's moment to what the store keeps.

Times are naive UTC ``datetime`` values (DuckDB ``TIMESTAMP``): the store never depends
on a machine's time zone, or on a session's TimeZone setting.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time

__all__ = ["to_utc", "utc_now"]


def utc_now() -> datetime:
    """The current time as naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_utc(moment: object, *, name: str = "time") -> datetime:
    """A caller's moment as naive UTC: a datetime (naive means local time), a date (local
    midnight), or an ISO 8601 string. Anything else is a ValueError naming ``name``."""
    if isinstance(moment, str):
        try:
            moment = datetime.fromisoformat(moment.strip())
        except ValueError as exc:
            raise ValueError(
                f"{name}={moment!r} is not an ISO 8601 time such as '2026-12-01' or "
                "'2026-12-01T09:30'."
            ) from exc
    if isinstance(moment, date) and not isinstance(moment, datetime):
        moment = datetime.combine(moment, time())
    if not isinstance(moment, datetime):
        raise ValueError(
            f"{name} must be a datetime, a date or an ISO 8601 string, not {moment!r}."
        )
    return moment.astimezone(UTC).replace(tzinfo=None)
