"""The memory core as one service: propose, decide, undo, and build the memory block.

``MemoryCore`` holds what these operations share (the two stores, the per-process
decision cache, the settings) and hands each to the module that does the work:
``candidates`` (validate, match, queue), ``transitions`` (what a decision would change),
``decisions`` (write changes with their audit events), ``block`` (the ``<npc-memory>``
text) and ``queue``. The ``Project`` facade builds one and delegates; the review session
and the chat service receive it (or its methods) explicitly.

Every decision takes one path: ``apply(decision, context)``, with a decision value and a
``ReviewContext`` (``npc_nb.decisions``), dispatched by the value's type through
``_HANDLERS`` (no method looked up by name). A decision reads the vote rules once
(``VoteDesk.rules``: None in single review) and hands them to every step, so a
decision is a vote or one reviewer's throughout, whatever changes meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from rapidfuzz import fuzz

from .._foundations.results import ApproveAllPreview, CandidateOutcome, DecisionResult, Snapshot
from .._foundations.settings import Settings
from .._foundations.settings.reviewer import Identity, default_reviewer, reviewer_name
from .._foundations.tables import Kind
from .._foundations.terms import content_terms
from .._foundations.utc import utc_now
from ..decisions import (
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
    not_a_decision,
)
from ..errors import CandidateError, DecisionError, InvalidValueError
from ..store import Store, Stores
from ..store.analysis.analytics import judging_totals
from ..store.conversations import chat_log
from ..store.memories import events, memory_rows, reproposal_rows
from ..store.memories.predicates import Moment
from ..vocabulary import APPROVED_STATUSES, PENDING
from . import candidates, decisions, transitions, variants
from .block import MemoryBlock, block_room, query_terms, render_block
from .cache import DecisionCache
from .lookup.neighbours import NeighbourIndex
from .matching import Matcher, offline_for, resolve_matcher
from .proposal import Matching, Repeat, propose, queue_despite_repeats, repeat_of
from .queue import (
    QUEUE_KINDS,
    pending_count,
    queue_filters,
    queue_order,
    queue_rows,
    review_queue,
)
from .ranking import ApprovedSet
from .snapshots import Snapshots, State, project_moment
from .voting import QueueView, VoteDesk

__all__ = ["AUTOMATIC_KINDS", "MemoryCore"]

#: What ``automatic_outcomes`` lists, and each column's kind (``_foundations.tables``).
AUTOMATIC_KINDS: dict[str, Kind] = {
    "id": "text",
    "recorded_at": "time",
    "outcome": "text",
    "verdict": "text",
    "matcher": "text",
    "similarity": "float",
    "proposed_text": "text",
    "memory_id": "text",
    "memory_text": "text",
    "memory_status": "text",
    "memory_initial_text": "text",
    "npc": "text",
    "conversation_id": "text",
    "listed_at": "time",
}
AUTOMATIC_COLUMNS = list(AUTOMATIC_KINDS)

#: Memories of every status the index ranks per store before the approved ones are kept.
_NEAREST_POOL = 40


class MemoryCore:
    """Candidates, decisions, undo and the memory block of one project's stores."""

    def __init__(
        self,
        stores: Stores,
        settings: Settings,
        project: str,
        model_judge: Callable[[str], Matcher] | None = None,
    ) -> None:
        self.stores = stores
        self.settings = settings
        self.project = project
        self.cache = DecisionCache()
        self._model_judge = model_judge  # given by the facade: the models layer is above
        self._indexes: dict[Path, NeighbourIndex] = {}
        self._indexes_lock = threading.Lock()  # the extraction worker and a panel's loader
        self._matching: tuple[Any, Matching] | None = None
        #: Independent review (``review_mode``): votes, adjudication, vote-aware queues.
        self.votes = VoteDesk(stores, settings, self._replaced_by)
        self.snapshots = Snapshots(stores, self.actor)

    @property
    def store_path(self) -> Path | str:
        return self.stores.project.path

    def identity(self) -> Identity:
        """Who is recording: the reviewer setting, else the database role on a shared
        store, else the default reviewer (the OS user, or git's user.name on a shared
        account such as root); beside it the role that counts as the same reviewer (the
        connected role on PostgreSQL, the name on a file), and how it was determined."""
        settings, role = self.settings, self.stores.project.default_actor()
        if settings.reviewer:
            name, how = settings.reviewer, settings.source_of("reviewer")
        elif role:
            name, how = role, "the connected database role"
        else:
            default = default_reviewer()
            name, how = reviewer_name(default.name) or "unknown", default.source
        if role and name != role:
            how = f"role {role}, the connected database role; the name from {how}"
        elif role:
            how = f"role {role}, the connected database role"
        return Identity(name, role or name, how)

    def actor(self, by: str | None, *, independent: bool | None = None) -> str:
        """Who a decision is recorded for: ``by`` (normalised), else who is recording
        (``identity``). In independent review, and for a role that does not own the
        project on a shared store, ``by`` may only name yourself: a decision recorded
        under another person's name is refused, nothing written. ``independent``: the
        review mode, if the caller has read it already."""
        me = self.identity()
        if by is None:
            return me.name
        name = reviewer_name(by) if isinstance(by, str) else ""
        if not name:
            raise DecisionError("by= must be a non-empty reviewer name.")
        if name not in me.names() and self._only_yourself(independent):
            raise DecisionError(
                f"by={name!r} names another reviewer, and you are {me}: decisions are "
                "recorded only under your own name here (independent review, or a "
                "reviewer role on a shared store). Nothing was written. Leave by= out; "
                "another reviewer decides in their own kernel, as themselves."
            )
        return name

    def voter(self, by: str | None) -> str:
        """What counts as the same reviewer for ``by`` (None: you): your role when it
        names you, else the name (a queue of another reviewer's, as an adjudicator
        lists it)."""
        me = self.identity()
        if by is None or reviewer_name(by) in me.names():
            return me.role
        return reviewer_name(by)

    def _only_yourself(self, independent: bool | None = None) -> bool:
        if independent is None:
            independent = self.votes.independent
        return independent or not self.stores.project.owns_project

    def unnamed_reviewer(self, by: str | None) -> str | None:
        """The shared account (root, jovyan) decisions would be recorded under because
        nobody said who reviews, else None: a front end then says how to set a name."""
        if by is not None or self.settings.reviewer or self.stores.project.default_actor():
            return None
        default = default_reviewer()
        return default.name if default.shared_account else None

    # -- candidates ---------------------------------------------------------------------

    def add_candidate(self, text: str, **fields: Any) -> CandidateOutcome:
        """Propose a memory: queued, merged into a pending one, or suppressed."""
        source = self._source_text(fields.get("source_message_id"))
        candidate = self._candidate(text, fields, source)
        target = self.stores.for_scope(candidate.scope)
        others = [store for store in self.stores.existing() if store is not target]
        if candidate.experiment_arm is not None:  # an arm's pool is in the project store only
            target, others = self.stores.project, []
        return propose(
            target,
            others,
            candidate,
            actor=self.actor(None),
            matching=self.matching(),
        )

    def add_conflicting(self, text: str, **fields: Any) -> CandidateOutcome:
        """Queue ``text`` as a card of its own even where it repeats a rejected memory:
        an approval another tool recorded that conflicts with this project's rejection
        waits for a person (the importers' gate). The text checks apply as in
        ``add_candidate``."""
        candidate = self._candidate(text, fields)
        target = self.stores.for_scope(candidate.scope)
        return queue_despite_repeats(
            target, candidate, actor=self.actor(None), matching=self.matching()
        )

    def screen(self, text: str, **fields: Any) -> tuple[candidates.Candidate, Repeat | None]:
        """``text`` checked as ``add_candidate`` checks it (CandidateError when it is
        refused; its flags on the candidate), and the memory it would repeat (None: it
        would be queued). Nothing is written: an import asks this of a text another tool
        approved before it takes that approval."""
        candidate = self._candidate(text, fields)
        target = self.stores.for_scope(candidate.scope)
        others = [store for store in self.stores.existing() if store is not target]
        return candidate, repeat_of(target, others, candidate, self.matching())

    def _candidate(
        self, text: str, fields: dict[str, Any], source: str | None = None
    ) -> candidates.Candidate:
        """``text`` and its fields as a checked candidate (CandidateError when refused)."""
        return candidates.build_candidate(
            {"text": text, "project": self.project, "team": None, "scope": "npc", **fields},
            source_text=source,
            max_chars=self.settings.max_memory_chars,
        )

    def matching(self) -> Matching:
        """How candidates are matched now (the ``matcher`` setting, resolved once)."""
        settings = self.settings
        key = (
            settings.matcher,
            settings.match_model,
            settings.model,
            settings.near_duplicate_threshold,
        )
        if self._matching is None or self._matching[0] != key:
            matcher, name = resolve_matcher(self.settings, self._model_judge)
            # A model judge that fails leaves its candidate to the offline matcher.
            fallback = offline_for(self.settings) if name.startswith("model:") else None
            self._matching = (key, Matching(matcher, name, self.index_for, fallback=fallback))
        return self._matching[1]

    def matching_status(self) -> str:
        """One line for ``%npc_status``: who judges re-proposals, and what the model judge
        did in this project (calls, tokens, failures, from the store)."""
        name, chosen = self.matching().name, self.settings.matcher
        if not name.startswith("model:"):
            why = " (auto: no provider model is configured)" if chosen == "auto" else ""
            return f"{name}{why}"
        done = judging_totals(self.stores.project)
        return (
            f"{name} judge (the offline matcher if it fails) · {done['calls']:,} call(s), "
            f"{done['tokens']:,} tokens, {done['failures']:,} failure(s)"
        )

    def index_for(self, store: Store) -> NeighbourIndex:
        """This process's neighbour index of ``store`` (one, whichever thread asks)."""
        with self._indexes_lock:
            if store.path not in self._indexes:
                self._indexes[store.path] = NeighbourIndex(store)
            return self._indexes[store.path]

    def neighbours_loaded(self) -> bool:
        """Whether every store's neighbour index is loaded (``nearest_approved`` then
        reads only what was inserted since, never a whole store)."""
        return all(self.index_for(store).loaded for store in self.stores.existing())

    def load_neighbours(self) -> None:
        """Load every store's neighbour index now (safe from another thread)."""
        for store in self.stores.existing():
            self.index_for(store).load()

    def memories_inserted(self) -> int:
        """How many memories the stores hold, near enough (the newest ``insert_seq``):
        what loading their neighbour indexes costs grows with it."""
        return sum(memory_rows.newest_insert(store) for store in self.stores.existing())

    def source_message(self, message_id: str | None) -> str | None:
        """The text of the chat message a candidate was extracted from (None if unknown)."""
        if not isinstance(message_id, str):
            return None
        return memory_rows.message_content(self.stores.project, message_id)

    def conversation_starts(self, conversation_ids: list[str]) -> dict[str, dict]:
        """{id: ``npc`` and ``started_at``} of these conversations, for a card to name
        them by (those not in the project store left out)."""
        return chat_log.conversation_starts(self.stores.project, conversation_ids)

    def _source_text(self, message_id: str | None) -> str | None:
        if message_id is None:
            return None
        content = self.source_message(message_id)
        if content is None:
            raise CandidateError(
                f"No message with id {message_id!r} in this project; pass the id of the "
                "message the memory was extracted from, or leave source_message_id out."
            )
        return content

    # -- the queue ------------------------------------------------------------------------

    def review_queue(self, *, view: QueueView | None = None, **filters: Any) -> pd.DataFrame:
        """Pending and due deferred candidates, skipped ones last, oldest first (in
        independent review those ``view`` shows: ``VoteDesk.view``)."""
        return review_queue(self.stores, _wanted(filters), utc_now(), view)

    def queue_rows(self, *, view: QueueView | None = None, **filters: Any) -> list[dict[str, Any]]:
        """``review_queue`` as plain rows (dicts with its columns and ``skipped_at``):
        what a review session holds, without a DataFrame in between."""
        return queue_rows(self.stores, _wanted(filters), utc_now(), view)

    def queue_order(self, *, view: QueueView | None = None, **filters: Any) -> list[str]:
        """The ids of ``review_queue``, in order, with nothing else read."""
        return queue_order(self.stores, _wanted(filters), utc_now(), view)

    def pending_count(self) -> int:
        return pending_count(self.stores, utc_now())

    def nearest_approved(
        self, text: str, npc: str | None, team: str | None, *, limit: int, min_similarity: float
    ) -> list[tuple[str, str, float]]:
        """The approved memories most like ``text`` that ``npc`` may see, as (id, text,
        similarity 0-100), best first: found through the neighbour index (no scan of
        every approved memory), scored by rapidfuzz's token-set ratio."""
        terms = content_terms(text)
        found = []
        for store in self.stores.existing():
            ids = self.index_for(store).nearest(terms, npc, team, _NEAREST_POOL)
            for row in memory_rows.approved_by_id(store, ids):
                score = float(fuzz.token_set_ratio(text, row["final_text"]))
                if score >= min_similarity:
                    found.append((row["id"], row["final_text"], score))
        found.sort(key=lambda item: -item[2])
        return found[:limit]

    # -- the memory block -----------------------------------------------------------------

    def context_block(
        self,
        npc: str,
        *,
        team: str | None = None,
        query: str | None = None,
        max_chars: Any = None,
        as_of: State = None,
    ) -> MemoryBlock:
        """The memory block for ``npc`` with the ids of the memories in it, now or at
        ``as_of`` (a snapshot or a time; by default the pinned snapshot, if any)."""
        cap = max_chars if max_chars is not None else self.settings.context_max_chars
        if isinstance(cap, bool) or not isinstance(cap, int) or block_room(cap) < 1:
            least = block_room(0) * -1 + 1
            raise InvalidValueError(
                "max_chars", cap, f"a whole number of at least {least} (room for the block's tags)"
            )
        state = as_of if as_of is not None else self.pinned()
        approved = self._approved(npc, team, state)
        selected = approved.select(query_terms(query), block_room(cap))
        block = render_block(selected, len(approved), cap)
        if isinstance(state, Snapshot):
            return replace(block, snapshot=state.id, as_of=state.taken_at)
        return replace(block, as_of=state or utc_now())

    def approved_versions(self, npc: str, team: str | None) -> dict[str, str]:
        """{id: text hash} of the approved memories ``npc`` may see now (at the pinned
        snapshot, if any)."""
        return self._approved(npc, team, self.pinned()).versions

    def _approved(self, npc: str, team: str | None, state: State) -> ApprovedSet:
        if state is None:
            return self.cache.approved(list(self.stores.existing()), npc, team)
        return self.snapshots.approved(state, npc, team)

    def pinned(self) -> Snapshot | None:
        """The snapshot every read of the memory block is pinned to (the ``pin``
        setting), or None."""
        pin = self.settings.pin
        return None if pin is None else self.snapshots.find(pin)

    def pinned_moment(self) -> Moment | None:
        """The pinned snapshot as a moment of the project's store (None: not pinned)."""
        pinned = self.pinned()
        return None if pinned is None else project_moment(pinned)

    # -- decisions ------------------------------------------------------------------------

    def apply(self, decision: Decision, context: ReviewContext | None = None) -> DecisionResult:
        """Apply one decision with what its front end records beside it: the one path of
        every decision (the facade's conveniences, the review panel, ``npc-nb review``).
        Dispatched on the value's type; anything else is refused, nothing written."""
        handler = _HANDLERS.get(type(decision))
        if handler is None:
            raise not_a_decision(decision)
        return handler(self, decision, context or ReviewContext())

    def approve_promoted(self, memory_id: str, by: str | None, reason: str) -> DecisionResult:
        """Approve a live card because an experiment arm's approved memory states the
        same fact (``reason`` names it in the audit event). In independent review it is
        the promoter's vote, refused on a card waiting for adjudication."""
        return self._decide(
            "approve", memory_id, ReviewContext(by=by, intent="vote"), reason=reason
        )

    def _decide(
        self,
        decision: str,
        memory_id: str,
        context: ReviewContext,
        *,
        text_of: Callable[[Store, dict], str] | None = None,
        **args: Any,
    ) -> DecisionResult:
        """Plan and apply one decision on the memory's row as read now; ``text_of`` gives
        the approved text from that row (a merged wording of the card). The vote rules
        are read once, here: a vote or a decision of one reviewer, for the whole call."""
        rules = self.votes.rules()
        actor = self.actor(context.by, independent=rules is not None)
        audit = _audit(context, self.identity().role)
        expected, intent = context.shown_status, context.intent
        marks = decisions.read_marks(self.stores)  # before the row is read
        store, memory = self.stores.locate(memory_id)

        def latest() -> dict | None:
            with store.read() as con:
                return events.latest_change(con, memory["id"])

        self.votes.refuse_moved_on(rules, intent, decision, memory, expected, latest)
        if expected is not None and memory["status"] != expected:
            # The reviewer decided on what they saw; somebody changed it since.
            raise decisions.already_decided(memory["id"], expected, latest())
        if text_of is not None:
            args["text"] = text_of(store, memory)
        self.votes.refuse_reconsider(rules, memory, args.get("reconsider", False))
        if rules is not None and self.votes.votes_on(rules, decision, memory):
            return self.votes.vote(
                rules, store, memory, decision, voter=actor, args=args, audit=audit,
                expect_status=expected, intent=intent,
            )  # fmt: skip
        now = utc_now()
        change = transitions.plan(decision, memory, actor=actor, now=now, **args)
        planned = [change, *self._replaced_by(store, memory, change, now)]
        return decisions.apply_changes(
            store, planned, actor=actor, now=now, audit=audit, read_at=marks[id(store)]
        )

    def _supersede(self, decision: Supersede, context: ReviewContext) -> DecisionResult:
        text = candidates.validate_memory_text(decision.text, self.settings.max_memory_chars)
        store, memory = self.stores.locate(decision.memory_id)
        actor, now = self.actor(context.by), utc_now()
        if context.shown_status is not None and memory["status"] != context.shown_status:
            with store.read() as con:
                latest = events.latest_change(con, memory["id"])
            raise decisions.already_decided(memory["id"], context.shown_status, latest)
        change = transitions.plan_supersede(memory, text, actor=actor, now=now)
        audit = _audit(context, self.identity().role)
        return decisions.apply_changes(store, [change], actor=actor, now=now, audit=audit)

    def _adjudicate(self, decision: Adjudicate, context: ReviewContext) -> DecisionResult:
        actor = self.actor(context.by)
        return self.votes.adjudicate(
            decision.memory_id,
            decision.vote,
            actor=actor,
            audit=_audit(context, self.identity().role),
            expect_status=context.shown_status,
        )

    def _requeue(self, decision: Requeue, context: ReviewContext) -> DecisionResult:
        """Put a merged variant or an automatic outcome back as its own card."""
        actor = self.actor(context.by)
        new_card = variants.requeue(
            self.stores, decision.reproposal_id, actor, utc_now(), inserted=self._inserted
        )
        return DecisionResult(
            "requeue", actor, ((new_card, None, PENDING),), new_memory_id=new_card
        )

    def _replaced_by(
        self, store: Store, memory: dict, change: transitions.Change, now: datetime
    ) -> list[transitions.Change]:
        """Approving a proposed update supersedes the memory it updates, in one batch;
        if that memory is no longer approved, the candidate is approved alone."""
        replaces = memory.get("updates")
        if not replaces or change.to_status not in APPROVED_STATUSES or change.new_row:
            return []
        old = memory_rows.get_memory(store, replaces)
        if old is None or old["status"] not in APPROVED_STATUSES or old["superseded_by"]:
            return []
        # The link is ``updates`` on the candidate and ``superseded_by`` on the old
        # memory; ``supersedes`` stays for revisions a reviewer wrote (edit, supersede).
        return [transitions.plan_replaced(old, memory["id"], now=now)]

    # -- one card per fact ------------------------------------------------------------------

    def variants(self, memory_id: str) -> tuple[variants.Variant, ...]:
        """The wordings merged into the card ``memory_id`` (not split off), oldest first."""
        return tuple(
            variant
            for store in self.stores.existing()
            for variant in variants.card_variants(store, memory_id)
        )

    def _inserted(self, store: Store, seq: int, row: dict[str, Any], seen: tuple[int, int]) -> None:
        """A memory row this process just committed joins the store's neighbour index."""
        self.index_for(store).inserted(seq, row, seen)

    def automatic_outcomes(
        self, *, unlisted_only: bool, mark_listed: bool, npc: str | None = None
    ) -> pd.DataFrame:
        """What the matcher decided without asking (merged, suppressed, reinforced) and
        nobody put back (``npc``'s only, if given); ``mark_listed`` notes that a reviewer
        is being shown them."""
        found = []
        for store in self.stores.existing():
            listed = reproposal_rows.automatic(store, unlisted_only=unlisted_only, npc=npc)
            if mark_listed:
                reproposal_rows.mark_listed(store, [row["id"] for row in listed], utc_now())
            found += listed
        found.sort(key=lambda row: (row["recorded_at"], row["id"]))
        return pd.DataFrame(found, columns=AUTOMATIC_COLUMNS)

    def preview_approve_all(
        self, filters: dict[str, Any], *, sample_size: int
    ) -> ApproveAllPreview:
        """What approving every unflagged candidate matching ``filters`` would approve:
        the count, a sample and the ids. Nothing is written."""
        self._refuse_batch()
        return decisions.preview_approve_all(
            self.stores, filters, now=utc_now(), sample_size=sample_size, kinds=QUEUE_KINDS
        )

    def approve_all(
        self,
        preview: ApproveAllPreview,
        *,
        by: str | None,
        session: str | None = None,
        arms: list[str] | None = None,
    ) -> DecisionResult:
        """Approve exactly the candidates ``preview`` showed, as one batch; refused,
        nothing written, if any of them was decided or flagged since (``arms``: the
        experiment arms the preview was taken in)."""
        self._refuse_batch()
        return decisions.approve_previewed(
            self.stores,
            preview.ids,
            queue_filters(None, None, None, None, None, list(preview.ids), arms),
            actor=self.actor(by),
            now=utc_now(),
            session=session,
            role=self.identity().role,
        )

    def _refuse_batch(self) -> None:
        if self.votes.independent:
            raise DecisionError(
                "approve_all is one reviewer's batch, and in independent review every card "
                f"needs {self.votes.policy().needed} votes: review the cards one by "
                "one, or configure(review_mode='single') for a review of your own."
            )

    def undo(
        self,
        by: str | None = None,
        *,
        session: str | None = None,
        expected: tuple[str, int] | None = None,
    ) -> DecisionResult:
        """Revert the last decision (``decisions.undo``; ``expected``: the caller's own
        latest decision, looked up directly)."""
        actor, role = self.actor(by), self.identity().role
        return decisions.undo(
            self.stores,
            actor=actor,
            now=utc_now(),
            session=session,
            expected=expected,
            vote_undo=self.votes.undo_hook(actor, session, role),
            role=role,
        )


def _audit(context: ReviewContext, role: str) -> dict[str, Any]:
    """What the audit event records of a decision's context (the engine's keys)."""
    return {"time_spent": context.time_spent, "session": context.session_id, "reviewer_role": role}


def _approve(core: MemoryCore, decision: Approve, context: ReviewContext) -> DecisionResult:
    variant = decision.variant
    if variant is None:
        return core._decide("approve", decision.memory_id, context, reconsider=decision.reconsider)

    def wording(store: Store, memory: dict) -> str:
        return variants.variant_text(store, memory, variant)

    return core._decide(
        "approve", decision.memory_id, context, text_of=wording,
        reconsider=decision.reconsider, wording=str(variant),
    )  # fmt: skip


def _edit(core: MemoryCore, decision: Edit, context: ReviewContext) -> DecisionResult:
    text = candidates.validate_memory_text(decision.text, core.settings.max_memory_chars)
    return core._decide(
        "edit", decision.memory_id, context, text=text, reconsider=decision.reconsider
    )


#: ``MemoryCore.apply``'s dispatch: one handler per decision type, chosen by the type.
_HANDLERS: dict[type, Callable[[MemoryCore, Any, ReviewContext], DecisionResult]] = {
    Approve: _approve,
    Reject: lambda core, d, c: core._decide("reject", d.memory_id, c, reason=d.reason),
    Edit: _edit,
    Defer: lambda core, d, c: core._decide("defer", d.memory_id, c, until=d.until),
    Skip: lambda core, d, c: core._decide("skip", d.memory_id, c),
    SetValidity: lambda core, d, c: core._decide(
        "set_validity", d.memory_id, c, valid_from=d.valid_from, valid_to=d.valid_to
    ),
    Supersede: MemoryCore._supersede,
    Adjudicate: MemoryCore._adjudicate,
    Requeue: MemoryCore._requeue,
}


def _wanted(filters: dict[str, Any]) -> dict[str, Any]:
    """The review queue's keyword filters as the store takes them."""
    return queue_filters(
        filters.get("npc"),
        filters.get("team"),
        filters.get("category"),
        filters.get("scope"),
        filters.get("conversation"),
        filters.get("ids"),
        filters.get("arms"),
    )
