"""Result objects the API returns; each renders itself in a notebook and a terminal."""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from .markup import markdown_html, plain_text

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "ApproveAllPreview",
    "CandidateOutcome",
    "DecisionResult",
    "Reply",
    "RoleAccess",
    "Snapshot",
]


@dataclass(frozen=True)
class CandidateOutcome:
    """What ``add_candidate`` did with a proposed memory.

    ``action`` is ``queued`` (a new pending card), ``merged`` (the same fact as a pending
    candidate: kept as a variant on its card), ``suppressed`` (the same fact as a
    rejected memory: the tombstone holds) or ``reinforced`` (the same fact as an approved
    memory: kept as more evidence of it). ``memory_id`` is the queued memory, or the one
    it matched. A candidate queued as a proposed update of an approved memory has that
    memory's id in ``updates`` (approving it supersedes that memory). ``verdict``,
    ``matcher`` and ``similarity`` (0-100) say how it was judged, ``differs`` what it
    asserts differently from its nearest memory, ``error`` a matcher that failed (the
    candidate was queued and nothing lost; a model judge's candidate was judged by the
    offline matcher instead).
    """

    action: Literal["queued", "merged", "suppressed", "reinforced"]
    memory_id: str
    matched_status: str | None = None
    match_type: Literal["exact", "near"] | None = None
    similarity: float | None = None
    flags: tuple[str, ...] = ()
    updates: str | None = None
    verdict: Literal["same", "update", "different"] | None = None
    matcher: str | None = None
    differs: str | None = None
    error: str | None = None

    @property
    def queued(self) -> bool:
        return self.action == "queued"

    def __str__(self) -> str:
        if self.action == "queued":
            notes = [f"flagged: {', '.join(self.flags)}"] if self.flags else []
            if self.updates:
                notes.append(f"a proposed update of approved memory {self.updates}")
            if self.differs:
                notes.append(f"differs: {self.differs}")
            if self.error:
                notes.append(f"matcher failed: {self.error}")
            extra = f" ({'; '.join(notes)})" if notes else ""
            return f"queued for review as {self.memory_id}{extra}"
        how = f"{self.match_type} match, similarity {self.similarity:.0f}"
        if self.matcher and self.match_type != "exact":
            how += f", judged {self.verdict} by {self.matcher}"
        verb = {
            "merged": "merged into pending",
            "suppressed": "suppressed by",
            "reinforced": "reinforced approved",
        }[self.action]
        return f"{verb} memory {self.memory_id} ({self.matched_status}; {how})"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<code>{html.escape(str(self))}</code>"}


@dataclass(frozen=True)
class DecisionResult:
    """The effect of one decision (or one batch): which memories moved where."""

    decision: str
    reviewer: str
    changes: tuple[tuple[str, str | None, str], ...]  # (memory id, from status, to status)
    batch_id: str | None = None
    new_memory_id: str | None = None
    notes: tuple[str, ...] = ()
    #: The audit events that recorded it (``memory_events.seq``, in its store's log).
    event_seqs: tuple[int, ...] = ()
    #: Whether the decision made the card final. Always in single review; in
    #: independent review never for a vote, whatever it completed (the result of a vote
    #: is the same for an agreeing and a disagreeing one: "vote recorded"; ask the
    #: card's status afterwards), and always for an adjudication.
    final: bool = True

    @property
    def memory_ids(self) -> list[str]:
        return [memory_id for memory_id, _, _ in self.changes]

    def __str__(self) -> str:
        moves = "; ".join(f"{m}: {a} -> {b}" for m, a, b in self.changes[:5])
        more = f" (+{len(self.changes) - 5} more)" if len(self.changes) > 5 else ""
        notes = "".join(f"\n  note: {note}" for note in self.notes)
        return f"{self.decision} by {self.reviewer}: {moves or 'nothing changed'}{more}{notes}"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<code>{html.escape(str(self))}</code>"}


@dataclass(frozen=True)
class ApproveAllPreview:
    """What ``approve_all`` would approve (``nb.preview_approve_all``); nothing has
    changed yet. ``nb.approve_all(preview)`` approves exactly its ``ids``."""

    count: int
    sample: pd.DataFrame
    excluded_flagged: int
    ids: tuple[str, ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        flagged = (
            f"; {self.excluded_flagged} flagged candidate(s) excluded, review them one by one"
            if self.excluded_flagged
            else ""
        )
        lines = [f"approve_all would approve {self.count} memory candidate(s){flagged}."]
        lines += [f"  - {text}" for text in self.sample.get("final_text", [])]
        lines.append("Nothing changed. Call approve_all(preview) to approve exactly these.")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<pre>{html.escape(str(self))}</pre>"}


@dataclass(frozen=True)
class Snapshot:
    """The memory state at a moment: ``nb.snapshot()`` records one, every read can be
    pinned to it (``as_of=``, the ``pin`` setting).

    ``taken_at`` is the store's transaction time (naive UTC), ``hash`` the SHA-256 of
    every approved memory's id, text, scope and validity then (docs/reproducibility.md
    gives the algorithm), ``memories`` how many were approved, ``reviewer`` who took it
    (stored as ``snapshots.taken_by``). ``event_seq`` and
    ``user_event_seq`` are the last audit events it includes, in the project's store and
    the user's: what makes it exact. ``event_floor`` is the project store's event just
    before the first it includes: 0, except for a snapshot merged in from a bundle
    (docs/bundle.md), -1 for one such a merge could not place (reading at it is refused).
    """

    id: str
    label: str | None
    taken_at: datetime
    hash: str
    memories: int
    reviewer: str = ""
    event_seq: int = field(default=0, repr=False)
    user_event_seq: int = field(default=0, repr=False)
    event_floor: int = field(default=0, repr=False)

    @property
    def name(self) -> str:
        """How a status line names it: its label, else its id."""
        return repr(self.label) if self.label else f"snapshot {self.id}"

    def status_line(self) -> str:
        """What a pinned turn says: "memory pinned to 'v1', 2026-12-04 10:31, 412 memories"."""
        count = f"{self.memories} memor{'y' if self.memories == 1 else 'ies'}"
        return f"memory pinned to {self.name}, {self.taken_at:%Y-%m-%d %H:%M}, {count}"

    def __str__(self) -> str:
        label = f"{self.label!r} " if self.label else ""
        return (
            f"snapshot {label}{self.id}, taken {self.taken_at:%Y-%m-%d %H:%M:%S} UTC by "
            f"{self.reviewer or 'unknown'}: {self.memories} approved memories, "
            f"hash {self.hash[:16]}…"
        )

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<code>{html.escape(str(self))}</code>"}


@dataclass(frozen=True)
class RoleAccess:
    """A database role's access to a project on a shared store after ``grant`` or
    ``revoke``, as the server reports it: ``level`` counts every grant the role holds
    (its own, a role it is a member of, PUBLIC); ``asked`` is what the call set."""

    role: str
    project: str
    schema: str
    level: Literal["owner", "reviewer", "reader", "none"]
    asked: Literal["reviewer", "reader", "none"]

    def __str__(self) -> str:
        where = f"project {self.project!r} (schema {self.schema})"
        if self.level == self.asked:
            return {
                "reviewer": f"{self.role!r} may now review {where}: read everything and "
                "decide (the audit log only grows).",
                "reader": f"{self.role!r} may now read {where}: query it (nb.sql, "
                "%npc_sql, metrics, exports), but not decide.",
                "none": f"{self.role!r} no longer has access to {where}.",
            }[self.level]
        done = (
            "lost every grant the owner gave it"
            if self.asked == "none"
            else (f"was granted {self.asked}")
        )
        return (
            f"{self.role!r} {done} on {where}, but is still a {self.level} through "
            "another grant (a role it is a member of, or PUBLIC): revoke that one too."
        )

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<code>{html.escape(str(self))}</code>"}


@dataclass
class Reply:
    """One assistant turn: its text, where it is stored, and what was in its prompt.

    ``notices`` are what the reader must see (an undefined persona answered as a generic
    one): shown above the reply, in plain sight. ``footnotes`` go into the quiet footer
    (e.g. how many candidates wait for review).
    """

    text: str
    npc: str
    conversation_id: str
    user_message_id: str
    message_id: str
    model: str
    provider: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    injected: list[str] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list, repr=False)
    notices: list[str] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)
    adhoc: bool = False
    #: Extractions that failed since the last reply (``None`` if none), shown once.
    failed_extraction: str | None = None
    #: How to queue failed extractions again, as the front end showing the reply says it.
    retry_hint: str = "nb.extraction.retry()"
    #: The snapshot the memory block was read at (its id), None when not pinned.
    snapshot: str | None = None
    #: SHA-256 (hex) of the exact memory block in the prompt ("" when there was none).
    block_hash: str | None = None
    #: When the block was read: the snapshot's time when pinned, else the turn's (UTC).
    as_of: datetime | None = None
    #: What rebuilding the block needs besides: the persona's team and the block's cap.
    team: str | None = None
    max_chars: int | None = None
    #: The recorded reply it was kept in or replayed from (``model_replay``), else None.
    recording_id: str | None = None

    def provenance(self) -> dict[str, Any]:
        """What the reply was built on, as plain JSON values: the ``npc_nb`` entry of a
        ``%%npc`` output's metadata, which ``npc_nb.provenance()`` reads back."""
        return {
            "persona": self.npc,
            "team": self.team,
            "model": self.model,
            "snapshot": self.snapshot,
            "as_of": self.as_of.isoformat() if self.as_of is not None else None,
            "block_hash": self.block_hash,
            "memory_ids": list(self.injected),
            "max_chars": self.max_chars,
            "message_id": self.message_id,
            "user_message_id": self.user_message_id,
            "reply_hash": sha256_text(self.text),
            "recording_id": self.recording_id,
        }

    @property
    def offline(self) -> bool:
        return self.provider == "npc_nb"

    def footer(self) -> str:
        model = "offline demo model, not a real LLM" if self.offline else self.model
        memories = f"{len(self.injected)} approved memor{'y' if len(self.injected) == 1 else 'ies'}"
        who = f"{self.npc} (ad-hoc persona)" if self.adhoc else self.npc
        return " · ".join([f"{who} · {model}", f"{memories} in context", *self.footnotes])

    def warning(self) -> str:
        """The notice about failed extractions ("" if none failed): why, and how to retry."""
        if self.failed_extraction is None:
            return ""
        return (
            f"{self.failed_extraction.rstrip('.')}. Nothing is lost: fix that, then "
            f"{self.retry_hint} extracts it again."
        )

    def shown_notices(self) -> list[str]:
        """What the reader must see above the reply: the notices, then the warning
        about failed extractions, if any."""
        warning = self.warning()
        return [*self.notices, warning] if warning else list(self.notices)

    def __str__(self) -> str:
        return self.text

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        # HTML we rendered ourselves, not text/markdown: the front end's Markdown
        # renderer would pass the model's raw HTML through (see npc_nb._foundations.markup).
        notices = self.shown_notices()
        return {
            "text/plain": reply_plain(self.text, self.footer(), notices),
            "text/html": reply_html(self.text, self.footer(), notices),
        }


def sha256_text(text: str) -> str:
    """SHA-256 (hex) of ``text`` as UTF-8: a reply's hash in its provenance."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The representations of a reply a saved notebook shows, in its output's hash.
SHOWN_MIMES = ("text/plain", "text/html")


def shown_hash(bundle: dict[str, str]) -> str:
    """SHA-256 (hex) of a reply's output as shown: canonical JSON (keys sorted, no
    spaces, UTF-8) of its ``text/plain`` and ``text/html``; a saved output whose hash
    differs was changed after the cell ran."""
    shown = {mime: bundle.get(mime) for mime in SHOWN_MIMES}
    canonical = json.dumps(shown, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256_text(canonical)


NOTICE_MARK = "Note:"
#: Inline style, so a notice stands out in any front end; <strong> carries it where
#: styles are stripped.
_NOTICE_STYLE = (
    "border-left:4px solid #d97706;background:rgba(217,119,6,0.1);padding:4px 8px;margin:0 0 8px 0"
)


def reply_plain(text: str, footer: str = "", notices: list[str] | tuple[str, ...] = ()) -> str:
    """A reply for ``text/plain``: its notices first, its footer in brackets last."""
    shown = "".join(f"{NOTICE_MARK} {notice}\n\n" for notice in notices) + text
    return plain_text(f"{shown}\n\n[{footer}]" if footer else shown)


def reply_html(text: str, footer: str = "", notices: list[str] | tuple[str, ...] = ()) -> str:
    """A reply's Markdown as inert HTML: its notices (escaped) above it in plain sight,
    its footer (escaped) below in small print."""
    shown = "".join(
        f'<p class="npc-nb-notice" style="{_NOTICE_STYLE}">'
        f"<strong>{NOTICE_MARK}</strong> {html.escape(notice)}</p>"
        for notice in notices
    )
    small = f"<p><small>{html.escape(footer)}</small></p>" if footer else ""
    return f'<div class="npc-nb-reply">{shown}{markdown_html(text)}{small}</div>'
