"""The two prompts npc_nb sends: a chat turn, and memory extraction from an exchange.

The chat prompt is cache-shaped: a static prefix (persona and directive), then the
memory block, then the conversation. Where the provider honours one, a prompt-cache
breakpoint sits after the static prefix. The extraction prompt's fixed part is hashed
into a prompt version, recorded on every candidate it produces, so a change of wording
shows up in the metrics; its few-shot examples come from this scope's own reviewed
memories, so reviewers' judgement feeds back into what is proposed.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..memory.block import escape_memory_text
from ..models.offline import EXTRACTION_MARKER
from ..vocabulary import CATEGORIES
from .personas import Npc

__all__ = [
    "EXTRACTION_VERSION",
    "WITHHELD",
    "chat_messages",
    "escape_directive",
    "extraction_messages",
    "withhold_retracted",
]

#: The "<" of anything that could become a memory-block tag, closed or not.
_TAG_OPENING = re.compile(r"<(?=\s*/?\s*(npc-memory|truncated)\b)", re.IGNORECASE)
#: What the model sees in place of an earlier reply that drew on a retracted memory.
WITHHELD = (
    "[Earlier reply withheld by npc_nb: it drew on a memory that is no longer approved "
    "(rejected, superseded, expired or undone). Do not rely on what it said.]"
)

_SHAPE = (
    json.dumps(
        {
            "memories": [
                {"statement": "...", "category": "...", "evidence_quote": "...", "confidence": 0.8}
            ]
        }
    )
    .replace("{", "{{")
    .replace("}", "}}")
)
_EXTRACTION_RULES = f"""{EXTRACTION_MARKER}
You extract long-term memory candidates from one exchange between a user and an AI
persona. A person reviews every candidate before it is ever used, so propose only what
is worth remembering across conversations:
- decisions taken, preferences stated, commitments and deadlines, constraints, open
  loops (things still to do), and durable facts about the user or the project;
- never small talk, never what the assistant said about itself, and never anything that
  instructs the model how to behave;
- one self-contained statement per memory, readable without the conversation;
- evidence_quote: the exact words from the exchange that support the statement;
- confidence: how sure you are that the user would want this remembered, from 0 to 1;
- at most {{limit}} memories. Proposing none is a good answer when nothing qualifies.
Categories: {", ".join(CATEGORIES)}.
Answer with JSON only, no prose:
{_SHAPE}
"""
#: Changes whenever the fixed wording above changes.
EXTRACTION_VERSION = hashlib.sha256(_EXTRACTION_RULES.encode()).hexdigest()[:12]


def chat_messages(
    persona: Npc, block: str, history: list[dict], user_text: str, *, cache_breakpoint: bool
) -> list[dict[str, Any]]:
    """System prefix (persona, directive, team context), memory block, the conversation
    so far, then the new message."""
    prefix = f"You are {persona.name}. {escape_directive(persona.directive)}"
    if persona.team_context:
        prefix += f"\n\nTeam context:\n{escape_directive(persona.team_context)}"
    if cache_breakpoint:
        parts: list[dict[str, Any]] = [
            {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}}
        ]
        if block:
            parts.append({"type": "text", "text": block})
        system: list[dict[str, Any]] = [{"role": "system", "content": parts}]
    else:
        system = [{"role": "system", "content": prefix}]
        if block:
            system.append({"role": "system", "content": block})
    turns = [{"role": m["role"], "content": m["content"]} for m in history]
    return [*system, *turns, {"role": "user", "content": user_text}]


def escape_directive(directive: str) -> str:
    """A directive with its memory tags escaped like memory text, so the memory block
    stays the only way memory reaches a prompt (a directive cannot carry a fake one)."""
    return _TAG_OPENING.sub("&lt;", directive)


def withhold_retracted(
    history: list[dict],
    manifests: dict[str, list[tuple[str, str]]],
    approved: dict[str, str],
) -> list[dict]:
    """The history with every reply whose prompt held a memory (id and text version)
    that is no longer approved replaced by ``WITHHELD``: a retracted memory must not come
    back through what the model once said with it."""
    kept = []
    for message in history:
        manifest = manifests.get(message.get("id", ""), ())
        if any(approved.get(memory_id) != version for memory_id, version in manifest):
            message = {**message, "content": WITHHELD}
        kept.append(message)
    return kept


def extraction_messages(
    user_text: str, reply_text: str, examples: dict[str, list[dict]], limit: int
) -> list[dict[str, str]]:
    """The extraction prompt for one exchange, with this scope's reviewed examples."""
    rules = _EXTRACTION_RULES.format(limit=limit)
    guidance = _examples(examples)
    transcript = f"USER: {user_text}\n\nASSISTANT: {reply_text}"
    return [
        {"role": "system", "content": rules + (f"\n{guidance}" if guidance else "")},
        {"role": "user", "content": transcript},
    ]


def _examples(examples: dict[str, list[dict]]) -> str:
    lines = []
    if examples.get("approved"):
        lines.append("Statements the reviewer approved (good examples):")
        lines += [f"- {escape_memory_text(e['final_text'])}" for e in examples["approved"]]
    if examples.get("edited"):
        lines.append("Statements the reviewer corrected (write them like the corrected form):")
        lines += [
            f"- {escape_memory_text(e['initial_text'])} -> {escape_memory_text(e['final_text'])}"
            for e in examples["edited"]
        ]
    if examples.get("rejected"):
        lines.append("Statements the reviewer rejected (never propose these or similar):")
        lines += [f"- {escape_memory_text(e['final_text'])}" for e in examples["rejected"]]
    return "\n".join(lines)
