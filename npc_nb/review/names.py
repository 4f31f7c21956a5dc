"""How a review names what it shows: by text and time, never by id.

A reviewer reads words, not UUIDs. A card is named by its text, shortened
(``card_name``); a conversation by its persona and when it started
(``conversation_name``); the memory an automatic outcome matched by its text, and a card
a wording merged into by the card's own wording, not by what it was approved as
(``automatic_target``). What a candidate asserts differently from a neighbour
(``differs_line``) is stored with the candidate when it is proposed, naming that memory
by id, in the status it had then and (before npc_nb wrote words as written) in the
matcher's stems: the line shown reads that memory's status and text as they are now, and
the words as the texts write them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from .._foundations.terms import as_written

__all__ = [
    "SHORTENED",
    "automatic_target",
    "card_name",
    "conversation_name",
    "differs_line",
    "done_as",
    "shortened",
]

#: Characters of a text a status line or a list shows before it is cut at a word.
SHORTENED = 48
#: How a memory's status reads in "differs from the approved memory ...".
_STATUS = {
    "pending_approval": "pending",
    "deferred": "deferred",
    "human-approved": "approved",
    "human-edited": "approved",
    "human-rejected": "rejected",
    "superseded": "superseded",
}
#: How a decision heard from another kernel reads: "... was approved by bob elsewhere".
_DONE_AS = {
    "human-approved": "approved",
    "human-edited": "approved with an edit",
    "human-rejected": "rejected",
    "deferred": "deferred",
    "superseded": "replaced by a newer version",
}
#: The note ``memory.proposal`` stores: differs from <status> memory <id> (<text!r>): <what>
_NOTE = re.compile(
    r"differs from (?P<status>\w+) memory (?P<id>\S+) "
    r"\((?P<text>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\): (?P<what>.*)",
    re.DOTALL,
)
#: The parts of a note's "what" that list words: (its head, whose text wrote them).
_WORD_LISTS = (("adds: ", "candidate"), ("adds ", "candidate"), ("leaves out ", "memory"))


def shortened(text: str, limit: int = SHORTENED) -> str:
    """``text`` on one line, cut at a word with "…" when longer than ``limit``."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[:limit].rsplit(" ", 1)[0] or line[:limit]
    return cut.rstrip(" ,;:.") + "\u2026"


def card_name(text: str) -> str:
    """A card as a status line names it: its text, shortened, in quotes."""
    return f"\u2018{shortened(text)}\u2019"


def conversation_name(start: Mapping[str, Any] | None, *, now: datetime | None = None) -> str:
    """A conversation by its persona and when it started, in local time ("analyst, 4 Dec
    10:31"; the year too when it is not this one); ``start`` is its row (``npc``,
    ``started_at`` in UTC), None for one the store does not hold."""
    if start is None:
        return "a conversation not in this store"
    began = start["started_at"]
    if began.tzinfo is None:
        began = began.replace(tzinfo=UTC)
    local = began.astimezone()
    year = "" if local.year == (now or datetime.now()).year else f" {local.year}"
    return f"{start['npc']}, {local.day} {local:%b}{year} {local:%H:%M}"


def automatic_target(entry: Mapping[str, Any]) -> str:
    """What an automatic outcome did and to which memory, as the end of a review lists
    it: a wording merged into a card names the card by its own wording (the card may
    since have been approved as this very wording), with what became of the card."""
    text = entry.get("memory_text") or ""
    if entry["outcome"] == "suppressed":
        return f"suppressed as a repeat of the rejected \u201c{text}\u201d"
    if entry["outcome"] == "reinforced":
        return f"reinforced the approved \u201c{text}\u201d"
    own = entry.get("memory_initial_text") or text
    merged = f"merged into the card \u201c{own}\u201d"
    status = entry.get("memory_status")
    if status in (None, "pending_approval", "deferred"):
        return merged
    if text == entry.get("proposed_text") and text != own:
        return f"{merged}, approved as this wording"
    return f"{merged}, since {_STATUS.get(str(status), str(status))}"


def done_as(status: str | None) -> str:
    """A memory's new status, as a decision made elsewhere is told ("approved")."""
    return _DONE_AS.get(status or "", f"changed to {status}")


def differs_line(
    note: str, candidate: str, current: Callable[[str], Mapping[str, Any] | None]
) -> str:
    """The card's line for a stored "differs" note: that memory's status and text as they
    are now (``current(id)`` reads its ``status`` and ``final_text``; None when gone),
    the words as written. A note in another form is shown as it is."""
    found = _NOTE.fullmatch(note)
    if found is None:
        return note
    then = ast.literal_eval(found["text"])
    now = current(found["id"]) or {"status": found["status"], "final_text": then}
    status = _STATUS.get(str(now["status"]), found["status"])
    what = "; ".join(
        _written(part, {"candidate": candidate, "memory": then})
        for part in found["what"].split("; ")
    )
    return f"Differs from the {status} memory \u201c{shortened(now['final_text'])}\u201d: {what}"


def _written(part: str, texts: Mapping[str, str]) -> str:
    """One part of a note's "what", its listed words as the text they came from writes
    them ("adds analysi" from an older note: "adds analysis")."""
    for head, whose in _WORD_LISTS:
        if part.startswith(head):
            listed = part[len(head) :].split(", ")
            return head + ", ".join(as_written(texts[whose], listed))
    return part
