"""Letta's agent files (``.af``) as records: each memory block's value split into
candidate memories, and archival passages where the file has them.

An agent file (Letta's ``AgentFileSchema``) holds ``agents`` (each with a ``name`` and
the ``block_ids`` of its memory blocks) and ``blocks`` (each an ``id``, a ``label``
such as ``human`` or ``persona``, and a ``value``: the block's text); files of the
first format hold one agent with its blocks inline as ``core_memory``. A block's value
is split by line (list bullets and numbering stripped), and a long line by sentence,
each piece a candidate of the agent's persona (npc scope; a block no agent names is
the project's); the label is kept as a category hint (``preferences`` a preference,
``goals`` an open loop, ...) and in the provenance. Passages (``passages`` at the top
or in an agent, each a ``text``) are candidates too.

Letta records no human decision (the agent edits its own blocks), so everything is a
pending candidate. Each agent, block and passage is parsed on its own
(``_foundations.json_items``): a malformed one is skipped at its position. A piece is
keyed by its agent, label and text, so importing the file again imports nothing new.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .._foundations.json_items import OutputError, split_items
from .._foundations.safe_yaml import quoted
from ..errors import ConfigError
from .records import ForeignRecord, json_refusals, time_field
from .source_file import MAX_TEXT_BYTES, SourceFile
from .summary import Skipped

__all__ = ["LABEL_CATEGORIES", "read_agent_file", "split_block"]

#: Words in a block's label, and the category they hint at (else ``fact``).
LABEL_CATEGORIES = (
    ("prefer", "preference"),
    ("like", "preference"),
    ("goal", "open_loop"),
    ("todo", "open_loop"),
    ("task", "open_loop"),
    ("plan", "open_loop"),
    ("constraint", "constraint"),
    ("rule", "constraint"),
    ("instruction", "constraint"),
    ("decision", "decision"),
    ("commit", "commitment"),
    ("promise", "commitment"),
)
#: A line longer than this is split into its sentences.
LONG_LINE = 300
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def read_agent_file(source: SourceFile) -> list[ForeignRecord | Skipped]:
    """The candidate memories of a Letta agent file, agent by agent, block by block."""
    text = source.text or ""
    try:
        agents, refused_agents = split_items(text, "agents", max_chars=MAX_TEXT_BYTES)
    except OutputError:
        return _first_format(source, text)
    blocks, refused_blocks = _items(text, "blocks")
    records: list[ForeignRecord | Skipped] = [s for _, s in json_refusals(refused_agents, "agents")]
    records += [s for _, s in json_refusals(refused_blocks, "blocks")]
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for index, block in blocks:
        if isinstance(block, dict) and isinstance(block.get("id"), str):
            by_id[block["id"]] = (index, block)
        else:
            records.append(Skipped(f"blocks[{index}]", f"is {quoted(block)}, not a block"))
    named: set[str] = set()
    names: dict[str, str] = {}
    for index, agent in agents:
        if not isinstance(agent, dict) or not isinstance(agent.get("name"), str):
            records.append(Skipped(f"agents[{index}]", "is not an agent with a name"))
            continue
        if isinstance(agent.get("id"), str):
            names[agent["id"]] = agent["name"]
        for block_id in agent.get("block_ids") or []:
            if block_id in by_id:
                named.add(block_id)
                records += _block_records(agent["name"], *by_id[block_id])
        records += _passages(agent.get("passages"), agent["name"], f"agents[{index}].passages")
    for block_id, (index, block) in by_id.items():
        if block_id not in named:
            records += _block_records(None, index, block)
    passages, refused = _items(text, "passages")
    records += [s for _, s in json_refusals(refused, "passages")]
    records += _passages([p for _, p in passages], None, "passages", names)
    return records


def _items(text: str, key: str) -> tuple[list[tuple[int, Any]], list[str]]:
    """The items of the top-level list ``key``; none if the file has no such list."""
    try:
        return split_items(text, key, max_chars=MAX_TEXT_BYTES)
    except OutputError:
        return [], []


def _first_format(source: SourceFile, text: str) -> list[ForeignRecord | Skipped]:
    """A file of the first format: one agent, its blocks inline (``core_memory``)."""
    try:
        blocks, refused = split_items(text, "core_memory", max_chars=MAX_TEXT_BYTES)
        agent = json.loads(text)  # the blocks parsed: it nests no deeper than they allow
    except (OutputError, ValueError, RecursionError) as exc:
        raise ConfigError(
            f"{source.path} is not a Letta agent file ({str(exc)[:200]}): it has neither "
            "'agents' and 'blocks' nor 'core_memory'. Nothing was imported."
        ) from None
    name = agent.get("name") if isinstance(agent, dict) else None
    name = name if isinstance(name, str) and name.strip() else None
    records: list[ForeignRecord | Skipped] = [s for _, s in json_refusals(refused, "core_memory")]
    for index, block in blocks:
        records += _block_records(name, index, block, "core_memory")
    return records


def _block_records(
    agent: str | None, index: int, block: Any, where: str = "blocks"
) -> list[ForeignRecord | Skipped]:
    label = block.get("label") if isinstance(block, dict) else None
    value = block.get("value") if isinstance(block, dict) else None
    position = f"{where}[{index}]" + (f" ({label!s:.40})" if isinstance(label, str) else "")
    if not isinstance(value, str):
        return [Skipped(position, f"has value {quoted(value)}, not text")]
    label = label if isinstance(label, str) else ""
    records: list[ForeignRecord | Skipped] = []
    for number, piece in split_block(value):
        records.append(
            ForeignRecord(
                position=f"{position}, line {number}",
                key=_key(agent, label, piece),
                text=piece,
                category=_category(label),
                scope="npc" if agent else "project",
                npc=agent,
                details={
                    "source": "letta",
                    "agent": agent,
                    "label": label,
                    "line": number,
                    "block_id": block.get("id"),
                    "limit": block.get("limit"),
                },
            )
        )
    return records


def split_block(value: str) -> list[tuple[int, str]]:
    """A block's value as (line number, piece): one per non-empty line, list markers
    stripped, a line longer than ``LONG_LINE`` split into sentences."""
    pieces = []
    for number, line in enumerate(value.splitlines(), start=1):
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        parts = _SENTENCE.split(line) if len(line) > LONG_LINE else [line]
        pieces += [(number, part.strip()) for part in parts if part.strip()]
    return pieces


def _category(label: str) -> str:
    lowered = label.lower()
    return next((category for word, category in LABEL_CATEGORIES if word in lowered), "fact")


def _key(agent: str | None, label: str, text: str) -> str:
    digest = hashlib.sha256(
        "\x00".join([agent or "", label, text]).encode("utf-8", "surrogatepass")
    ).hexdigest()
    return f"block:{digest[:32]}"


def _passages(
    found: Any, agent: str | None, where: str, names: dict[str, str] | None = None
) -> list[ForeignRecord | Skipped]:
    """Archival passages: the agent's (``agent``), or at the top of the file, the agent
    their ``agent_id`` names (``names``: agent id to name)."""
    if not isinstance(found, list):
        return []
    return [
        _passage(f"{where}[{index}]", passage, agent, names or {})
        for index, passage in enumerate(found)
    ]


def _passage(
    position: str, passage: Any, agent: str | None, names: dict[str, str]
) -> ForeignRecord | Skipped:
    text = passage.get("text") if isinstance(passage, dict) else None
    if not isinstance(text, str) or not text.strip():
        return Skipped(position, "is not a passage with text")
    named = passage.get("agent_id")
    owner = agent if agent is not None else names.get(named) if isinstance(named, str) else None
    raw_id = passage.get("id")
    key = f"passage:{raw_id}" if isinstance(raw_id, str) and raw_id else _key(owner, "", text)
    try:
        created = time_field(passage.get("created_at"))
    except ValueError:
        created = None
    return ForeignRecord(
        position=position,
        key=key,
        text=text.strip(),
        scope="npc" if owner else "project",
        npc=owner,
        source_time=created,
        details={"source": "letta", "passage_id": raw_id, "agent": owner},
    )
