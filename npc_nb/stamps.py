"""Identifiers and timestamps, in one place so every table agrees on them.

Times are naive UTC ``datetime`` values (DuckDB ``TIMESTAMP``): the store never depends
on a machine's time zone. Ids are UUIDv7 strings, so sorting them follows creation time.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime

__all__ = ["new_id", "to_utc", "utc_now"]


def utc_now() -> datetime:
    """The current time as naive UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def to_utc(moment: datetime) -> datetime:
    """A caller's datetime as naive UTC; a naive input is taken as local time."""
    return moment.astimezone(UTC).replace(tzinfo=None)


def new_id() -> str:
    """A UUIDv7 string: 48 bits of milliseconds, then random bits."""
    millis = time.time_ns() // 1_000_000
    raw = bytearray(millis.to_bytes(6, "big") + os.urandom(10))
    raw[6] = (raw[6] & 0x0F) | 0x70
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))
