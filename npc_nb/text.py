"""Pure text functions: normalising, hashing, instruction-like detection, evidence checks.

Normalisation decides what counts as "the same content" for tombstones and merges, so
it is deliberately conservative: Unicode NFKC, casefold, collapsed whitespace, and no
trailing punctuation. Anything looser is the fuzzy matcher's job, with a threshold.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = [
    "clean_text",
    "content_hash",
    "evidence_occurs_in",
    "instruction_flags",
    "normalise",
]

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCTUATION = " .,;:!?…。、\"'”’)]»"
_LEADING_MARKERS = " -*•·>\"'“‘([«"

_INSTRUCTION_PATTERNS = {
    "instruction-like": re.compile(
        r"\b(from now on|going forward,? (you|always)|ignore (all |any |the |your )*"
        r"(previous|prior|above|earlier|instructions|rules)|disregard (all |any |the )*"
        r"(previous|prior|above|earlier|instructions|everything|rules)|forget (all |your )*"
        r"(previous|instructions|rules)"
        r"|you (must|should|will) (always|never)|always (respond|reply|answer|say)"
        r"|never (respond|reply|answer|mention|reveal)|system prompt|new instructions?"
        r"|act as|pretend (to be|you are))\b",
        re.IGNORECASE,
    ),
    "contains-url": re.compile(
        r"(https?://|www\.)\S+|\b[\w-]+(\.[\w-]+)*\.(com|org|net|io|ai|dev|app|co|xyz|info)"
        r"(/\S*)?\b",
        re.IGNORECASE,
    ),
    "tool-directive": re.compile(
        r"(\b(call|invoke|run|execute|use) (the )?(tool|function|command|shell)\b"
        r"|<\s*/?\s*(tool|function|npc-memory|system)\b|\bapprove_all\b)",
        re.IGNORECASE,
    ),
}


def normalise(text: str) -> str:
    """The canonical form two statements share when they say the same thing.

    Invisible format characters (zero-width spaces, bidi marks) are dropped, list
    markers and quotes around the statement are removed.
    """
    visible = "".join(c for c in text if unicodedata.category(c) != "Cf")
    folded = unicodedata.normalize("NFKC", visible).casefold()
    collapsed = _WHITESPACE.sub(" ", folded).strip()
    return collapsed.lstrip(_LEADING_MARKERS).rstrip(_TRAILING_PUNCTUATION).strip()


def content_hash(text: str) -> str:
    """A stable hash of the normalised text (hex, 32 characters)."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:32]


def instruction_flags(text: str) -> list[str]:
    """Flags for text that reads like an instruction to the model rather than a memory."""
    flat = _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text))
    return [flag for flag, pattern in _INSTRUCTION_PATTERNS.items() if pattern.search(flat)]


def evidence_occurs_in(evidence: str, source: str) -> bool:
    """Whether the evidence quote occurs in the source, ignoring case and spacing."""
    needle = _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", evidence).casefold()).strip()
    haystack = _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", source).casefold())
    return bool(needle) and needle in haystack


def clean_text(text: str) -> str:
    """Text that can be stored: lone surrogates (invalid Unicode, as some model APIs
    and copy-pastes produce) become U+FFFD instead of failing the write."""
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
