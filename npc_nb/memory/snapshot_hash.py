"""A snapshot's hash: one canonical JSON line per approved memory, SHA-256 over them.

``hash_line`` is what ``json.dumps(fields, sort_keys=True, ensure_ascii=False,
separators=(",", ":"))`` writes of a memory's id, text, scope, persona, team and
validity window (times as ISO 8601 with microseconds, absent values as null), built
directly: a read at a snapshot hashes every approved memory before it answers, so
the line is made without a dict or an encoder per memory (docs/reproducibility.md
shows the algorithm; a test holds the two to the same bytes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any

__all__ = ["content_hash", "hash_line", "hash_of", "line"]


def hash_line(row: dict[str, Any]) -> str:
    """One approved memory as its canonical JSON line (keys sorted, no spaces, UTF-8,
    times as ISO 8601 with microseconds, absent values as null): what
    ``json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``
    writes, built directly (a read at a snapshot hashes every approved memory)."""
    return line(
        row["id"], row["npc"], row["scope"], row["team"], row["final_text"],
        row["valid_from"], row["valid_to"],
    )  # fmt: skip


def line(
    id_: str, npc: str | None, scope: str, team: str | None, text: str,
    valid_from: datetime | None, valid_to: datetime | None,
) -> str:  # fmt: skip
    return (
        f'{{"id":{_text(id_)},"npc":{_text(npc)},"scope":{_text(scope)},'
        f'"team":{_text(team)},"text":{_text(text)},'
        f'"valid_from":{_time(valid_from)},"valid_to":{_time(valid_to)}}}'
    )


def content_hash(rows: Iterable[dict[str, Any]]) -> str:
    """SHA-256 (hex) of the approved memories: their ``hash_line``s ordered by id, each
    ending in a newline."""
    return hash_of([(row["id"], hash_line(row)) for row in rows])


def hash_of(lines: list[tuple[str, str]]) -> str:
    """``content_hash`` of (id, line) pairs."""
    lines.sort(key=lambda pair: pair[0])
    text = "".join(line + "\n" for _, line in lines)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _text(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)


def _time(moment: datetime | None) -> str:
    return "null" if moment is None else f'"{moment.isoformat(timespec="microseconds")}"'
