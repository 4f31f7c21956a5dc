"""Approved memories out, in another tool's import shape (``nb.exports.to``).

Only approved memories leave this way (the approval predicate: approved or edited,
current, valid; now, or at ``as_of``); the bundle is the lossless form. Each writer
takes the approved rows of both stores, oldest first:

- ``mem0``: JSON Lines, one ``Memory.add`` call per line (``m.add(**line)``):
  ``messages`` (the memory's text), ``infer: false`` (stored as written, no model),
  ``user_id`` the project's name, ``agent_id`` the persona of an npc-scoped memory, and
  ``metadata`` with npc_nb's id, category, scope, team, status, reviewer and time.
- ``letta``: an agent file (Letta's ``AgentFileSchema``, the format of its
  ``import_file``): one agent per persona, whose one memory block
  (``approved_memories``) holds the approved memories that persona sees, one per
  line (npc-scoped ones of its own, team-scoped ones of its teams, project and global
  ones); a project without personas gets one agent named after it.
- ``npcpy``: ``<folder>/.knowledge.yaml`` as npcpy 2.1.25's ``KnowledgeStore`` writes
  it, each memory ``human-approved`` (or ``human-edited``, initial and final text
  kept). An existing knowledge file is not overwritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from .._foundations.locations import output_path
from .._foundations.utc import utc_now
from ..errors import ConfigError, InvalidValueError
from ..store import Store
from ..store.analysis.frames import memories_frame
from ..store.memories.predicates import Moment

__all__ = ["EXPORT_KINDS", "export_approved"]

KNOWLEDGE_FILE = ".knowledge.yaml"
BLOCK_LABEL = "approved_memories"
#: Letta's default character limit of a block; a longer block gets its own length.
LETTA_BLOCK_LIMIT = 5000


def export_approved(
    read: Iterable[tuple[Store, Moment | None]],
    project: str,
    kind: str,
    path: str | os.PathLike[str],
) -> Path:
    """Write the memories approved in each store of ``read`` at its moment (None: now)
    for ``kind`` (``EXPORT_KINDS``) to ``path``."""
    writer = EXPORT_KINDS.get(kind) if isinstance(kind, str) else None
    if writer is None:
        raise InvalidValueError(
            "kind",
            kind,
            tuple(EXPORT_KINDS),
            hint="export_bundle() writes the whole project, losslessly.",
        )
    frames = [memories_frame(s, status="approved", npc=None, as_of=at) for s, at in read]
    rows = [row for frame in frames if not frame.empty for row in _records(frame)]
    rows.sort(key=lambda row: (row["recorded_at"], row["id"]))
    return writer(rows, project, path)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {k: (None if _missing(v) else v) for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list
        return False


def _time(value: Any) -> str | None:
    if isinstance(value, datetime | pd.Timestamp):
        return pd.Timestamp(value).to_pydatetime().isoformat() + "+00:00"
    return None


# -- mem0 -------------------------------------------------------------------------------


def _mem0(rows: list[dict[str, Any]], project: str, path: str | os.PathLike[str]) -> Path:
    target = output_path(path)
    lines = []
    for row in rows:
        metadata = {
            "source": "npc_nb",
            "npc_nb_id": row["id"],
            "category": row["category"],
            "scope": row["scope"],
            "team": row["team"],
            "status": row["status"],
            "approved_by": row["decided_by"],
            "approved_at": _time(row["decided_at"]),
            "recorded_at": _time(row["recorded_at"]),
        }
        if row["initial_text"] != row["final_text"]:
            metadata["initial_text"] = row["initial_text"]
        call: dict[str, Any] = {"messages": row["final_text"], "user_id": project}
        if row["scope"] == "npc" and row["npc"]:
            call["agent_id"] = row["npc"]
        call |= {"metadata": {k: v for k, v in metadata.items() if v is not None}, "infer": False}
        lines.append(json.dumps(call, ensure_ascii=False))
    _write_text(target, "".join(line + "\n" for line in lines))
    return target


# -- Letta ------------------------------------------------------------------------------


def _letta(rows: list[dict[str, Any]], project: str, path: str | os.PathLike[str]) -> Path:
    target = output_path(path)
    personas = sorted({row["npc"] for row in rows if row["npc"]}) or [project]
    agents, blocks = [], []
    for number, persona in enumerate(personas):
        lines = [" ".join(row["final_text"].split()) for row in _seen_by(rows, persona)]
        blocks.append(_letta_block(number, "\n".join(lines), project, len(lines)))
        agents.append(_letta_agent(number, persona, project))
    document = {
        "agents": agents,
        "groups": [],
        "blocks": blocks,
        "files": [],
        "sources": [],
        "tools": [],
        "mcp_servers": [],
        "metadata": {"exported_by": "npc_nb", "project": project},
        "created_at": utc_now().isoformat() + "+00:00",
    }
    _write_text(target, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return target


def _letta_block(number: int, value: str, project: str, memories: int) -> dict[str, Any]:
    return {
        "id": f"block-{number}",
        "label": BLOCK_LABEL,
        "value": value,
        "limit": max(LETTA_BLOCK_LIMIT, len(value)),
        "description": "Memories a person approved in npc_nb, one per line.",
        "metadata": {"source": "npc_nb", "project": project, "memories": memories},
        "is_template": False,
        "read_only": False,
    }


def _letta_agent(number: int, persona: str, project: str) -> dict[str, Any]:
    return {
        "id": f"agent-{number}",
        "name": persona,
        "description": f"{persona}, with the memories approved in npc_nb ({project})",
        "system": "",
        "agent_type": "letta_v1_agent",
        "block_ids": [f"block-{number}"],
        "memory_blocks": [],
        "tool_ids": [],
        "tools": [],
        "source_ids": [],
        "tags": ["npc_nb"],
        "messages": [],
        "in_context_message_ids": [],
        "metadata": {"source": "npc_nb"},
    }


def _seen_by(rows: list[dict[str, Any]], persona: str) -> list[dict[str, Any]]:
    """The approved memories ``persona`` sees: its own, its teams', the project's and
    the global ones (every one, for a project without personas)."""
    if not any(row["npc"] for row in rows):
        return rows
    teams = {row["team"] for row in rows if row["npc"] == persona and row["team"]}
    return [
        row
        for row in rows
        if row["scope"] in ("project", "global")
        or (row["scope"] == "npc" and row["npc"] == persona)
        or (row["scope"] == "team" and row["team"] in teams)
    ]


# -- npcpy ------------------------------------------------------------------------------


def _npcpy(rows: list[dict[str, Any]], project: str, path: str | os.PathLike[str]) -> Path:
    import yaml

    folder = Path(path).expanduser()
    if folder.name == KNOWLEDGE_FILE:
        folder = folder.parent
    target = output_path(folder, is_folder=True) / KNOWLEDGE_FILE
    if target.exists():
        raise ConfigError(
            f"{target} exists; npc_nb does not overwrite npcpy's memories. Export into "
            "another folder, or move that file aside first."
        )
    now = utc_now().isoformat() + "+00:00"
    memories = [_npcpy_memory(row, folder) for row in rows]
    data: dict[str, Any] = {
        "created_at": now,
        "updated_at": now,
        "last_extracted_at": None,
        "last_evolved_at": None,
        "scanned_files": {},
        "memories": memories,
        "knowledge": [],
        "concepts": [],
        "links": [],
    }
    text = yaml.safe_dump(data, default_flow_style=False, sort_keys=False, allow_unicode=True)
    _write_text(target, text)
    return target


def _npcpy_memory(row: dict[str, Any], folder: Path) -> dict[str, Any]:
    return {
        "id": row["id"],
        "message_id": row["source_message_id"] or "",
        "conversation_id": row["conversation_id"] or "",
        "npc": row["npc"] or "",
        "team": row["team"] or "",
        "directory_path": str(folder.absolute()),
        "timestamp": _time(row["decided_at"]) or _time(row["recorded_at"]),
        "initial_memory": row["initial_text"],
        "final_memory": row["final_text"],
        "status": row["status"],
        "model": row["extractor_model"] or "",
        "provider": row["provider"] or "",
        "created_at": _time(row["recorded_at"]),
        "source_type": "npc_nb",
        "source_id": row["id"],
    }


def _write_text(target: Path, text: str) -> None:
    """Write ``text`` next to ``target`` and rename it into place."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ConfigError(f"Cannot write {target}: {exc.strerror}.") from None


Writer = Callable[[list[dict[str, Any]], str, "str | os.PathLike[str]"], Path]
#: What ``export_to`` writes, by kind.
EXPORT_KINDS: dict[str, Writer] = {"mem0": _mem0, "letta": _letta, "npcpy": _npcpy}
