"""npcpy's memories as records: its ``.knowledge.yaml`` (what npcpy 2.1.25's
``KnowledgeStore`` writes) and, in a SQLite file, the ``memory_lifecycle`` table of
older npcpy versions.

npcpy's statuses map one to one: ``human-approved`` and ``human-edited`` (final text
kept beside the initial one) are approvals, ``human-rejected`` a rejection (a
tombstone), ``pending_approval`` and ``auto-extracted`` wait for review. An approved
record whose final text differs from its initial text is imported as edited (npcpy
put the final text into its prompts). A record is keyed by its npcpy id (with its
time and text where ids are a table's row numbers), so importing a file again imports
nothing new.

The YAML is read with the bounded safe loader (``_foundations.safe_yaml``: no aliases,
no tags beyond plain data, bounded nesting and size); each memory is built on its own,
so a malformed one (a tag npc_nb does not build, a value of the wrong kind, bytes that
are not UTF-8) is skipped at its position (its index and line) and the others are read.
Bytes that are not UTF-8 are kept in the text as private-use placeholders while the
YAML is parsed (PyYAML refuses lone surrogates in the whole stream) and make only the
memory holding them a skipped one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .._foundations.safe_yaml import Refused, bounded_loader, quoted, yaml_problem
from ..errors import ConfigError
from ..store.bundle.foreign import read_foreign_table
from .records import ForeignRecord, RecordError, optional_text, text_field, time_field
from .source_file import SourceFile
from .summary import Skipped

__all__ = ["LIFECYCLE_COLUMNS", "NPCPY_STATUSES", "read_knowledge_yaml", "read_memory_lifecycle"]

#: npcpy's status, and the decision it records (None: waits for review).
NPCPY_STATUSES: dict[str, str | None] = {
    "human-approved": "approve",
    "human-edited": "edit",
    "human-rejected": "reject",
    "pending_approval": None,
    "auto-extracted": None,
}
#: The columns of older npcpy's ``memory_lifecycle`` table.
LIFECYCLE_COLUMNS = (
    "id",
    "message_id",
    "conversation_id",
    "npc",
    "team",
    "directory_path",
    "timestamp",
    "initial_memory",
    "final_memory",
    "status",
    "model",
    "provider",
    "created_at",
)
#: A knowledge file holds about twenty values per memory; this bounds it to ~100k.
MAX_VALUES = 2_000_000
#: Where bytes that are not UTF-8 wait while the YAML is parsed (U+F0080 to U+F00FF).
_PLACEHOLDER_BASE = 0xF0000
_PLACEHOLDERS = re.compile("[\U000f0000-\U000f00ff]")
_BAD_BYTES = re.compile("[\udc80-\udcff]")


def read_knowledge_yaml(source: SourceFile) -> list[ForeignRecord | Skipped]:
    """The memories of an npcpy ``.knowledge.yaml`` file, in file order."""
    import yaml

    text = _with_placeholders(source)
    loader = bounded_loader(MAX_VALUES)(text)
    try:
        root = loader.get_single_node()
    except Refused as exc:
        raise ConfigError(f"{source.path} {exc} Nothing was imported.") from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{source.path} is not valid YAML: {yaml_problem(exc)}. Nothing was imported."
        ) from None
    try:
        items = _memory_nodes(root, source)
        return [_knowledge_record(loader, index, node) for index, node in enumerate(items)]
    finally:
        loader.dispose()


def _with_placeholders(source: SourceFile) -> str:
    text = source.text or ""
    if not source.has_bad_bytes:
        return text
    if _PLACEHOLDERS.search(text):
        line = text.count("\n", 0, _BAD_BYTES.search(text).start()) + 1  # type: ignore[union-attr]
        raise ConfigError(f"{source.path} is not UTF-8 text (line {line}); save it as UTF-8.")
    return _BAD_BYTES.sub(lambda m: chr(_PLACEHOLDER_BASE + ord(m.group()) - 0xDC00), text)


def _memory_nodes(root: Any, source: SourceFile) -> list[Any]:
    """The nodes of the ``memories`` list (none in an empty file)."""
    import yaml

    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode):
        raise ConfigError(
            f"{source.path} is not an npcpy knowledge file: its top level is not a mapping "
            "with a 'memories' list."
        )
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "memories":
            if isinstance(value, yaml.SequenceNode):
                return list(value.value)
            if value.tag.endswith(":null"):
                return []
            raise ConfigError(f"{source.path}: 'memories' is not a list.")
    return []


def _knowledge_record(loader: Any, index: int, node: Any) -> ForeignRecord | Skipped:
    import yaml

    position = f"memories[{index}] (line {node.start_mark.line + 1})"
    try:
        value = loader.construct_object(node, deep=True)
    except (yaml.YAMLError, Refused, ValueError, TypeError, RecursionError) as exc:
        reason = yaml_problem(exc) if isinstance(exc, yaml.YAMLError) else str(exc)
        return Skipped(position, f"cannot be read: {reason}")
    if not isinstance(value, dict):
        return Skipped(position, f"is {quoted(value)}, not a memory (a mapping)")
    if _holds_placeholder(value):
        return Skipped(position, "holds bytes that are not UTF-8 text")
    try:
        return npcpy_record(value, position, "knowledge")
    except RecordError as exc:
        return Skipped(position, str(exc))


def _holds_placeholder(value: Any) -> bool:
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, str) and _PLACEHOLDERS.search(node):
            return True
        if isinstance(node, dict):
            pending += [*node.keys(), *node.values()]
        elif isinstance(node, list):
            pending += node
    return False


def npcpy_record(memory: dict[Any, Any], position: str, origin: str) -> ForeignRecord:
    """One npcpy memory (a knowledge-file entry or a ``memory_lifecycle`` row) as a
    record; RecordError when it cannot be one."""
    status = memory.get("status") or "pending_approval"
    if not isinstance(status, str) or status not in NPCPY_STATUSES:
        raise RecordError(
            f"its status {quoted(status)} is not one of npcpy's ({', '.join(NPCPY_STATUSES)})"
        )
    initial = text_field(memory, "initial_memory")
    final = optional_text(memory, "final_memory")
    decision = NPCPY_STATUSES[status]
    if decision == "approve" and final is not None and final != initial.strip():
        decision = "edit"
    if decision == "edit" and final is None:
        raise RecordError("it is human-edited but has no final_memory")
    npc, team = optional_text(memory, "npc"), optional_text(memory, "team")
    created = time_field(memory.get("created_at")) or time_field(memory.get("timestamp"))
    return ForeignRecord(
        position=position,
        key=_key(memory, origin, initial),
        text=initial,
        scope="npc" if npc else "team" if team else "project",
        npc=npc,
        team=team,
        decision=decision,  # type: ignore[arg-type]
        final_text=final if decision == "edit" else None,
        model=optional_text(memory, "model"),
        provider=optional_text(memory, "provider"),
        source_time=created,
        details=_details(memory, status),
    )


def _key(memory: dict[Any, Any], origin: str, initial: str) -> str:
    """npcpy's id; a table's row number is only unique with its time and text."""
    raw = memory.get("id")
    if isinstance(raw, str) and raw.strip() and origin == "knowledge":
        return f"{origin}:{raw.strip()}"
    stamp = f"{memory.get('created_at')}|{memory.get('timestamp')}|{initial}"
    digest = hashlib.sha256(stamp.encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"{origin}:{raw}:{digest}"


def _details(memory: dict[Any, Any], status: str) -> dict[str, Any]:
    kept = (
        "id", "message_id", "conversation_id", "directory_path", "source_type", "source_id",
        "timestamp", "created_at", "initial_memory", "final_memory",
    )  # fmt: skip
    found = {name: memory.get(name) for name in kept if memory.get(name) not in (None, "")}
    return {"source": "npcpy", "status": status, **found}


def read_memory_lifecycle(source: SourceFile) -> list[ForeignRecord | Skipped]:
    """The rows of an older npcpy's ``memory_lifecycle`` table, in row order."""
    table = read_foreign_table(
        source.path, "memory_lifecycle", LIFECYCLE_COLUMNS, ("initial_memory", "status")
    )
    records: list[ForeignRecord | Skipped] = []
    for rowid, row in table.rows:
        position = f"memory_lifecycle row {rowid}"
        values = {name: _text(value) for name, value in row.items()}
        if any(isinstance(v, str) and _BAD_BYTES.search(v) for v in values.values()):
            records.append(Skipped(position, "holds bytes that are not UTF-8 text"))
            continue
        try:
            records.append(npcpy_record(values, position, "memory_lifecycle"))
        except RecordError as exc:
            records.append(Skipped(position, str(exc)))
    return records


def _text(value: Any) -> Any:
    """A SQLite value read as bytes, as text (bytes that are not UTF-8 kept escaped)."""
    if isinstance(value, bytes | memoryview):
        return bytes(value).decode("utf-8", "surrogateescape")
    return value
