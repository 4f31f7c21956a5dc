"""A record of another tool, as the gate takes it, and the small readers its fields need.

Each reader (``npcpy_files``, ``mem0_files``, ``letta_files``) turns what it finds into
``ForeignRecord`` values (or ``Skipped`` ones, with the record's position and why);
the gate (``gate``) does the rest the same way for every source. A field of the wrong
kind is the record's problem, never the file's: ``text_field`` and ``time_field``
raise ``RecordError``, which the reader turns into a skip at that position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from .._foundations.safe_yaml import quoted
from .summary import Skipped

__all__ = [
    "ForeignRecord",
    "RecordError",
    "json_refusals",
    "optional_text",
    "text_field",
    "time_field",
]

Decision = Literal["approve", "edit", "reject"]


class RecordError(ValueError):
    """One record cannot be imported; the message says why (its position is added)."""


@dataclass(frozen=True)
class ForeignRecord:
    """One memory of another tool, ready for the gate.

    ``decision`` is what a person decided in the source (npcpy only: None for a record
    that waits for review); ``final_text`` the edited text of an ``edit``. ``key`` is
    the record's own id in the source (what makes a second import of it a no-op), and
    ``details`` its provenance, kept as JSON in ``imported_records``.
    """

    position: str
    key: str
    text: str
    category: str = "fact"
    scope: str = "npc"
    npc: str | None = None
    team: str | None = None
    decision: Decision | None = None
    final_text: str | None = None
    model: str | None = None
    provider: str | None = None
    source_time: datetime | None = None
    details: dict[str, Any] = field(default_factory=dict)


def text_field(record: dict[Any, Any], name: str) -> str:
    """A required, non-empty text field."""
    value = record.get(name)
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"its {name!r} is {quoted(value)}, not text")
    return value


def optional_text(record: dict[Any, Any], name: str) -> str | None:
    """A text field that may be missing, empty or null (None then); any other kind of
    value is refused."""
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RecordError(f"its {name!r} is {quoted(value)}, not text")
    return str(value).strip()


def time_field(value: Any) -> datetime | None:
    """A time as the source wrote it (ISO 8601 text, a datetime, or seconds since the
    epoch), as naive UTC; None when missing. A time without a zone is taken as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            raise RecordError(f"its time {quoted(value)} is out of range") from None
    elif isinstance(value, str) and len(value) <= 64:
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise RecordError(f"its time {quoted(value)} is not an ISO 8601 time") from None
    else:
        raise RecordError(f"its time {quoted(value)} is not a time")
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment


_REFUSAL = re.compile(r"item (\d+): (.*)", re.DOTALL)


def json_refusals(refused: list[str], name: str) -> list[tuple[int, Skipped]]:
    """The items ``split_items`` refused (``"item N: reason"``), as skips at
    ``name[N]``, each with its index."""
    found = []
    for refusal in refused:
        match = _REFUSAL.fullmatch(refusal)
        index = int(match.group(1)) if match else -1
        reason = match.group(2) if match else refusal
        found.append((index, Skipped(f"{name}[{index}]", f"is malformed: {reason}")))
    return found
