"""Identifiers and timestamps, in one place so every table agrees on them.

Times are naive UTC ``datetime`` values (DuckDB ``TIMESTAMP``): the store never depends
on a machine's time zone. Ids are UUIDv7 strings, so sorting them follows creation time.
"""

from __future__ import annotations

import os
import time as clock
import uuid
from datetime import UTC, date, datetime, time

__all__ = ["new_id", "to_utc", "utc_now"]


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


def new_id() -> str:
    """A UUIDv7 string: 48 bits of milliseconds, then random bits."""
    millis = clock.time_ns() // 1_000_000
    raw = bytearray(millis.to_bytes(6, "big") + os.urandom(10))
    raw[6] = (raw[6] & 0x0F) | 0x70
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))
