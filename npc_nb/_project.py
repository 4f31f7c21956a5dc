"""The facade: ``npc_nb.open()`` returns a Project, the plain Python API of everything.

``Project`` is the composition root. It builds the services, handing each exactly what
it needs (stores, settings, the memory core, the extraction queue), and delegates to
them in one line per method; no service imports it or reaches into it. Its public
methods check their arguments (``checked_methods``), so a mistake is an ``NpcError``
that names what to pass. Magics, the review panel and the CLI are thin front ends over
these methods.
"""

from __future__ import annotations

import atexit
import functools
import html
import os
import weakref
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, Literal, Unpack

import pandas as pd

from ._foundations.arguments import (
    AsOf,
    Category,
    MemoryId,
    Scope,
    StatusFilter,
    checked_methods,
    unknown_choice,
)
from ._foundations.locations import (
    STORE_DIR,
    check_store_dir,
    ensure_store_dir,
    find_project_root,
    removed_on_failure,
    user_home,
)
from ._foundations.results import (
    ApproveAllPreview,
    CandidateOutcome,
    DecisionResult,
    RoleAccess,
    Snapshot,
)
from ._foundations.settings import Settings, load_settings, session, unknown_setting
from ._foundations.tables import with_missing_as_na
from .analytics.diff import diff_frame
from .analytics.export import export_review_log, export_tables
from .analytics.metrics import Metrics
from .chat.conversations import Conversations, Status
from .chat.extraction import Extraction
from .chat.personas import Persona
from .errors import CandidateError, ConfigError, DecisionError, NpcError
from .experiments import Experiment, Experiments
from .graph.knowledge import KnowledgeGraph
from .interop.service import Interop
from .interop.summary import BundleImport, ImportSummary
from .memory import transitions
from .memory.block import MemoryBlock
from .memory.core import AUTOMATIC_KINDS, MemoryCore, ReviewContext
from .memory.queue import QUEUE_KINDS, VOTE_QUEUE_KINDS, queue_filters
from .memory.snapshots import State
from .memory.verify import Verification
from .memory.verify import verify as verify_history
from .memory.voting.lab_policy import POLICY_KEYS, ReviewPolicy
from .models.judge import ModelJudge
from .models.recording import Recorder
from .review import ReviewSession
from .store import Stores
from .store.analysis import frames
from .store.analysis.user_sql import run_sql
from .store.conversations import chat_log
from .store.memories.predicates import Moment
from .store.runs import recordings

__all__ = [
    "Project",
    "ReviewContext",
    "import_bundle",
    "latest_project",
    "open_existing",
    "open_project",
]

_latest: weakref.ref[Project] | None = None


def open_project(
    project_dir: str | Path | None = None, *, create: bool = False, **settings: Any
) -> Project:
    """Open the memory store of the project at or above a folder.

    Opening creates nothing: the store (``.npc_nb/`` and its file) is created by the
    first write (a candidate, a chat, SQL run with ``allow_write``), and until then
    every read finds an empty store. ``create=True`` creates the store at once, and the
    folder too if it does not exist (else a missing folder is an error: a typo must
    never start a new project). A shared PostgreSQL store (``store=URL``) creates the
    project's schema at open.

    The magics use the Project opened last in the kernel, so ``nb = npc_nb.open(path)``
    points ``%%npc`` at that project too.
    """
    root = find_project_root(project_dir, create=create)
    return _opened(Project(root, load_settings(**settings), create=create))


def open_existing(project_dir: str | Path | None = None, **settings: Any) -> Project:
    """The project as it is, for a command that only reads or reviews (``npc-nb
    review``): nothing is created, not even a shared store's schema; a server project
    whose schema does not exist is a StoreError listing the projects there."""
    root = find_project_root(project_dir)
    return _opened(Project(root, load_settings(**settings), existing_only=True))


def _opened(project: Project) -> Project:
    global _latest
    kept = session.remembered(str(project.store_path))
    again = {k: v for k, v in kept.items() if project.settings.source_of(k) != "npc_nb.open()"}
    if again:  # this kernel's %npc_config and %npc_pin, set on this project before
        project.configure(**again)
    _latest = weakref.ref(project)
    return project


def import_bundle(
    path: str | os.PathLike[str],
    project_dir: str | Path | None,
    *,
    create: bool = False,
    into_nonempty: bool = False,
    **settings: Any,
) -> BundleImport:
    """Load a bundle (``nb.export_bundle``) into the project at ``project_dir``, which
    must be empty unless ``into_nonempty`` (then rows already there are skipped and
    counted); ``create=True`` creates the folder, as a project of its own. The target
    is ``project_dir``'s own store file whatever store or project the session's settings
    name; ``store=URL`` passed here imports into a shared store. Everything is written
    in one transaction, or nothing: a refused import leaves no folder or store behind."""
    for name, value in (("create", create), ("into_nonempty", into_nonempty)):
        if not isinstance(value, bool):
            raise ConfigError(f"import_bundle(): {name} must be True or False, not {value!r}.")
    if not isinstance(path, str | os.PathLike):
        raise ConfigError(f"import_bundle(): path must be a file path, not {path!r}.")
    if project_dir is None:
        return _import_into(path, None, create, into_nonempty, settings)
    if "store" not in settings:
        # The folder named is the target: a store or project the session's settings name
        # (environment, .env, config file) is another project's, not asked.
        settings = {"store": None, "project": None, **settings}
    with removed_on_failure(Path(project_dir)):
        if create and not Path(project_dir).expanduser().exists():
            # A new folder is a project of its own, not part of a project it sits in.
            ensure_store_dir(Path(project_dir).expanduser() / STORE_DIR)
        return _import_into(path, project_dir, create, into_nonempty, settings)


def _import_into(
    path: str | os.PathLike[str],
    project_dir: str | Path | None,
    create: bool,
    into_nonempty: bool,
    settings: dict[str, Any],
) -> BundleImport:
    project = open_project(project_dir, create=create, **settings)
    try:
        return project._interop.import_bundle(path, into_nonempty=into_nonempty)
    finally:
        project.close()


def latest_project() -> Project | None:
    """The Project opened last in this process, if it is still in use."""
    return _latest() if _latest is not None else None


#: What ``grant`` gives a database role; ownership is not granted: it is the schema's.
Level = Annotated[
    Literal["reader", "reviewer"],
    "'reader' or 'reviewer' (there is no 'owner' to grant: the owner is the role that "
    "owns the project's schema)",
]
#: Settings that say which store the project is: changing them means opening another one.
_FIXED_AT_OPEN = ("store", "project")
_DECISIONS = (
    "decide",
    "approve",
    "reject",
    "skip",
    "defer",
    "set_validity",
    "approve_all",
    "undo",
    "adjudicate",
)


@checked_methods(
    {name: DecisionError for name in (*_DECISIONS, "memories")}
    | {name: CandidateError for name in ("add_candidate", "edit", "supersede")}
    | {
        name: ConfigError
        for name in ("context", "context_block", "npc", "persona", "configure", "snapshot", "diff")
    }
)
class Project:
    """One project's memory: personas and chat, candidates, review, context, queries."""

    def __init__(
        self, root: Path, settings: Settings, *, create: bool = False, existing_only: bool = False
    ) -> None:
        """``create``: create the store now (else its first write does). ``existing_only``:
        never create a shared store's schema either (``open_existing``)."""
        self.root = root
        self.settings = settings
        # On a shared store the project is known by name, not by its folder: two
        # machines with differently named folders share one project.
        self.name = settings.project or root.name
        check_store_dir(root / STORE_DIR)  # looked at, never created here
        self._stores = Stores(
            root / STORE_DIR, user_home(), settings, self.name, create_schema=not existing_only
        )
        store = self._stores.project
        self._recorder = Recorder(store, settings)
        self._memory = MemoryCore(
            self._stores, settings, self.name, functools.partial(_model_judge, self._recorder)
        )
        self._extraction = Extraction(
            store,
            settings,
            self._memory.add_candidate,
            recorder=self._recorder,
            pinned=self._memory.pinned_moment,
        )
        self._chat = Conversations(
            root, self.name, settings, store, self._memory, self._extraction, self._recorder
        )
        self._graph = KnowledgeGraph(store, settings)
        self._interop = Interop(self._memory, self._stores, self.name, _version())
        self._experiments = Experiments(
            store,
            self._memory,
            settings,
            self._recorder,
            root,
            self._memory.add_candidate,
            self._chat.extraction_model_for,
        )
        if create:
            store.create()
        if store.exists:
            with store.read():
                pass  # open and migrate now, so a broken store fails at open()
        self._memory.matching()  # so does a matcher setting that names nothing usable
        self._memory.votes.lab_policy()  # and a local setting against the project's policy
        identity = weakref.WeakMethod(self._memory.identity)
        settings.recording_as(lambda: str(found()) if (found := identity()) else "")
        # So does a pin to no snapshot of the project; pin='now' takes one now.
        self.settings.pin = self._memory.snapshots.pin_value(self.settings.pin)
        _open_projects.add(self)
        self._extraction.recover()  # jobs a killed kernel left behind

    @property
    def store_path(self) -> Path | str:
        """The store file, or on a shared store its URL (password hidden) and schema."""
        return self._stores.project.path

    @property
    def extraction(self) -> Extraction:
        """The background extraction queue: ``status()``, ``wait()``, ``retry()``, ``jobs()``."""
        return self._extraction

    @functools.cached_property
    def metrics(self) -> Metrics:
        """Approval, rejection, edit and re-proposal rates, backlog, time to decision,
        reviewer throughput and memory use, as DataFrames (see ``npc_nb.analytics``);
        each takes ``as_of=`` (a snapshot, its id or label, or a time)."""
        return Metrics(self._stores.project, self._project_moment)

    def close(self) -> None:
        """Stop the extraction worker (waiting at most about 2 s; a job still in a model
        call stays queued for the next open) and release both store files."""
        self._extraction.stop()
        self._experiments.stop()
        self._stores.release()

    def configure(self, **settings: Any) -> Settings:
        """Change settings for this session; each applies at once (timeouts included).

        Every value is checked before any is applied: a bad one changes nothing.
        """
        trial = self.settings.model_copy()
        for key, value in settings.items():
            if key in _FIXED_AT_OPEN:
                raise ConfigError(
                    f"{key} is fixed when the project is opened; open it again with "
                    f"npc_nb.open(..., {key}=...) (or set NPC_NB_{key.upper()})."
                )
            if key not in Settings.model_fields:
                raise unknown_setting(key)
            try:
                setattr(trial, key, value)  # validated on assignment
            except ValueError as exc:  # pydantic's ValidationError
                raise ConfigError(f"{key}={value!r}: {_first_error(exc)}") from None
        for key in set(settings) & set(POLICY_KEYS):
            self._memory.votes.refuse_local(key, getattr(trial, key))
        if "pin" in settings:  # checked last: pin='now' takes a snapshot
            trial.pin = self._memory.snapshots.pin_value(trial.pin)
        for key in settings:
            setattr(self.settings, key, getattr(trial, key))
            self.settings.mark_source(key, "this session")
        self._stores.configure(self.settings)
        return self.settings

    def __repr__(self) -> str:
        return f"<npc_nb.Project {self.name!r} store={str(self.store_path)!r}>"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        text = f"{self!r}: {self._memory.pending_count()} candidate(s) waiting for review"
        return {"text/plain": text, "text/html": f"<code>{html.escape(text)}</code>"}

    # -- candidates and the memory block --------------------------------------------------

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
        fields = dict(locals())
        del fields["self"], fields["text"]
        return self._memory.add_candidate(text, **fields)

    def context_block(
        self,
        npc: str,
        *,
        team: str | None = None,
        query: str | None = None,
        max_chars: int | None = None,
        as_of: AsOf | None = None,
    ) -> MemoryBlock:
        """The memory block for ``npc`` with the ids of the memories in it (as it stood
        at ``as_of``, or at the pinned snapshot; its ``hash`` is what a reply records)."""
        state = self._state(as_of, ConfigError)
        return self._memory.context_block(
            npc, team=team, query=query, max_chars=max_chars, as_of=state
        )

    def context(
        self,
        npc: str,
        *,
        team: str | None = None,
        query: str | None = None,
        max_chars: int | None = None,
        as_of: AsOf | None = None,
    ) -> str:
        """The ``<npc-memory>`` block: approved memories only, most specific scope first;
        ``as_of`` (a snapshot, its id or label, or a time) reads it as it stood then."""
        block = self.context_block(npc, team=team, query=query, max_chars=max_chars, as_of=as_of)
        return block.text

    # -- snapshots: reproducible runs -------------------------------------------------------

    def snapshot(self, label: str | None = None) -> Snapshot:
        """Record the memory state now (the store's time, and a hash of every approved
        memory): ``as_of=`` and the ``pin`` setting read it back exactly, whatever is
        decided later. ``label`` names it (unique in the project)."""
        return self._memory.snapshots.take(label)

    def snapshots(self) -> pd.DataFrame:
        """Every snapshot of the project, oldest first: id, label, taken_at, taken_by,
        memories (approved then) and hash."""
        return self._memory.snapshots.frame()

    def _reply_as_stored(
        self, message_id: str, user_message_id: str | None, recording_id: str | None
    ) -> dict[str, Any]:
        """What this store holds of a reply a saved notebook names (``npc_nb.provenance``):
        its text and its question (None when absent), the memories its prompt held, and
        the reply its recording kept (None when there is none)."""
        store = self._stores.project
        reply = chat_log.message(store, message_id)
        question = chat_log.message(store, user_message_id) if user_message_id else None
        injected = chat_log.injected_versions(store, [message_id])[message_id]
        return {
            "text": reply["content"] if reply and reply["role"] == "assistant" else None,
            "question": question["content"] if question else None,
            "injected": [memory_id for memory_id, _ in injected],
            "recorded": recordings.recorded_reply(store, recording_id) if recording_id else None,
        }

    def diff(self, a: AsOf, b: AsOf | None = None) -> pd.DataFrame:
        """The approved memories added, removed (rejected, superseded, expired, undone)
        and changed (edited, revalidated) from state ``a`` to state ``b`` (a snapshot,
        its id or label, or a time; ``b`` defaults to now), with the decision that did
        each: one row per change."""
        return diff_frame(self._memory.snapshots.between(a, b, ConfigError))

    def verify(self) -> Verification:
        """Recompute the history: every hash chain (audit events, votes, recorded
        replies), every memory against its audit events, every snapshot's hash. The
        result is ``ok`` or lists each problem in words, the first broken link of a
        chain among them (docs/reproducibility.md)."""
        return verify_history(self._stores, self._memory.snapshots)

    def _state(self, as_of: object, error: type[NpcError]) -> State:
        """What ``as_of`` names (a snapshot, a time, or now: None); else ``error``."""
        return self._memory.snapshots.resolve(as_of, error)

    def _project_moment(self, as_of: object, error: type[NpcError] = ConfigError) -> Moment | None:
        return self._memory.snapshots.project_moment(as_of, error)

    # -- review decisions -------------------------------------------------------------------

    def decide(self, memory_id: MemoryId, decision: str, **kwargs: Any) -> DecisionResult:
        """Apply a decision named by a string (the form front ends use)."""
        return self._memory.decide(memory_id, decision, **kwargs)

    def approve(
        self,
        memory_id: MemoryId,
        by: str | None = None,
        *,
        reconsider: bool = False,
        variant: str | None = None,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Approve a pending or deferred candidate (a rejected one needs reconsider=True).

        ``variant`` (a re-proposal id merged into this card) approves that wording
        instead: an approval (``human-approved``) whose event names the wording, not an
        edit; the card's own wording stays as the initial text.
        """
        return self._memory.approve(
            memory_id, by, reconsider=reconsider, variant=variant, **context
        )

    def requeue(self, reproposal_id: str, by: str | None = None) -> str:
        """Put an automatic outcome back in the review queue as its own card; returns
        the new card's id. Splits a merged variant off its card, or brings back a
        suppressed or reinforced repeat; either is recorded as a label that the matcher
        was wrong (``metrics.matching``)."""
        return self._memory.requeue(reproposal_id, by)

    def automatic_outcomes(
        self, *, unlisted_only: bool = False, npc: str | None = None
    ) -> pd.DataFrame:
        """What the matcher decided without asking anybody (merged, suppressed,
        reinforced) and nobody has put back, oldest first, with the memory each matched;
        ``unlisted_only`` keeps those no review has listed yet, ``npc`` one persona's."""
        self._require_persona(npc)
        found = self._memory.automatic_outcomes(
            unlisted_only=unlisted_only, mark_listed=False, npc=npc
        )
        return with_missing_as_na(found, AUTOMATIC_KINDS)

    def reject(
        self,
        memory_id: MemoryId,
        by: str | None = None,
        reason: str | None = None,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Reject a candidate (or retract an approved memory); its content becomes a tombstone."""
        return self._memory.reject(memory_id, by, reason, **context)

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
        return self._memory.edit(memory_id, text, by, reconsider=reconsider, **context)

    def skip(
        self, memory_id: MemoryId, by: str | None = None, **context: Unpack[ReviewContext]
    ) -> DecisionResult:
        """Leave a candidate pending, moved to the back of the review queue."""
        return self._memory.skip(memory_id, by, **context)

    def defer(
        self,
        memory_id: MemoryId,
        until: datetime | None = None,
        by: str | None = None,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Put a candidate aside until ``until`` (default: one day from now)."""
        return self._memory.defer(memory_id, until, by, **context)

    def supersede(self, memory_id: MemoryId, text: str, by: str | None = None) -> DecisionResult:
        """Replace an approved memory by a new approved version; both are kept and linked."""
        return self._memory.supersede(memory_id, text, by)

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
        return self._memory.set_validity(memory_id, valid_from, valid_to, by)

    def approve_all(
        self,
        *,
        npc: str | None = None,
        team: str | None = None,
        category: Category | None = None,
        scope: Scope | None = None,
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
        self._require_persona(npc)
        filters = queue_filters(npc, team, category, scope, conversation, ids)
        return self._memory.approve_all(
            filters, confirm=confirm, by=by, sample_size=sample_size, session=session
        )

    def undo(self, by: str | None = None, *, session: str | None = None) -> DecisionResult:
        """Revert your last decision, or the whole of your last batch, as new events.

        With ``session`` only a decision made in that review session is reverted. In
        independent review your last vote is withdrawn (and the agreement it completed
        reverted, if nothing changed since).
        """
        return self._memory.undo(by, session=session)

    def adjudicate(
        self,
        memory_id: MemoryId,
        vote: Annotated[int, "the number of a vote (1, 2, ...) as votes(memory_id) lists it"],
        by: str | None = None,
        **context: Unpack[ReviewContext],
    ) -> DecisionResult:
        """Decide a card waiting for adjudication as its vote number ``vote`` says (1-based,
        in the order ``votes(memory_id)`` lists them): final, audited as an adjudication.
        A reviewer who voted on the card is refused unless ``allow_self_adjudication``;
        to decide anew, call approve, reject, edit or defer as the adjudicator."""
        return self._memory.adjudicate(memory_id, vote, by, **context)

    # -- reviewing --------------------------------------------------------------------------

    def review_queue(
        self,
        *,
        npc: str | None = None,
        team: str | None = None,
        category: Category | None = None,
        scope: Scope | None = None,
        conversation: str | None = None,
        reviewer: str | None = None,
        adjudicate: bool = False,
    ) -> pd.DataFrame:
        """Pending and due deferred candidates, skipped ones last, oldest first.

        In independent review it is ``reviewer``'s queue (default: you, as decisions
        record you): only the cards still collecting votes that ``reviewer`` has not voted
        on, with how many votes each has (``votes``) and needs (``votes_needed``), never
        whose or which. ``adjudicate=True`` lists the cards whose votes disagree, waiting
        for an adjudicator (those ``reviewer`` voted on left out)."""
        self._require_persona(npc)
        view = self._memory.votes.view(self._memory.voter(reviewer), adjudicate=adjudicate)
        queue = self._memory.review_queue(
            npc=npc, team=team, category=category, scope=scope, conversation=conversation,
            view=view,
        )  # fmt: skip
        return with_missing_as_na(queue, QUEUE_KINDS if view is None else VOTE_QUEUE_KINDS)

    def review_session(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        conversation: str | None = None,
        by: str | None = None,
        auto: bool = False,
        adjudicate: bool = False,
    ) -> ReviewSession:
        """A review of the waiting candidates, one card at a time, with tally and undo.

        ``auto=True`` reviews only what the matcher decided without asking since the last
        review (``ReviewSession.automatic``): what you put back is then decided here.
        ``adjudicate=True`` reviews the cards whose votes disagree (independent review),
        each vote shown side by side: a number picks one, or decide anew. In independent
        review ``by`` names only yourself: another name is refused here, at once."""
        self._require_persona(npc)
        if by is not None:
            self._memory.actor(by)  # DecisionError if by= names another reviewer
        return ReviewSession(
            self._memory,
            npc=npc,
            category=category,
            conversation=conversation,
            by=by,
            auto_only=auto,
            adjudicate=adjudicate,
        )

    def review_panel(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        conversation: str | None = None,
        by: str | None = None,
        auto: bool = False,
        adjudicate: bool = False,
    ) -> Any:
        """The keyboard-first review panel (ipywidgets) over ``review_session(...)``;
        ``auto=True`` lists what was decided automatically, each one key from the queue;
        ``adjudicate=True`` shows the disagreements of independent review."""
        from .review.panel import ReviewPanel  # ipywidgets: on first use

        return ReviewPanel(
            self.review_session(
                npc=npc,
                category=category,
                conversation=conversation,
                by=by,
                auto=auto,
                adjudicate=adjudicate,
            )
        )

    # -- reading ----------------------------------------------------------------------------

    def memories(
        self,
        status: StatusFilter | None = None,
        npc: str | None = None,
        as_of: AsOf | None = None,
    ) -> pd.DataFrame:
        """Memories as a DataFrame; ``status="approved"`` uses the approval predicate;
        ``as_of`` (a snapshot, its id or label, or a time) shows them as they stood."""
        self._require_persona(npc)
        state = self._state(as_of, DecisionError)
        self._memory.snapshots.check(state)
        return _concat(
            frames.memories_frame(store, status=status, npc=npc, as_of=moment)
            for store, moment in self._memory.snapshots.moments(state)
        )

    def decisions(self, memory_id: str | None = None) -> pd.DataFrame:
        """The audit log: who did what to which memory, when, with text before and after."""
        return _concat(
            frames.decisions_frame(s, memory_id=memory_id) for s in self._stores.existing()
        )

    def votes(self, memory_id: str | None = None, *, history: bool = False) -> pd.DataFrame:
        """Every vote of independent review (or one card's), card by card, in the order
        cast: ``vote`` is the number ``adjudicate`` picks by, ``final`` whether the card's
        round is decided. The analysis view: it shows every vote, also on cards still
        open (a reviewer reviews through the queue, the panel or ``npc-nb review``, which
        never show another's vote). ``history=True`` adds the votes replaced or withdrawn."""
        return _concat(
            frames.votes_frame(s, memory_id=memory_id, history=history)
            for s in self._stores.existing()
        )

    def reproposals(self) -> pd.DataFrame:
        """Every time extraction repeated content that was already decided or pending."""
        return _concat(frames.reproposals_frame(s) for s in self._stores.existing())

    def sql(self, query: str, params: Any = None, *, allow_write: bool = False) -> pd.DataFrame:
        """Run SQL on the project store; read-only unless ``allow_write=True``."""
        return run_sql(self._stores.project, query, params, allow_write=allow_write)

    def policy(self) -> ReviewPolicy:
        """The review policy this kernel follows: the project's stored policy (set by its
        owner) for the keys it sets, this kernel's settings for the others."""
        return self._memory.votes.lab_policy()

    def set_policy(
        self,
        *,
        review_mode: Literal["single", "independent"] | None = None,
        reviewers_per_card: int | None = None,
        allow_self_adjudication: bool | None = None,
    ) -> ReviewPolicy:
        """As the project's owner: store the review policy that every kernel and the
        command line follow (the keys given); each change is kept in ``review_policy``."""
        given = {
            "review_mode": review_mode,
            "reviewers_per_card": reviewers_per_card,
            "allow_self_adjudication": allow_self_adjudication,
        }
        values = {key: value for key, value in given.items() if value is not None}
        return self._memory.votes.set_policy(values, self._memory.identity())

    def grant(self, role: str, level: Level) -> RoleAccess:
        """On a shared store, as the owner of the project's schema: let the database role
        ``role`` read or review this project, exactly that (see docs/lab.md)."""
        return self._stores.project.grant(role, level, project=self.name)

    def revoke(self, role: str) -> RoleAccess:
        """On a shared store, as the owner: take back every grant of ``role`` here."""
        return self._stores.project.grant(role, None, project=self.name)

    def export(self, folder: str | Path, format: str = "parquet") -> dict[str, Path]:
        """Write ``memories`` and ``decisions`` (every column of the analytical views) to
        ``folder`` as Parquet or JSON Lines; returns the paths written."""
        return export_tables(self._stores.project, folder, format)

    def export_review_log(self, path: str | Path) -> Path:
        """Write every decision (not undone) as Prodigy-style JSONL: text, answer
        (accept/reject/ignore), label, annotator, timestamp."""
        return export_review_log(self._stores.project, path)

    # -- extraction experiments ------------------------------------------------------------

    def experiment(
        self,
        name: str,
        arms: dict[str, dict[str, Any]] | None = None,
        conversations: Any = None,
        npc: str | None = None,
        seed: int = 0,
    ) -> Experiment:
        """An extraction experiment: the stored exchanges of ``conversations`` (ids, or a
        dict of ids, npc, since, until; default: all of ``npc``'s) re-extracted under
        each arm (``arms={"A": {"model": ..., "prompt": ...}, "B": {...}}``), matched only
        within its arm, reviewed blind, compared, promoted (see ``npc_nb.experiments``).
        Asked again by name, the recorded experiment opens."""
        return self._experiments.experiment(name, arms, conversations, npc, seed)

    def experiments(self) -> pd.DataFrame:
        """Every experiment with its state, arms, exchanges, jobs and cards."""
        return self._experiments.listing()

    # -- memories in and out ---------------------------------------------------------------

    def export_bundle(self, path: str | Path) -> Path:
        """Write every table of the project (memories, the audit log, re-proposals,
        conversations, injections, concepts, ...) into one versioned bundle file, which
        ``npc_nb.import_bundle`` loads losslessly; returns its path."""
        return self._interop.export_bundle(path)

    def export_to(self, kind: str, path: str | Path) -> Path:
        """Write the approved memories in another tool's import shape: ``"mem0"``
        (JSONL for ``Memory.add(**line)``), ``"letta"`` (an agent file, ``.af``) or
        ``"npcpy"`` (a folder's ``.knowledge.yaml``); returns the file written."""
        return self._interop.export_to(kind, path)

    def import_npcpy(self, path: str | Path) -> ImportSummary:
        """Import npcpy's memories (its ``.knowledge.yaml``, or an older npcpy's SQLite
        ``memory_lifecycle``): its decisions kept, audited as ``imported:npcpy``."""
        return self._interop.import_npcpy(path)

    def import_mem0(self, path: str | Path, *, trust: bool = False) -> ImportSummary:
        """Import a mem0 dump (``Memory.get_all()`` as JSON, or its SQLite history) as
        candidates for review; ``trust=True`` approves them (audited, with a warning)."""
        return self._interop.import_mem0(path, trust=trust)

    def import_letta(self, path: str | Path, *, trust: bool = False) -> ImportSummary:
        """Import a Letta agent file's memory blocks and passages as candidates for
        review; ``trust=True`` approves them (audited, with a warning)."""
        return self._interop.import_letta(path, trust=trust)

    # -- personas and chat ------------------------------------------------------------------

    def npc(
        self,
        name: str,
        *,
        directive: str,
        model: str | None = None,
        provider: str | None = None,
        team: str | None = None,
    ) -> Persona:
        """Define (or redefine) a persona for this session."""
        return self._chat.npc(name, directive=directive, model=model, provider=provider, team=team)

    def personas(self) -> pd.DataFrame:
        """Every persona defined in Python or in ``npc_team/*.npc``."""
        return self._chat.personas()

    def persona(self, name: str) -> Persona:
        """The persona called ``name``: Python definitions first, then team files, else ad hoc."""
        return self._chat.persona(name)

    def chat(
        self,
        npc: str,
        message: str,
        *,
        conversation: str | None = None,
        model: str | None = None,
        stream: bool = False,
        new: bool = False,
        where: dict[str, Any] | None = None,
        **options: Any,
    ) -> Any:
        """Send ``message`` to persona ``npc``; returns the reply (or a stream of it).

        The conversation continues this session's one with ``npc`` unless ``new=True`` or
        ``conversation=<id>`` is given. ``where`` records the notebook path and execution
        count of the cell the message came from. Extra keyword arguments go to the model call
        (``temperature=``, ``max_tokens=``, ``api_base=``, ...). With ``stream=True``,
        iterate the result for text chunks; its ``reply`` is set when the stream ends.
        """
        return self._chat.chat(
            npc,
            message,
            conversation=conversation,
            model=model,
            stream=stream,
            new=new,
            where=where,
            **options,
        )

    def status(self) -> Status:
        """Personas, default model, candidates waiting, extraction jobs, store path."""
        return self._chat.status()

    def _require_persona(self, npc: str | None) -> None:
        """A persona filter must name a persona that is defined or in a store: a typo
        would otherwise read as "nothing there". The error lists the defined personas
        and those with memories, never one that was only talked to: a name mistyped in
        a cell is not offered back as a choice."""
        if npc is None:
            return
        listed, talked_to = set(self._chat.personas()["name"]), set()
        for store in self._stores.existing():
            remembered, only_talked_to = chat_log.persona_names(store)
            listed |= remembered
            talked_to |= only_talked_to
        if npc not in listed | talked_to:
            raise unknown_choice("persona", npc, sorted(listed))

    # -- the knowledge graph ----------------------------------------------------------------

    def graph(
        self,
        npc: str | None = None,
        category: Category | None = None,
        as_of: AsOf | None = None,
    ) -> Any:
        """The graph of approved memories (optionally one persona's, one category's, or as
        it stood at ``as_of``), a networkx ``MultiDiGraph``. Concepts missing for a
        memory's current text are extracted first, by ``concept_model`` (default: the
        model setting, else the offline model), and stored."""
        self._require_persona(npc)
        return self._graph.networkx(npc=npc, category=category, as_of=self._graph_moment(as_of))

    def show_graph(
        self,
        npc: str | None = None,
        category: Category | None = None,
        *,
        focus: str | None = None,
        depth: int = 2,
        as_of: AsOf | None = None,
        max_nodes: int = 250,
    ) -> Any:
        """Draw the graph inline (offline). ``focus`` narrows it to the concept's
        neighbourhood within ``depth`` steps; at most ``max_nodes`` nodes are drawn."""
        self._require_persona(npc)
        return self._graph.show(
            npc,
            category,
            focus=focus,
            depth=depth,
            as_of=self._graph_moment(as_of),
            max_nodes=max_nodes,
        )

    def pyvis_network(
        self,
        npc: str | None = None,
        category: Category | None = None,
        *,
        focus: str | None = None,
        depth: int = 2,
        as_of: AsOf | None = None,
        max_nodes: int = 250,
    ) -> Any:
        """The drawing ``show_graph`` makes, as a ``pyvis.network.Network`` styled like it:
        change it (``set_options``, ``show_buttons``, ...) and show it inline, offline
        (each such output carries vis-network, about 0.7 MB)."""
        self._require_persona(npc)
        return self._graph.pyvis(
            npc,
            category,
            focus=focus,
            depth=depth,
            as_of=self._graph_moment(as_of),
            max_nodes=max_nodes,
        )

    def graph_frames(
        self,
        npc: str | None = None,
        category: Category | None = None,
        as_of: AsOf | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The graph as a (nodes, edges) pair of DataFrames; edges list their memory ids."""
        self._require_persona(npc)
        return self._graph.frames(npc=npc, category=category, as_of=self._graph_moment(as_of))

    def export_graphml(
        self, path: str | Path, npc: str | None = None, category: Category | None = None
    ) -> Path:
        """Write the graph as GraphML (memory ids as comma-separated text)."""
        self._require_persona(npc)
        return self._graph.export_graphml(path, npc=npc, category=category)

    def _graph_moment(self, as_of: object) -> Moment | None:
        return self._project_moment(as_of, DecisionError)


def _version() -> str:
    try:
        return version("npc_nb")
    except PackageNotFoundError:  # a checkout that was never installed
        return "unknown"


def _model_judge(recorder: Recorder, model: str) -> ModelJudge:
    """The same-fact judge of ``matcher="model"``, calling ``model`` through the gateway
    (recorded or replayed as ``model_replay`` says)."""
    from .models import gateway  # litellm itself is imported on the first call

    def complete(model: str, messages: list[dict], **options: Any) -> Any:
        recording = recorder.recording("the model judge (matcher='model')")
        return gateway.complete(model, messages, recording=recording, **options)

    return ModelJudge(model, complete)


def _concat(frames_: Any) -> pd.DataFrame:
    every = list(frames_)
    filled = [f for f in every if not f.empty]
    if len(filled) > 1:
        return pd.concat(filled, ignore_index=True)
    return filled[0] if filled else every[0]


def _first_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    return errors()[0]["msg"] if callable(errors) else str(exc)


#: Every open project, so interpreter exit can stop their workers before Python tears
#: down the modules a worker thread may still be using (that abort was SIGABRT).
_open_projects: weakref.WeakSet[Project] = weakref.WeakSet()


@atexit.register
def _close_open_projects() -> None:
    for project in list(_open_projects):
        project._extraction.stop()
