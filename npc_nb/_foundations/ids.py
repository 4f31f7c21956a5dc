"""Identifiers: UUIDv7 strings, so sorting ids follows creation time, in every table."""

from __future__ import annotations

import os
import time
import uuid

__all__ = ["new_id"]


def new_id() -> str:
    """A UUIDv7 string: 48 bits of milliseconds, then random bits."""
    millis = time.time_ns() // 1_000_000
    raw = bytearray(millis.to_bytes(6, "big") + os.urandom(10))
    raw[6] = (raw[6] & 0x0F) | 0x70
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))
