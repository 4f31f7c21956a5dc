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
from typing import Any

from .context import escape_memory_text
from .offline import EXTRACTION_MARKER
from .personas import Persona
from .vocabulary import CATEGORIES

__all__ = ["EXTRACTION_VERSION", "chat_messages", "extraction_messages"]

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
    persona: Persona, block: str, history: list[dict], user_text: str, *, cache_breakpoint: bool
) -> list[dict[str, Any]]:
    """System prefix, memory block, the conversation so far, then the new message."""
    prefix = f"You are {persona.name}. {persona.directive}"
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
