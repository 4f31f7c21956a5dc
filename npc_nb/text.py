"""Pure text functions: normalising, hashing, instruction-like detection, evidence checks.

Normalisation decides what counts as "the same content" for tombstones and merges, so
it is deliberately conservative: Unicode NFKC, casefold, collapsed whitespace, and no
trailing punctuation. Anything looser is the fuzzy matcher's job, with a threshold.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["content_hash", "evidence_occurs_in", "instruction_flags", "normalise"]

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCTUATION = " .,;:!?…。、\"'”’)]»"

_INSTRUCTION_PATTERNS = {
    "instruction-like": re.compile(
        r"\b(from now on|going forward,? (you|always)|ignore (all |any )?(previous|prior|above"
        r"|earlier)|disregard (all |any |the )?(previous|prior|above|earlier|instructions)"
        r"|you (must|should|will) (always|never)|always (respond|reply|answer|say)"
        r"|never (respond|reply|answer|mention|reveal)|system prompt|new instructions?"
        r"|act as|pretend (to be|you are))\b",
        re.IGNORECASE,
    ),
    "contains-url": re.compile(r"(https?://|www\.)\S+", re.IGNORECASE),
    "tool-directive": re.compile(
        r"(\b(call|invoke|run|execute|use) (the )?(tool|function|command|shell)\b"
        r"|<\s*/?\s*(tool|function|npc-memory|system)\b|\bapprove_all\b)",
        re.IGNORECASE,
    ),
}


def normalise(text: str) -> str:
    """The canonical form two statements share when they say the same thing."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    collapsed = _WHITESPACE.sub(" ", folded).strip()
    return collapsed.rstrip(_TRAILING_PUNCTUATION).strip()


def content_hash(text: str) -> str:
    """A stable hash of the normalised text (hex, 32 characters)."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:32]


def instruction_flags(text: str) -> list[str]:
    """Flags for text that reads like an instruction to the model rather than a memory."""
    return [flag for flag, pattern in _INSTRUCTION_PATTERNS.items() if pattern.search(text)]


def evidence_occurs_in(evidence: str, source: str) -> bool:
    """Whether the evidence quote occurs in the source, ignoring case and spacing."""
    needle = _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", evidence).casefold()).strip()
    haystack = _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", source).casefold())
    return bool(needle) and needle in haystack
