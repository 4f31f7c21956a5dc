"""mem0's memories as records: the JSON ``Memory.get_all()`` returns, or the ``history``
table of mem0's SQLite file.

``get_all()`` gives ``{"results": [...]}`` (a bare list in mem0's v1 API), each item
``id``, ``memory``, ``hash``, ``created_at``, ``updated_at``, and where set
``user_id``, ``agent_id``, ``run_id``, ``actor_id``, ``role`` and ``metadata``.
The history table (``id, memory_id, old_memory, new_memory, event, created_at,
updated_at, is_deleted``, and ``actor_id, role`` in newer versions) records each
memory's ADD, UPDATE and DELETE; a memory's text is its last ``new_memory``, and one
whose last event deleted it is not imported (reported as skipped).

mem0 records no human decision (its model adds, updates and deletes), so every record
is a pending candidate. A memory of an agent (``agent_id``) is that persona's
(npc scope); any other the project's. A ``metadata.category`` npc_nb knows is kept.
Each JSON item is parsed on its own (``_foundations.json_items``): a malformed one is
skipped at its index, the others are read.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from .._foundations.json_items import OutputError, split_items
from .._foundations.safe_yaml import quoted
from ..errors import ConfigError
from ..store.bundle.foreign import read_foreign_table
from ..vocabulary import CATEGORIES
from .records import (
    ForeignRecord,
    RecordError,
    json_refusals,
    optional_text,
    text_field,
    time_field,
)
from .source_file import MAX_TEXT_BYTES, SourceFile
from .summary import Skipped

__all__ = ["HISTORY_COLUMNS", "read_mem0_dump", "read_mem0_history"]

HISTORY_COLUMNS = (
    "id",
    "memory_id",
    "old_memory",
    "new_memory",
    "event",
    "created_at",
    "updated_at",
    "is_deleted",
    "actor_id",
    "role",
)
_IDS = ("user_id", "agent_id", "run_id", "actor_id", "role")
_KEPT_HISTORY = 20


def read_mem0_dump(source: SourceFile) -> list[ForeignRecord | Skipped]:
    """The memories of a ``get_all()`` dump, in its order."""
    try:
        items, refused = split_items(source.text or "", "results", max_chars=MAX_TEXT_BYTES)
    except OutputError as exc:
        raise ConfigError(
            f"{source.path} is not a mem0 dump ({exc}): save what Memory.get_all() "
            'returns, {"results": [...]}, as JSON. Nothing was imported.'
        ) from None
    found: list[tuple[int, ForeignRecord | Skipped]] = list(json_refusals(refused, "results"))
    for index, item in items:
        found.append((index, _dump_record(index, item)))
    return [record for _, record in sorted(found, key=lambda pair: pair[0])]


def _dump_record(index: int, item: Any) -> ForeignRecord | Skipped:
    position = f"results[{index}]"
    if not isinstance(item, dict):
        return Skipped(position, f"is {quoted(item)}, not a memory (an object)")
    try:
        key = text_field(item, "id")
        metadata = item.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise RecordError(f"its metadata is {quoted(metadata)}, not an object")
        return _record(
            position,
            key,
            text_field(item, "memory"),
            {name: optional_text(item, name) for name in _IDS},
            time_field(item.get("created_at")),
            {
                "hash": item.get("hash"),
                "created_at": item.get("created_at"),
                "updated_at": item.get("updated_at"),
                "metadata": metadata,
            },
        )
    except RecordError as exc:
        return Skipped(position, str(exc))


def _record(
    position: str,
    key: str,
    text: str,
    ids: dict[str, str | None],
    created: Any,
    extra: dict[str, Any],
) -> ForeignRecord:
    metadata = extra.get("metadata") or {}
    category = metadata.get("category") if isinstance(metadata, dict) else None
    agent = ids.get("agent_id")
    details = {"source": "mem0", "id": key, **{k: v for k, v in ids.items() if v}}
    details |= {k: v for k, v in extra.items() if v not in (None, "", {}, [])}
    return ForeignRecord(
        position=position,
        key=key,
        text=text,
        category=category if category in CATEGORIES else "fact",
        scope="npc" if agent else "project",
        npc=agent,
        source_time=created,
        details=details,
    )


def read_mem0_history(source: SourceFile) -> list[ForeignRecord | Skipped]:
    """Each memory of mem0's ``history`` table, as its last event left it."""
    table = read_foreign_table(
        source.path, "history", HISTORY_COLUMNS, ("memory_id", "new_memory", "event")
    )
    events: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    order: list[str] = []
    for rowid, row in table.rows:
        values = {name: _text(value) for name, value in row.items()}
        memory_id = values.get("memory_id")
        key = memory_id if isinstance(memory_id, str) else f"row {rowid}"
        if key not in events:
            order.append(key)
        events[key].append((rowid, values))
    return [_history_record(key, events[key]) for key in order]


def _history_record(key: str, rows: list[tuple[int, dict[str, Any]]]) -> ForeignRecord | Skipped:
    rowid, last = rows[-1]
    position = f"history row {rowid} (memory {quoted(key)})"
    event = str(last.get("event") or "").upper()
    if event == "DELETE" or str(last.get("is_deleted") or "0") not in ("0", "False", "false"):
        return Skipped(position, "deleted in mem0; not imported")
    texts = [values.get("new_memory") for _, values in rows]
    text = next((t for t in reversed(texts) if isinstance(t, str) and t.strip()), None)
    if text is None:
        return Skipped(position, "has no text (new_memory)")
    if any("\udc80" <= c <= "\udcff" for c in text):
        return Skipped(position, "holds bytes that are not UTF-8 text")
    first = rows[0][1]
    ids = {name: last.get(name) if isinstance(last.get(name), str) else None for name in _IDS}
    history = [
        {n: values.get(n) for n in ("event", "old_memory", "new_memory", "created_at", "actor_id")}
        for _, values in rows[-_KEPT_HISTORY:]
    ]
    try:
        created = time_field(first.get("created_at"))
    except RecordError:
        created = None
    return _record(position, key, text, ids, created, {"history": history})


def _text(value: Any) -> Any:
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("utf-8", "surrogateescape")
    return value
