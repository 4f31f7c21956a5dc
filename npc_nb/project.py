"""The facade: ``npc_nb.open()`` returns a Project, the plain Python API of everything.

Magics and widgets are thin front ends over these methods. A Project routes each call
to the module that owns the work: candidates, review, context, or the store's frames.
"""

from __future__ import annotations

import functools
import getpass
import html
import inspect
import weakref
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypedDict, Unpack

from . import candidates, review, transitions
from ._arguments import MemoryId, checked_methods
from .chatting import Chatting
from .config import Settings, load_settings
from .context import MemoryBlock, block_room, query_terms, render_block
from .errors import CandidateError, ConfigError, DecisionError
from .graphing import Graphing
from .paths import STORE_DIR, ensure_store_dir, find_project_root, user_home
from .reading import QUEUE_COLUMNS, Reading, queue_filters
from .records import ApproveAllPreview, CandidateOutcome, DecisionResult
from .selection import DecisionCache
from .stamps import utc_now
from .store import StorePair
from .vocabulary import DECISIONS

__all__ = ["Project", "ReviewContext", "latest_project", "open_project"]


class ReviewContext(TypedDict, total=False):
    """What a front end records with a decision (every key optional)."""

    time_spent: float  # seconds the reviewer spent on the card
    session: str  # the review-session id
    expect_status: str  # the status the reviewer saw; refused if it has changed since


_latest: weakref.ref[Project] | None = None


def open_project(
    project_dir: str | Path | None = None, *, create: bool = False, **settings: Any
) -> Project:
    """Open the memory store of the project at or above a folder (the store is created on
    first use; the folder must exist unless ``create=True``).

    The magics use the Project opened last in the kernel, so ``nb = npc_nb.open(path)``
    points ``%%npc`` at that project too.
    """
    global _latest
    root = find_project_root(project_dir, create=create)
    project = Project(root, load_settings(**settings))
    _latest = weakref.ref(project)
    return project


def latest_project() -> Project | None:
    """The Project opened last in this process, if it is still in use."""
    return _latest() if _latest is not None else None


_DECISIONS = ("decide", "approve", "reject", "skip", "defer", "set_validity", "approve_all", "undo")


@checked_methods(
    {name: DecisionError for name in (*_DECISIONS, "memories")}
    | {name: CandidateError for name in ("add_candidate", "edit", "supersede")}
    | {name: ConfigError for name in ("context", "context_block", "npc", "persona")}
)
class Project(Reading, Chatting, Graphing):
    """One project's memory: personas and chat, candidates, review, context, queries."""

    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self.name = root.name
        self._stores = StorePair(ensure_store_dir(root / STORE_DIR), user_home(), settings)
        self._cache = DecisionCache()
        self._previews: dict[str, tuple[str, ...]] = {}
        self._init_chatting()
        with self._stores.project.read():
            pass  # create and migrate now, so a broken store fails at open()
        self.extraction.recover()  # jobs a killed kernel left behind

    @property
    def store_path(self) -> Path:
        return self._stores.project.path

    def close(self) -> None:
        """Release both store files now (they reopen on next use)."""
        self._stores.release()

    def __repr__(self) -> str:
        return f"<npc_nb.Project {self.name!r} store={str(self.store_path)!r}>"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        pending = len(self.review_queue())
        text = f"{self!r}: {pending} candidate(s) waiting for review"
        return {"text/plain": text, "text/html": f"<code>{html.escape(text)}</code>"}

    def _actor(self, by: str | None) -> str:
        if by is None:
            return self.settings.reviewer or _os_user()
        if not isinstance(by, str) or not by.strip():
            raise DecisionError("by= must be a non-empty reviewer name.")
        return by.strip()

    # -- writing candidates -------------------------------------------------------------

    def add_candidate(
        self,
        text: str,
        *,
        category: str,
        npc: str | None,
        team: str | None = None,
        scope: str = "npc",
        evidence: str | None = None,
        source_message_id: str | None = None,
        conversation_id: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        prompt_version: str | None = None,
        confidence: Annotated[float | None, "a number from 0 to 1, or None"] = None,
    ) -> CandidateOutcome:
        """Propose a memory for review: queued, merged into a pending one, or suppressed."""
        source = self._source_text(source_message_id)
        candidate = candidates.build_candidate(
            {
                "text": text,
                "category": category,
                "npc": npc,
                "team": team,
                "scope": scope,
                "project": self.name,
                "evidence": evidence,
                "source_message_id": source_message_id,
                "conversation_id": conversation_id,
                "model": model,
                "provider": provider,
                "prompt_version": prompt_version,
                "confidence": confidence,
            },
            source_text=source,
            max_chars=self.settings.max_memory_chars,
        )
        target = self._stores.for_scope(scope)
        return candidates.propose(
            target,
            [store for store in self._stores.existing() if store is not target],
            candidate,
            threshold=self.settings.near_duplicate_threshold,
            actor=self._actor(None),
            cache=self._cache,
        )

    def _source_text(self, message_id: str | None) -> str | None:
        if message_id is None:
            return None
        content = self._stores.project.message_content(message_id)
        if content is None:
            raise candidates.CandidateError(
                f"No message with id {message_id!r} in this project; pass the id of the "
                "message the memory was extracted from, or leave source_message_id out."
            )
        return content

    # -- the memory block ---------------------------------------------------------------

    def context_block(
        self,
        npc: str,
        *,
        team: str | None = None,
        query: str | None = None,
        max_chars: int | None = None,
    ) -> MemoryBlock:
        """The memory block for ``npc`` with the ids of the memories in it."""
        cap = max_chars if max_chars is not None else self.settings.context_max_chars
        if isinstance(cap, bool) or not isinstance(cap, int) or block_room(cap) < 1:
            raise ConfigError(
                f"max_chars must be a whole number of at least {block_room(0) * -1 + 1} "
                f"(room for the block's own tags), not {cap!r}."
            )
        approved = self._cache.approved(list(self._stores.existing()), npc, team)
        selected = approved.select(query_terms(query), block_room(cap))
        return render_block(selected, len(approved.rows), cap)

    def _approved_versions(self, npc: str, team: str | None) -> dict[str, str]:
        """{id: text hash} of the approved memories ``npc`` may see now."""
        return self._cache.approved(list(self._stores.existing()), npc, team).versions

    def context(
        self,
        npc: str,
        *,
        team: str | None = None,
        query: str | None = None,
        max_chars: int | None = None,
    ) -> str:
        """The ``<npc-memory>`` block: approved memories only, most specific scope first."""
        return self.context_block(npc, team=team, query=query, max_chars=max_chars).text

    # -- review decisions -----------------------------------------------------------------

    def decide(self, memory_id: MemoryId, decision: str, **kwargs: Any) -> DecisionResult:
        """Apply a decision named by a string (the form front ends use)."""
        if decision not in DECISIONS or decision in ("approve_all", "undo"):
            raise DecisionError(
                f"Unknown decision {decision!r} for one memory; use one of "
                "approve, reject, edit, skip, defer (approve_all and undo are methods)."
            )
        method = getattr(self, decision)
        try:
            inspect.signature(method).bind(memory_id, **kwargs)
        except TypeError as exc:
            accepted = ", ".join(_accepted(method))
            raise DecisionError(f"{decision}: {exc}. It accepts: {accepted}.") from exc
        return method(memory_id, **kwargs)

    def approve(
        self,
        memory_id: MemoryId,
        by: str | None = None,
        *,
        reconsider: bool = False,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Approve a pending or deferred candidate (a rejected one needs reconsider=True)."""
        return self._decide("approve", memory_id, by, context, reconsider=reconsider)

    def reject(
        self,
        memory_id: MemoryId,
        by: str | None = None,
        reason: str | None = None,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Reject a candidate (or retract an approved memory); its content becomes a tombstone."""
        return self._decide("reject", memory_id, by, context, reason=reason)

    def edit(
        self,
        memory_id: MemoryId,
        text: str,
        by: str | None = None,
        *,
        reconsider: bool = False,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Approve with new text (initial text kept); on an approved memory, supersede it."""
        text = candidates.validate_memory_text(text, self.settings.max_memory_chars)
        return self._decide("edit", memory_id, by, context, text=text, reconsider=reconsider)

    def skip(
        self, memory_id: MemoryId, by: str | None = None, **context: Unpack[ReviewContext]
    ) -> DecisionResult:
        """Leave a candidate pending, moved to the back of the review queue."""
        return self._decide("skip", memory_id, by, context)

    def defer(
        self,
        memory_id: MemoryId,
        until: datetime | None = None,
        by: str | None = None,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Put a candidate aside until ``until`` (default: one day from now)."""
        return self._decide("defer", memory_id, by, context, until=until)

    def supersede(self, memory_id: MemoryId, text: str, by: str | None = None) -> DecisionResult:
        """Replace an approved memory by a new approved version; both are kept and linked."""
        text = candidates.validate_memory_text(text, self.settings.max_memory_chars)
        store, memory = self._stores.locate(memory_id)
        actor, now = self._actor(by), utc_now()
        change = transitions.plan_supersede(memory, text, actor=actor, now=now)
        return review.apply_changes(store, [change], actor=actor, now=now, audit={})

    def set_validity(
        self,
        memory_id: MemoryId,
        valid_from: datetime | None = transitions.UNCHANGED,
        valid_to: datetime | None = transitions.UNCHANGED,
        by: str | None = None,
    ) -> DecisionResult:
        """Say when the remembered fact holds in the world; context() respects it.

        A bound you leave out stays as it is; pass None to clear it.
        """
        return self._decide(
            "set_validity", memory_id, by, {}, valid_from=valid_from, valid_to=valid_to
        )

    def _decide(
        self, decision: str, memory_id: str, by: str | None, context: ReviewContext, **args: Any
    ) -> DecisionResult:
        unknown = set(context) - set(ReviewContext.__annotations__)
        if unknown:
            raise DecisionError(
                f"{decision}: unexpected argument(s) {', '.join(sorted(unknown))}; "
                f"it accepts {', '.join(_accepted(getattr(self, decision)))}."
            )
        audit: dict[str, Any] = dict(context)
        actor = self._actor(by)
        spent = audit.get("time_spent")
        if spent is not None and (
            isinstance(spent, bool) or not isinstance(spent, int | float) or spent < 0
        ):
            raise DecisionError(f"time_spent must be seconds (a number >= 0), not {spent!r}.")
        expected = audit.pop("expect_status", None)
        store, memory = self._stores.locate(memory_id)
        if expected is not None and memory["status"] != expected:
            # The reviewer decided on what they saw; somebody changed it since.
            raise DecisionError(
                f"Memory {memory_id} is {memory['status']} now, not {expected} as shown "
                "(decided elsewhere meanwhile?). Nothing was written; look at it again."
            )
        now = utc_now()
        change = transitions.plan(decision, memory, actor=actor, now=now, **args)
        return review.apply_changes(store, [change], actor=actor, now=now, audit=audit)

    def approve_all(
        self,
        *,
        npc: str | None = None,
        team: str | None = None,
        category: str | None = None,
        scope: str | None = None,
        conversation: str | None = None,
        ids: list[str] | None = None,
        confirm: bool = False,
        by: str | None = None,
        sample_size: int = 5,
        session: str | None = None,
    ) -> ApproveAllPreview | DecisionResult:
        """Approve every unflagged candidate matching the filters, as one batch.

        Call it first without ``confirm``: nothing changes, you get the count and a
        sample. Then the same call with ``confirm=True`` approves exactly what that
        preview showed (never a candidate that arrived since). With ``ids=`` you name the
        candidates yourself. Flagged (instruction-like) candidates are never included;
        review them one by one.
        """
        filters = queue_filters(npc, team, category, scope, conversation, ids)
        key = repr(
            sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in filters.items())
        )
        approved_ids: tuple[str, ...] | None = None
        if confirm:
            approved_ids = tuple(ids) if ids is not None else self._previews.pop(key, None)
            if approved_ids is None:
                raise DecisionError(
                    "approve_all(confirm=True) approves what a preview showed: call "
                    "approve_all() with the same filters first (or pass ids=[...])."
                )
        result = review.approve_all(
            self._stores,
            filters,
            actor=self._actor(by),
            now=utc_now(),
            confirm=confirm,
            approved_ids=approved_ids,
            sample_size=sample_size,
            columns=QUEUE_COLUMNS,
            session=session,
        )
        if isinstance(result, ApproveAllPreview):
            self._previews[key] = result.ids
        return result

    def undo(self, by: str | None = None, *, session: str | None = None) -> DecisionResult:
        """Revert your last decision, or the whole of your last batch, as new events.

        With ``session`` only a decision made in that review session is reverted.
        """
        return review.undo(self._stores, actor=self._actor(by), now=utc_now(), session=session)


def _accepted(method: Any) -> list[str]:
    """The keyword arguments a decision method takes, its review context included."""
    named = [
        name
        for name, parameter in inspect.signature(method).parameters.items()
        if parameter.kind is not parameter.VAR_KEYWORD
    ]
    return named[1:] + list(ReviewContext.__annotations__)


@functools.cache
def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"
