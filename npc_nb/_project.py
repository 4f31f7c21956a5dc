"""The facade: ``npc_nb.open()`` returns a Project, the plain Python API of everything.

``Project`` is the composition root. It builds the services, handing each exactly what
it needs (stores, settings, the memory core, the extraction queue); no service imports
it or reaches into it, and it reaches into no store: every read and write is a
service's. Key design choice: a capability is written once, in its service. Most
members are ``Forward`` descriptors (``_foundations/arguments.py``): the service's
method itself, signature and docstring included; a specialised area is the service
object (``nb.graph``, ``nb.metrics``, ``nb.access``) or a group of forwards
(``nb.imports``, ``nb.exports``). What stays written here composes several services
(``review``, ``context_block``, ``configure``) or is the decision block. Every public
member checks its arguments (``checked_methods``), so a mistake is an ``NpcError`` that
names what to pass. Magics, the review panel and the CLI are thin front ends over it.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import html
import os
import weakref
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pandas as pd

from ._areas import Exports, Imports
from ._foundations.arguments import (
    AsOf,
    Category,
    Forward,
    MemoryId,
    Scope,
    checked_methods,
    same_signature,
)
from ._foundations.locations import (
    STORE_DIR,
    check_store_dir,
    ensure_store_dir,
    find_project_root,
    removed_on_failure,
    user_home,
)
from ._foundations.results import ApproveAllPreview, CandidateOutcome, DecisionResult
from ._foundations.settings import (
    Settings,
    invalid_setting,
    load_settings,
    session,
    unknown_setting,
)
from .analytics.audit_plan import AuditPlan, plan_audit
from .analytics.diff import diff_frame
from .analytics.metrics import Metrics
from .audit import AuditDesk
from .chat.conversations import Conversations
from .chat.extraction import Extraction
from .decisions import (
    Adjudicate,
    Approve,
    Decision,
    Defer,
    Edit,
    Reject,
    Requeue,
    ReviewContext,
    SetValidity,
    Skip,
    Supersede,
)
from .errors import CandidateError, ConfigError, DecisionError
from .experiments import Experiments
from .graph.knowledge import KnowledgeGraph
from .interop.service import Interop
from .interop.summary import BundleImport
from .memory import transitions
from .memory.audits import AuditService, Planning
from .memory.audits.report import manifest_entries, report_rows
from .memory.block import MemoryBlock
from .memory.core import MemoryCore
from .memory.queue import queue_filters
from .memory.reading import MemoryTables
from .memory.snapshots import Snapshots
from .memory.verify import Verification
from .memory.verify import verify as verify_history
from .memory.voting.access import Access
from .memory.voting.lab_policy import POLICY_KEYS
from .models.judge import ModelJudge
from .models.recording import Recorder
from .review import ReviewSession, check_audit_review
from .store import Stores

if TYPE_CHECKING:
    from .review.panel import ReviewPanel

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


#: Settings that say which store the project is: changing them means opening another one.
_FIXED_AT_OPEN = ("store", "project")
_DECISIONS = (
    "apply",
    "approve",
    "reject",
    "skip",
    "defer",
    "set_validity",
    "preview_approve_all",
    "approve_all",
    "undo",
    "adjudicate",
    "requeue",
)


@checked_methods(
    {name: DecisionError for name in _DECISIONS}
    | {name: CandidateError for name in ("add_candidate", "edit", "supersede")}
    | {name: ConfigError for name in ("configure", "diff")}
)
class Project:
    """One project's memory: personas and chat, candidates, review, context, queries.

    The daily loop is flat (``nb.chat``, ``nb.context``, ``nb.review``, ``nb.approve``,
    ``nb.memories``, ...); the specialised areas are objects of their own:
    ``nb.metrics``, ``nb.graph``, ``nb.imports``, ``nb.exports``, ``nb.access``,
    ``nb.extraction``. Most members are the services' own methods (``Forward``).
    """

    # -- personas and chat: the chat service -------------------------------------------------

    npc = Forward("_chat", Conversations.npc, ConfigError)
    get_npc = Forward("_chat", Conversations.get_npc, ConfigError)
    npcs = Forward("_chat", Conversations.npcs)
    chat = Forward("_chat", Conversations.chat)
    status = Forward("_chat", Conversations.status)

    # -- memory state, now or as of a past state: the tables -------------------------------

    memories = Forward("_tables", MemoryTables.memories)
    decisions = Forward("_tables", MemoryTables.decisions)
    votes = Forward("_tables", MemoryTables.votes)
    reproposals = Forward("_tables", MemoryTables.reproposals)
    automatic_outcomes = Forward("_tables", MemoryTables.automatic_outcomes)
    review_queue = Forward("_tables", MemoryTables.review_queue)
    sql = Forward("_tables", MemoryTables.sql)

    # -- snapshots, experiments, the bundle ------------------------------------------------

    snapshot = Forward("_memory.snapshots", Snapshots.take, ConfigError)
    snapshots = Forward("_memory.snapshots", Snapshots.frame)
    experiment = Forward("_experiments", Experiments.experiment)
    experiments = Forward("_experiments", Experiments.listing)
    export_bundle = Forward("_interop", Interop.export_bundle)

    # -- audited batches: a sample reviewed, the rest approved with a bound ----------------

    audit = Forward("_audit_desk", AuditDesk.audit, DecisionError)
    get_audit = Forward("_audit_desk", AuditDesk.get_audit)
    audits = Forward("_audit_desk", AuditDesk.audits)

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
        self._build_services(root, settings)
        self._stores.open(create=create)  # so a broken store fails at open()
        self._memory.matching()  # so does a matcher setting that names nothing usable
        self._memory.votes.lab_policy()  # and a local setting against the project's policy
        identity = weakref.WeakMethod(self._memory.identity)
        settings.recording_as(lambda: str(found()) if (found := identity()) else "")
        # So does a pin to no snapshot of the project; pin='now' takes one now.
        self.settings.pin = self._memory.snapshots.pin_value(self.settings.pin)
        _open_projects.add(self)
        self._extraction.recover()  # jobs a killed kernel left behind

    def _build_services(self, root: Path, settings: Settings) -> None:
        """The composition: each service gets exactly what it needs, nothing imports this."""
        store = self._stores.project
        self._recorder = Recorder(store, settings)
        judge = functools.partial(_model_judge, self._recorder)
        self._memory = MemoryCore(self._stores, settings, self.name, judge)
        add = self._memory.add_candidate
        pinned = self._memory.pinned_moment
        self._extraction = Extraction(store, settings, add, recorder=self._recorder, pinned=pinned)
        self._chat = Conversations(
            root, self.name, settings, store, self._memory, self._extraction, self._recorder
        )
        self._tables = MemoryTables(self._memory, self._chat.check_npc)
        self._graph = KnowledgeGraph(
            store,
            settings,
            check_npc=self._chat.check_npc,
            moment=self._memory.snapshots.project_moment,
        )
        self._audits = AuditService(self._memory, Planning(plan_audit, AuditPlan))
        self._interop = Interop(
            self._memory, self._stores, self.name, _version(),
            audits=functools.partial(manifest_entries, self._audits),
        )  # fmt: skip
        self._access = Access(self._stores, self._memory, self.name)
        self._audit_desk = AuditDesk(self._audits, self._chat.check_npc, self.review)
        self._experiments = Experiments(
            store,
            self._memory,
            settings,
            self._recorder,
            root,
            add,
            self._chat.extraction_model_for,
        )

    # -- the grouped areas ------------------------------------------------------------------

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
        return Metrics(
            self._stores.project,
            self._memory.snapshots.project_moment,
            audits=functools.partial(report_rows, self._audits),
        )

    @property
    def graph(self) -> KnowledgeGraph:
        """The knowledge graph of approved memories: ``networkx()``, ``frames()``,
        ``show()``, ``pyvis()``, ``export_graphml(path)`` (each may take ``npc``,
        ``category`` and ``as_of``)."""
        return self._graph

    @functools.cached_property
    def imports(self) -> Imports:
        """Another tool's memories in, through the trust gate: ``npcpy(path)``,
        ``mem0(path, *, trust=False)``, ``letta(path, *, trust=False)``."""
        return Imports(self._interop)

    @functools.cached_property
    def exports(self) -> Exports:
        """Memories and their history out: ``tables(folder)``, ``review_log(path)``,
        ``to(kind, path)`` (``nb.export_bundle`` is the lossless whole)."""
        return Exports(self._stores.project, self._interop, self._memory.snapshots.project_moment)

    @property
    def access(self) -> Access:
        """The review policy (``policy()``, ``set_policy(...)``) and, on a shared store,
        the database roles' access (``grant(role, level)``, ``revoke(role)``)."""
        return self._access

    # -- the session ----------------------------------------------------------------------

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
                raise invalid_setting(key, value, exc) from None
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
        state = self._memory.snapshots.resolve(as_of)
        return self._memory.context_block(
            npc, team=team, query=query, max_chars=max_chars, as_of=state
        )

    @same_signature(context_block)
    def context(self, npc: str, **options: Any) -> str:
        """The ``<npc-memory>`` block: approved memories only, most specific scope first;
        ``as_of`` (a snapshot, its id or label, or a time) reads it as it stood then.
        Takes ``context_block``'s keywords; this is its ``text``."""
        return self.context_block(npc, **options).text

    # -- snapshots: reproducible runs -------------------------------------------------------

    def diff(self, a: AsOf, b: AsOf | None = None) -> pd.DataFrame:
        """The approved memories added, removed (rejected, superseded, expired, undone)
        and changed (edited, revalidated) from state ``a`` to state ``b`` (a snapshot,
        its id or label, or a time; ``b`` defaults to now), with the decision that did
        each: one row per change."""
        return diff_frame(self._memory.snapshots.between(a, b))

    def verify(self) -> Verification:
        """Recompute the history: every hash chain (audit events, votes, recorded
        replies), every memory against its audit events, every snapshot's hash. The
        result is ``ok`` or lists each problem in words, the first broken link of a
        chain among them (docs/reproducibility.md)."""
        return verify_history(self._stores, self._memory.snapshots)

    def _require_persona(self, npc: str | None) -> None:
        self._chat.check_npc(npc)

    # -- reviewing --------------------------------------------------------------------------

    def review_session(
        self,
        *,
        npc: str | None = None,
        category: Category | None = None,
        conversation: str | None = None,
        by: str | None = None,
        auto: bool = False,
        adjudicate: bool = False,
        audit: str | None = None,
    ) -> ReviewSession:
        """A review of the waiting candidates, one card at a time, with tally and undo.

        ``auto=True`` reviews only what the matcher decided without asking since the last
        review (``ReviewSession.automatic``): what you put back is then decided here.
        ``adjudicate=True`` reviews the cards whose votes disagree (independent review),
        each vote shown side by side: a number picks one, or decide anew. In independent
        review ``by`` names only yourself: another name is refused here, at once.
        ``audit=NAME`` reviews that audit's sampled cards awaiting you (``nb.audit``),
        blind: its progress is shown, never a tally or its errors (no other filter)."""
        self._require_persona(npc)
        if by is not None:
            self._memory.actor(by)  # DecisionError if by= names another reviewer
        if audit is not None:
            check_audit_review(
                audit,
                npc=npc,
                category=category,
                conversation=conversation,
                auto=auto,
                adjudicate=adjudicate,
            )
            return ReviewSession(self._memory, by=by, audit=self.get_audit(audit))
        return ReviewSession(
            self._memory,
            npc=npc,
            category=category,
            conversation=conversation,
            by=by,
            auto_only=auto,
            adjudicate=adjudicate,
        )

    @same_signature(review_session)
    def review(self, **filters: Any) -> ReviewPanel:
        """The keyboard-first review panel (ipywidgets) over ``review_session(...)``, with
        its keywords; ``auto=True`` lists what was decided automatically, each one key
        from the queue; ``adjudicate=True`` shows the disagreements of independent review;
        ``audit=NAME`` shows that audit's sample, blind (``Audit.review``)."""
        from .review.panel import ReviewPanel  # ipywidgets: on first use

        return ReviewPanel(self.review_session(**filters))

    # -- review decisions -------------------------------------------------------------------
    # Every decision is a value applied by ``apply``; the methods below only build one.

    def apply(
        self, decision: Decision, *, by: str | None = None, context: ReviewContext | None = None
    ) -> DecisionResult:
        """Apply a decision value (``Approve(memory_id)``, ``Reject(...)``, ...: see
        ``npc_nb.DECISIONS``) as ``by`` (default: the ``reviewer`` setting), with what
        ``context`` records beside it (a review session, time spent, the status shown)."""
        return self._memory.apply(decision, _context(context, by))

    def approve(
        self,
        memory_id: MemoryId,
        *,
        by: str | None = None,
        reconsider: bool = False,
        variant: str | None = None,
        context: ReviewContext | None = None,
    ) -> DecisionResult:
        """Approve a pending or deferred candidate (a rejected one needs reconsider=True).

        ``variant`` (a re-proposal id merged into this card) approves that wording
        instead: an approval (``human-approved``) whose event names the wording, not an
        edit; the card's own wording stays as the initial text.
        """
        decision = Approve(memory_id, reconsider=reconsider, variant=variant)
        return self.apply(decision, by=by, context=context)

    def reject(
        self,
        memory_id: MemoryId,
        *,
        by: str | None = None,
        reason: str | None = None,
        context: ReviewContext | None = None,
    ) -> DecisionResult:
        """Reject a candidate (or retract an approved memory); its content becomes a tombstone."""
        return self.apply(Reject(memory_id, reason=reason), by=by, context=context)

    def edit(
        self,
        memory_id: MemoryId,
        text: str,
        *,
        by: str | None = None,
        reconsider: bool = False,
        context: ReviewContext | None = None,
    ) -> DecisionResult:
        """Approve with new text (initial text kept); on an approved memory, supersede it."""
        return self.apply(Edit(memory_id, text, reconsider=reconsider), by=by, context=context)

    def skip(
        self, memory_id: MemoryId, *, by: str | None = None, context: ReviewContext | None = None
    ) -> DecisionResult:
        """Leave a candidate pending, moved to the back of the review queue."""
        return self.apply(Skip(memory_id), by=by, context=context)

    def defer(
        self,
        memory_id: MemoryId,
        until: datetime | None = None,
        *,
        by: str | None = None,
        context: ReviewContext | None = None,
    ) -> DecisionResult:
        """Put a candidate aside until ``until`` (default: one day from now)."""
        return self.apply(Defer(memory_id, until=until), by=by, context=context)

    def supersede(self, memory_id: MemoryId, text: str, *, by: str | None = None) -> DecisionResult:
        """Replace an approved memory by a new approved version; both are kept and linked."""
        return self.apply(Supersede(memory_id, text), by=by)

    def set_validity(
        self,
        memory_id: MemoryId,
        valid_from: datetime | None = transitions.UNCHANGED,
        valid_to: datetime | None = transitions.UNCHANGED,
        *,
        by: str | None = None,
    ) -> DecisionResult:
        """Say when the remembered fact holds in the world; context() respects it.

        A bound you leave out stays as it is; pass None to clear it.
        """
        return self.apply(SetValidity(memory_id, valid_from, valid_to), by=by)

    def adjudicate(
        self,
        memory_id: MemoryId,
        vote: Annotated[int, "the number of a vote (1, 2, ...) as votes(memory_id) lists it"],
        *,
        by: str | None = None,
        context: ReviewContext | None = None,
    ) -> DecisionResult:
        """Decide a card waiting for adjudication as its vote number ``vote`` says (1-based,
        in the order ``votes(memory_id)`` lists them): final, audited as an adjudication.
        A reviewer who voted on the card is refused unless ``allow_self_adjudication``;
        to decide anew, call approve, reject, edit or defer as the adjudicator."""
        return self.apply(Adjudicate(memory_id, vote), by=by, context=context)

    def requeue(self, reproposal_id: str, *, by: str | None = None) -> DecisionResult:
        """Put an automatic outcome back in the review queue as its own card (the
        result's ``new_memory_id``). Splits a merged variant off its card, or brings back
        a suppressed or reinforced repeat; either is recorded as a label that the matcher
        was wrong (``metrics.matching``)."""
        return self.apply(Requeue(reproposal_id), by=by)

    def preview_approve_all(
        self,
        *,
        npc: str | None = None,
        team: str | None = None,
        category: Category | None = None,
        scope: Scope | None = None,
        conversation: str | None = None,
        ids: list[str] | None = None,
        sample_size: int = 5,
    ) -> ApproveAllPreview:
        """What ``approve_all`` would approve: every unflagged candidate matching the
        filters (the count, a sample, their ids). Nothing changes. Flagged
        (instruction-like) candidates are never included; review them one by one."""
        self._require_persona(npc)
        filters = queue_filters(npc, team, category, scope, conversation, ids)
        return self._memory.preview_approve_all(filters, sample_size=sample_size)

    def approve_all(
        self,
        preview: Annotated[ApproveAllPreview, "the preview preview_approve_all() returned"],
        *,
        by: str | None = None,
    ) -> DecisionResult:
        """Approve exactly the candidates ``preview`` showed, as one batch (never one that
        arrived since); refused, nothing written, if any of them was decided since."""
        return self._memory.approve_all(preview, by=by)

    def undo(self, *, by: str | None = None, session_id: str | None = None) -> DecisionResult:
        """Revert your last decision, or the whole of your last batch, as new events.

        With ``session_id`` only a decision made in that review session is reverted. In
        independent review your last vote is withdrawn (and the agreement it completed
        reverted, if nothing changed since).
        """
        return self._memory.undo(by, session=session_id)


def _context(context: ReviewContext | None, by: str | None) -> ReviewContext:
    """``context`` with ``by`` as who decides (refused if it names somebody else)."""
    if context is None or context.by is None:
        return dataclasses.replace(context or ReviewContext(), by=by)
    if by is not None and by != context.by:
        raise DecisionError(
            f"by={by!r} and context=ReviewContext(by={context.by!r}) name different "
            "reviewers: pass one of them."
        )
    return context


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


#: Every open project, so interpreter exit can stop their workers before Python tears
#: down the modules a worker thread may still be using (that abort was SIGABRT).
_open_projects: weakref.WeakSet[Project] = weakref.WeakSet()


@atexit.register
def _close_open_projects() -> None:
    for project in list(_open_projects):
        project._extraction.stop()
