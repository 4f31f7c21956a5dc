"""The built-in offline model's behaviour: a demo and test model, no key, no network.

Chat replies show which memories were in the prompt, so a researcher (or a test) can see
the trust gate work. Extraction is deterministic and cue-based ("we decided ...", "I
prefer ...", "must/never ...", "by Friday ...", "TODO ..."), and emits the same JSON a
real model is asked for. Only statements are extracted: a question or a request to
recall ("What did we decide?", "Remind me what we decided") asks, it asserts nothing.
Nothing here imports litellm: ``npc_nb.models.gateway`` wraps these functions in a
litellm custom provider named ``npc_nb/offline``.
"""

from __future__ import annotations

import json
import re

from .._foundations.settings import OFFLINE_MODEL
from ..memory.block import BLOCK_CLOSE, BLOCK_OPEN

__all__ = [
    "CONCEPT_MARKER",
    "EXTRACTION_MARKER",
    "JUDGE_MARKER",
    "LABEL",
    "MODEL",
    "USE_IN_EXTRACTION",
    "USE_IN_PYTHON",
    "chat_reply",
    "extract",
    "is_offline",
    "judge",
    "message_text",
]

MODEL = OFFLINE_MODEL
LABEL = "offline demo model (npc_nb/offline): not a real LLM"
#: The way round a model that cannot be called, phrased for where it was chosen
#: (``ModelCallError.instead``): in Python, and for extraction; a ``%%npc`` cell
#: names its own ``--model`` option.
USE_IN_PYTHON = f"use model={MODEL!r} to try things offline"
USE_IN_EXTRACTION = (
    f"set extraction_model={MODEL!r} (nb.configure(...) or %npc_config) to extract offline"
)
#: Present in every extraction prompt, so the offline model knows which job it has.
EXTRACTION_MARKER = "[npc_nb memory extraction]"
#: Present in every concept prompt of the knowledge graph, for the same reason.
CONCEPT_MARKER = "[npc_nb concept extraction]"
#: Present in every prompt of the model judge (``matcher="model"``).
JUDGE_MARKER = "[npc_nb same-fact judge]"

_MEMORY_LINE = re.compile(r"^- \[(\w+)/(\w+)\] (.+)$", re.MULTILINE)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
#: Conversational lead-ins a memory should not keep ("And remember: I prefer ...").
_LEAD_IN = re.compile(
    r"^(and|also|oh|so|but|plus|remember|please note|note|by the way|btw|anyway|ok|okay)"
    r"\b[,:;]?\s+",
    re.IGNORECASE,
)
_WH = "what|who|whom|whose|when|where|which|why|how"
_AUX = "do|does|did|is|are|was|were|have|has|had|can|could|will|would|should|shall|may|might|must"
_SUBJECT = "i|we|you|they|he|she|it|there|our|my|your|their|the|this|that"
#: A question or a request to be told what is already known asks; it states nothing, so
#: it is never a memory ("What did we decide?", "Remind me what we decided about X").
#: Without a question mark, a question is told by its word order: it opens with an
#: auxiliary before its subject ("Did we ...", "Which tool do we ..."), whereas in
#: "What we decided was ..." the subject comes first.
_ASKS = re.compile(
    r"\?\s*$"
    rf"|^(({_WH})(\s+(?!({_SUBJECT})\b)\w+){{0,3}}\s+)?({_AUX})\s+({_SUBJECT})\b"
    rf"|\b(remind|tell|show) (me|us)( again)? ({_WH}|whether|if)\b"
    r"|\b(tell|show) (me|us) about\b"
    r"|\b(do|did|can|could) you (remember|recall)\b",
    re.IGNORECASE,
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week"
#: (category, confidence, cue): the first cue a sentence matches decides its category.
_CUES: list[tuple[str, float, re.Pattern[str]]] = [
    (category, confidence, re.compile(pattern, re.IGNORECASE))
    for category, confidence, pattern in [
        ("decision", 0.9, r"\b(we|i) (decided|agreed|chose|settled on)\b|\bwe'?ll go with\b"),
        ("preference", 0.85, r"\bi (prefer|like|love|hate|dislike|would rather|'d rather)\b"),
        ("constraint", 0.8, r"\b(must|must not|never|always|cannot|can't|may not|should not)\b"),
        ("commitment", 0.8, rf"\b(by ({_DAYS}|the end of)|deadline|i will|i'll|we will|we'll)\b"),
        ("open_loop", 0.7, r"\b(todo|to do|remind me|need to|open question|follow up)\b"),
        ("fact", 0.75, r"\b(my name is|i am a|i'm a|i work (at|on|in)|our (lab|team) (is|uses))\b"),
    ]
]


def is_offline(model: str | None) -> bool:
    return model is not None and model.startswith("npc_nb/")


def chat_reply(messages: list[dict]) -> str:
    """A deterministic reply that lists the memories the prompt carried."""
    system = "\n".join(message_text(m) for m in messages if m["role"] == "system")
    memories = _MEMORY_LINE.findall(_memory_block(system))
    user = next((message_text(m) for m in reversed(messages) if m["role"] == "user"), "")
    lines = [f"*[{LABEL}]*", ""]
    if memories:
        noun = "memory" if len(memories) == 1 else "memories"
        lines.append(f"I have {len(memories)} approved {noun} in context:")
        lines += [f"- ({scope}/{category}) {text}" for scope, category, text in memories]
    else:
        lines.append("I have no approved memories in context.")
    lines += ["", f"You said: {user.strip()}"]
    return "\n".join(lines)


def _memory_block(system: str) -> str:
    """The inside of the prompt's memory block: memory lines count only there."""
    start = system.find(BLOCK_OPEN)
    end = system.find(BLOCK_CLOSE, start)
    return system[start + len(BLOCK_OPEN) : end] if start >= 0 and end >= 0 else ""


def extract(messages: list[dict], limit: int = 5) -> str:
    """Cue-based extraction from the exchange in the prompt, as the JSON a model returns."""
    exchange = next((message_text(m) for m in reversed(messages) if m["role"] == "user"), "")
    said = _user_turn(exchange)
    found, seen = [], set()
    for sentence in (_strip_lead_in(s.strip()) for s in _SENTENCE.findall(said)):
        if _ASKS.search(sentence):
            continue
        for category, confidence, cue in _CUES:
            if sentence and cue.search(sentence) and sentence.casefold() not in seen:
                seen.add(sentence.casefold())
                statement = sentence if sentence[-1] in ".!?" else sentence + "."
                found.append(
                    {
                        "statement": statement,
                        "category": category,
                        "evidence_quote": sentence,
                        "confidence": confidence,
                    }
                )
                break
    return json.dumps({"memories": found[:limit]})


def _strip_lead_in(sentence: str) -> str:
    while (shorter := _LEAD_IN.sub("", sentence, count=1)) != sentence:
        sentence = shorter
    return sentence[:1].upper() + sentence[1:]


def _user_turn(exchange: str) -> str:
    """The user's words from the extraction prompt's transcript (``USER: ...`` block)."""
    match = re.search(r"USER:\s*(.*?)(?:\n\s*ASSISTANT:|\Z)", exchange, re.S)
    return match.group(1) if match else exchange


def message_text(message: dict) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # content blocks (prompt-cache breakpoints)
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def judge(messages: list[dict]) -> str:
    """The offline model's answer to the judge prompt: the offline matcher's verdicts
    (deterministic), as the JSON a model would give."""
    from ..memory.matching import offline_matcher

    payload = json.loads(message_text(messages[-1]))
    verdicts = offline_matcher(payload["candidate"], list(payload["existing"]))
    return json.dumps({"verdicts": [{"verdict": v, "score": round(s)} for v, s in verdicts]})
