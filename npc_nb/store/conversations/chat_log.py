"""SQL for conversations, messages and which memories went into which reply."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..contract import Connection, Store, insert_row, one_of, rows
from ..memories.predicates import VISIBLE, Moment, memories_at

__all__ = [
    "conversation",
    "conversation_starts",
    "few_shot_examples",
    "history",
    "injected_versions",
    "insert_injections",
    "insert_row",
    "message",
    "persona_names",
]


def conversation(store: Store, conversation_id: str) -> dict | None:
    with store.read() as con:
        found = rows(con, "SELECT * FROM conversations WHERE id = ?", [conversation_id])
    return found[0] if found else None


def conversation_starts(store: Store, conversation_ids: list[str]) -> dict[str, dict]:
    """{id: its persona (``npc``) and ``started_at``} of those of these conversations
    the store holds, in one read: what a review card names a conversation by."""
    if not conversation_ids:
        return {}
    listed, params = one_of("id", sorted(set(conversation_ids)), "conversation")
    with store.read() as con:
        found = rows(con, f"SELECT id, npc, started_at FROM conversations WHERE {listed}", params)
    return {row["id"]: row for row in found}


def persona_names(store: Store) -> tuple[set[str], set[str]]:
    """The personas the store knows: those that have memories, and those only talked
    to (a mistyped name in a cell is one of these until something is remembered)."""
    with store.read() as con:
        found = con.execute(
            "SELECT DISTINCT npc, true FROM memories WHERE npc IS NOT NULL "
            "UNION SELECT DISTINCT npc, false FROM conversations WHERE npc IS NOT NULL"
        ).fetchall()
    remembered = {name for name, has_memories in found if has_memories}
    return remembered, {name for name, _ in found} - remembered


def message(store: Store, message_id: str) -> dict | None:
    with store.read() as con:
        found = rows(con, "SELECT * FROM messages WHERE id = ?", [message_id])
    return found[0] if found else None


def history(store: Store, conversation_id: str, limit: int) -> list[dict]:
    """The conversation's last answered turns, oldest first, at most ``limit`` messages.

    A user message whose model call failed stays in the store but is not sent again
    (it has no reply, and two user turns in a row upset some providers); an empty reply
    is left out too. The cut starts on a user turn.
    """
    with store.read() as con:
        recent = rows(
            con,
            "SELECT id, role, content FROM messages WHERE conversation_id = ? "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            [conversation_id, 2 * limit + 2],
        )
    answered: list[dict] = []
    for message in recent[::-1]:
        if message["role"] == "assistant":
            if message["content"].strip() and answered and answered[-1]["role"] == "user":
                answered.append(message)
            elif answered and answered[-1]["role"] == "user":
                answered.pop()
        elif answered and answered[-1]["role"] == "user":
            answered[-1] = message  # the earlier one was never answered
        else:
            answered.append(message)
    if answered and answered[-1]["role"] == "user":
        answered.pop()
    kept = answered[-limit:] if limit else []
    return kept[1:] if kept and kept[0]["role"] == "assistant" else kept


def insert_injections(
    con: Connection, message_id: str, memory_ids: list[str], hashes: list[str], at: datetime
) -> None:
    """Which memories were in a reply's prompt, in prompt order: one statement for all."""
    if not memory_ids:
        return
    values = ", ".join("(?, ?, ?, ?, ?)" for _ in memory_ids)
    con.execute(
        f"INSERT INTO context_injections VALUES {values}",
        [
            value
            for position, (memory_id, memory_hash) in enumerate(
                zip(memory_ids, hashes, strict=True)
            )
            for value in (message_id, memory_id, position, memory_hash, at)
        ],
    )


def injected_versions(store: Store, message_ids: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each reply's injection manifest: the (memory id, text hash) pairs its prompt held."""
    if not message_ids:
        return {}
    manifests: dict[str, list[tuple[str, str]]] = {m: [] for m in message_ids}
    with store.read() as con:
        found = con.execute(
            "SELECT message_id, memory_id, memory_hash FROM context_injections "
            f"WHERE message_id IN ({', '.join('?' for _ in message_ids)}) "
            "ORDER BY message_id, position",
            message_ids,
        ).fetchall()
    for message_id, memory_id, memory_hash in found:
        manifests[message_id].append((memory_id, memory_hash))
    return manifests


def few_shot_examples(
    store: Store, npc: str, team: str | None, per_kind: int, as_of: Moment | None = None
) -> dict[str, list[dict]]:
    """Recent reviewer judgements visible to ``npc``: approved, edited, rejected (as
    they stood at ``as_of``, when given: a pinned kernel's)."""
    kinds = {
        "approved": "status = 'human-approved'",
        "edited": "status = 'human-edited' AND initial_text <> final_text",
        "rejected": "status = 'human-rejected'",
    }
    source, params = "memories", dict[str, Any]()
    if as_of is not None:
        state, params = memories_at(as_of, _EXAMPLE_COLUMNS)
        source = f"({state}) AS as_of"
    examples = {}
    with store.read() as con:
        for kind, condition in kinds.items():
            examples[kind] = rows(
                con,
                f"SELECT initial_text, final_text, category FROM {source} "
                f"WHERE {condition} AND {VISIBLE} ORDER BY decided_at DESC, id LIMIT $n",
                params | {"npc": npc, "team": team, "n": per_kind},
            )
    return examples


_EXAMPLE_COLUMNS = (
    "id", "initial_text", "final_text", "category", "status", "decided_at", "scope", "npc", "team",
    "experiment_arm",
)  # fmt: skip
