"""One reviewer working through the queue: the state behind the panel and ``npc-nb review``.

A ``ReviewSession`` turns the review engine's single decisions into a session: the
candidates in review order, skipped ones moved to the back, the time spent on each card,
a live tally that undo takes back, approve-all bound to the preview the reviewer saw,
and a summary at the end. Every decision is written to the store the moment it is made;
the session holds nothing that would be lost with the kernel. Front ends (the ipywidgets
panel, the terminal) only render ``Card`` (``card``: what a card shows) and ``Summary``
(``summary``: the tally and the end screen) and forward keys.

The session composes its parts, one concern each: ``card_queue`` (the cards in order,
read as they come near the front), ``card_reading`` (what a card shows beside its row),
``steps`` (the decisions taken, the tally, what undo takes back) and ``adjudication``
(independent review: a decision is a vote, or an adjudicator's pick, and says which).

On a shared store the session also hears decisions made in other kernels (the store's
decision notices, from a background thread): a card decided elsewhere leaves the queue
at once, and ``elsewhere`` says who decided it. ``lock`` serialises those updates with
the reviewer's own actions, so a key press never acts on a queue being changed.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from .._foundations.ids import new_id
from .._foundations.results import ApproveAllPreview, DecisionResult
from ..decisions import (
    CARD_DECISIONS,
    Approve,
    CardDecision,
    Defer,
    Edit,
    Requeue,
    ReviewContext,
)
from ..errors import DecisionError
from ..memory.candidates import validate_memory_text
from ..memory.core import MemoryCore
from ..memory.queue import queue_filters
from ..memory.voting import QueueView
from ..store.notices import DecisionNotice
from .adjudication import picked_vote, votes_shown
from .audited import Audited, AuditProgress, audit_progress, in_sample, refuse_approve_all
from .card import Card, Nearest, evidence_span
from .card_queue import CardQueue
from .card_reading import NEAREST_LIMIT as NEAREST_LIMIT
from .card_reading import NEAREST_MIN_SIMILARITY as NEAREST_MIN_SIMILARITY
from .card_reading import nearest, read_card, stored_text
from .dates import defer_time as typed_defer_time
from .deciding import Deciding
from .summary import TALLY_KINDS, Decided, Summary, count_other_wordings
from .wordings import automatic_entry, variant_id, wording_card

__all__ = [
    "TALLY_KINDS",
    "Card",
    "Decided",
    "Nearest",
    "ReviewSession",
    "Summary",
    "evidence_span",
]

#: Cards read ahead at a time: a queue holds every open id in order, but reads a card's
#: row only when it comes near the front (opening a queue of 100,000 reads 32 rows).
READ_AHEAD = 32


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _locked(
    method: Callable[Concatenate[ReviewSession, _P], _R],
) -> Callable[Concatenate[ReviewSession, _P], _R]:
    """Run a session method holding the session's lock (see ``ReviewSession.lock``)."""

    @functools.wraps(method)
    def run(self: ReviewSession, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.lock:
            return method(self, *args, **kwargs)

    return run


@dataclass
class ReviewSession:
    """The queue of one review, with its tally; decisions go straight to the store."""

    memory: MemoryCore
    npc: str | None = None
    category: str | None = None
    conversation: str | None = None
    by: str | None = None
    clock: Callable[[], float] = time.monotonic
    session_id: str = field(default_factory=new_id)
    #: Review only what this session puts back (``%npc_review --auto``), not the queue.
    auto_only: bool = False
    #: The wall clock a typed defer date counts from (``defer_time``); tests fix it.
    now: Callable[[], datetime] = datetime.now
    #: Review the cards waiting for adjudication (independent review), not the queue.
    adjudicate: bool = False
    #: An experiment's blind review: its arms' cards only (arm ids; None: live memory),
    #: put in order by ``order`` (the experiment's seeded order), shown ``blind`` (no
    #: model, prompt version or extraction time: ``Card.blinded``).
    arms: tuple[str, ...] | None = None
    order: Callable[[list[str]], list[str]] | None = None
    blind: bool = False
    #: An audit's blind review: only its sampled cards awaiting ``by`` (``audited``).
    audit: Audited | None = None

    def __post_init__(self) -> None:
        #: Held by every change to the queue: the reviewer's actions, and updates from
        #: other kernels' decisions (which arrive on another thread). Front ends hold it
        #: while they act and redraw.
        self.lock = threading.RLock()
        self._cards = CardQueue(
            listed=self._listed,
            fetch=self._fetch,
            read_ahead=lambda: READ_AHEAD,  # this module's, read at each use
            voting=lambda: self.view is not None,
            stored_text=lambda memory_id: stored_text(self.memory, memory_id),
        )
        self._deciding = Deciding(self.memory, self._cards, self)
        self._automatic: list[dict[str, Any]] | None = None
        self._card: tuple[tuple, Card] | None = None
        self._progress: tuple[tuple, AuditProgress] | None = None
        #: Set by a front end that loads the neighbour index in the background: until it
        #: is loaded, cards come without their nearest memories (``Card.nearest_pending``)
        #: instead of waiting for the load.
        self.nearest_later = False
        self._started = self.clock()
        self.reload()
        stores = self.memory.stores
        for store in {id(s): s for s in (stores.project, stores.user)}.values():
            store.subscribe(self._heard)

    @property
    def view(self) -> QueueView | None:
        """Which cards this review lists in independent review (None: every open card)."""
        return self.memory.votes.view(self.memory.voter(self.by), adjudicate=self.adjudicate)

    @property
    def recording(self) -> str:
        """ "recording as NAME (how it was determined)": who this review's decisions are
        recorded for."""
        me = self.memory.identity()
        name = self.memory.actor(self.by)
        return str(me) if name == me.name else f"recording as {name} (by=, typed by {me.name})"

    @property
    def unnamed_reviewer(self) -> str | None:
        """The shared account (root) this review's decisions are recorded under because
        nobody named the reviewer, else None."""
        return self.memory.unnamed_reviewer(self.by)

    @property
    def elsewhere(self) -> str | None:
        """The last card another kernel decided, in words (None until one was)."""
        return self._cards.elsewhere

    @elsewhere.setter
    def elsewhere(self, message: str | None) -> None:
        self._cards.elsewhere = message

    @property
    def undone(self) -> Decided | None:
        """What the last ``undo`` took back (``Decided.undo_line`` says so in words)."""
        return self._deciding.undone

    @property
    def _queue(self) -> list[str]:
        """Every card in this review, in order (read-only: ``card_order`` copies it)."""
        return self._cards.order

    # -- decisions made elsewhere -------------------------------------------------------

    def watch(self, callback: Callable[[str], None]) -> None:
        """Call ``callback`` (from the store's listener thread, holding ``lock``) whenever
        another kernel's decision changed this queue, with what happened in words."""
        self._cards.watchers.append(callback)

    def _heard(self, notice: DecisionNotice) -> None:
        with self.lock:  # a new card on screen: its time spent counts from now
            self._cards.heard(notice, moved=self._deciding.shown)

    # -- the queue ----------------------------------------------------------------------

    @_locked
    def reload(self, first: list[str] | None = None) -> None:
        """Re-read the queue from the store, keeping this session's order: cards decided
        elsewhere drop out, new ones join at the back, ``first`` (memories to show first)
        go to the front; rows are read as their cards come near the front (``READ_AHEAD``).
        Undo and a refused decision re-read only their own cards."""
        self._cards.reload(first)

    def _listed(self, first: list[str] | None) -> list[str]:
        """The ids of this review's cards, in its order (``first``: put back by it)."""
        found = self.memory.queue_order(**self._filters())
        if self.audit is not None:
            found = in_sample(self.audit, self.by, found)
        if self.order is not None:
            found = self.order(found)
        if self.auto_only:
            mine = {e.get("requeued_as") for e in self._automatic or []} | set(first or [])
            found = [i for i in found if i in mine]
        return found

    def _fetch(self, ids: list[str]) -> list[dict[str, Any]]:
        """The rows of those of ``ids`` still open in this review."""
        if self.audit is not None:
            ids = in_sample(self.audit, self.by, ids)
        return self.memory.queue_rows(ids=ids, **self._filters())

    def _filters(self) -> dict[str, Any]:
        """What this review lists, as ``MemoryCore.queue_order`` and ``queue_rows`` take it."""
        named = {"npc": self.npc, "category": self.category, "conversation": self.conversation}
        return {**named, "view": self.view, "arms": self.arms}

    @property
    def current(self) -> str | None:
        """The id of the candidate on screen, or None when the queue is empty."""
        return self._cards.current

    @_locked
    def card_order(self) -> list[str]:
        """The ids of this review's cards, in the order it shows them."""
        return list(self._cards.order)

    @property
    def remaining(self) -> int:
        return len(self._cards.order)

    @property
    def tally(self) -> dict[str, int]:
        """Cards per kind of decision in this review, each card counted once, by its latest
        decision (skipped then approved is one approved; undone ones no longer count)."""
        return self._deciding.steps.tally()

    @property
    def decided(self) -> int:
        """Cards this review has decided for good (their latest decision is not a skip)."""
        return self._deciding.steps.decided()

    @property
    def undoable(self) -> bool:
        """Whether this review has a decision that undo could take back."""
        return bool(self._deciding.steps)

    @_locked
    def card_text(self) -> str:
        """The current candidate's text ("" when the queue is empty)."""
        memory_id = self.current
        return self._cards.rows[memory_id]["final_text"] if memory_id is not None else ""

    @_locked
    def card(self) -> Card | None:
        """The current candidate with its evidence, source and nearest approved memories
        (read once per card and queue state: a key press draws it several times)."""
        memory_id = self.current
        if memory_id is None:
            return None
        pending = self.nearest_later and not self.memory.neighbours_loaded()
        key = (memory_id, self._cards.generation, self.decided, self.remaining, pending)
        if self._card is None or self._card[0] != key:
            card = read_card(
                self.memory,
                self._cards.rows[memory_id],
                position=self.decided + 1,
                total=self.decided + self.remaining,
                nearest_pending=pending,
                votes=votes_shown(self.memory, memory_id) if self.adjudicate else (),
            )
            self._card = (key, card.blinded() if self.blind else card)
        return self._card[1]

    def look_ahead(self) -> None:
        """Read what the card after this one will show while the reviewer reads this one:
        its nearest approved memories (the store keeps their rows, the neighbour index
        its answer), so the key that brings it up does not wait for them. Any thread may
        call it: it changes nothing, and holds the lock only to find that card."""
        with self.lock:
            upcoming = self._cards.upcoming()
            if upcoming is None or (self.nearest_later and not self.memory.neighbours_loaded()):
                return
        nearest(self.memory, upcoming)

    # -- one card per fact --------------------------------------------------------------

    @_locked
    def approve_wording(self, number: int) -> DecisionResult:
        """Approve the current card with its wording ``number`` (1 is the card's own, 2
        and up its merged variants, as ``Card.wordings``): another wording is approved
        as the model proposed it (not an edit), and the tally says so."""
        card = wording_card(self.card(), number, "approve")
        if number == 1:
            return self._decide(Approve(card.memory_id))
        return self._decide(
            Approve(card.memory_id, variant=variant_id(card, number)), wording=number
        )

    @_locked
    def split(self, number: int) -> str:
        """Split wording ``number`` (2 and up) off the current card into a card of its
        own, at the back of this review; returns the new card's id."""
        card = wording_card(self.card(), number, "split")
        new_card = self._requeue(variant_id(card, number))
        self._cards.reread([card.memory_id, new_card])
        return new_card

    def automatic(self) -> list[dict[str, Any]]:
        """What the matcher decided without asking since the last review (merged,
        suppressed, reinforced; this review's persona's only, if it has one), read once
        per session and then noted as listed; an entry put back carries ``requeued_as``."""
        if self._automatic is None and self.audit is not None:
            self._automatic = []  # not the audit's: listed in an ordinary review
        if self._automatic is None:
            frame = self.memory.automatic_outcomes(
                unlisted_only=True, mark_listed=True, npc=self.npc
            )
            self._automatic = frame.to_dict("records")
        return self._automatic

    @_locked
    def requeue(self, number: int) -> str:
        """Put automatic outcome ``number`` (from 1, as listed by ``automatic``) back in
        this review as its own card; returns the new card's id."""
        entry = automatic_entry(self.automatic(), number)
        entry["requeued_as"] = self._requeue(entry["id"])
        self._cards.reread([entry["requeued_as"]])
        return entry["requeued_as"]

    def _requeue(self, reproposal_id: str) -> str:
        """Put a re-proposal back as its own card, in this review; the new card's id."""
        context = ReviewContext(by=self.by, session_id=self.session_id)
        return str(self.memory.apply(Requeue(reproposal_id), context).new_memory_id)

    # -- decisions ----------------------------------------------------------------------

    def defer_time(self, typed: Any = "") -> datetime:
        """When a card deferred with ``typed`` would be due again (aware, UTC): what the
        panel's defer box and the terminal's defer prompt accept (``tomorrow``, ``next
        week``, ``+3d``, ``friday``, an ISO date, ... see ``review.dates``), counted from
        ``now``. A form it cannot read, or a time that is not in the future, is refused
        with a ``DecisionError`` listing the accepted forms; nothing is decided."""
        return typed_defer_time(typed, now=self.now())

    def edit_text(self, text: str) -> str:
        """The text an edit to ``text`` would store, or the ``CandidateError`` the edit
        would raise (empty, too long, a control character): a front end asks again
        before anything is decided."""
        return validate_memory_text(text, self.memory.settings.max_memory_chars)

    @_locked
    def decide(self, decision: CardDecision) -> DecisionResult:
        """Apply ``decision`` (``Approve``, ``Reject``, ``Edit``, ``Skip`` or ``Defer`` of
        the current card, ``current``) through the memory core's ``apply``.

        It is refused if somebody changed the candidate since it was read (another
        kernel, reviewer or cell): a decision applies only to what the reviewer saw. A
        ``Defer`` may say ``until`` as the reviewer typed it (``defer_time``).
        """
        return self._decide(decision)

    def _decide(self, decision: CardDecision, *, wording: int | None = None) -> DecisionResult:
        """``decide``; ``wording``: the number of the card's other wording approved."""
        if self.current is None:
            raise DecisionError("Nothing left to review: the queue is empty.")
        if not isinstance(decision, CARD_DECISIONS):
            raise DecisionError(
                f"{decision!r} is not a card decision; use Approve, Reject, Edit, Skip or "
                "Defer (from npc_nb) with the current card's id."
            )
        if isinstance(decision, Defer) and decision.until is not None:
            decision = dataclasses.replace(decision, until=self.defer_time(decision.until))
        return self._deciding.decide(
            decision,
            wording=wording,
            voted_text=lambda: self._voted_text(decision, wording),
        )

    def _voted_text(self, decision: CardDecision, wording: int | None) -> str:
        row = self._cards.rows[self.current or ""]
        if isinstance(decision, Edit):
            return self.edit_text(decision.text)
        card = self.card()
        if wording is not None and card is not None:
            return card.wordings[wording - 1]
        return str(row["final_text"])

    @_locked
    def adjudicate_vote(self, number: int) -> DecisionResult:
        """Adjudicate the current card as its vote ``number`` says (``Card.votes``)."""
        card = self.card()
        picked = picked_vote(card, number)
        assert card is not None
        return self._deciding.adjudicate_vote(card, picked)

    @_locked
    def undo(self) -> DecisionResult:
        """Revert this review's last decision or batch; its cards come back first.

        Only decisions made in this session are undone, never one from another review
        or a notebook cell (which could re-open a rejection made long ago).
        """
        return self._deciding.undo()

    def preview_all(self, sample_size: int = 5) -> ApproveAllPreview:
        """What approve-all would approve under this session's filters (nothing changes)."""
        refuse_approve_all(self.audit)
        arms = None if self.arms is None else list(self.arms)
        filters = queue_filters(self.npc, None, self.category, None, self.conversation, arms=arms)
        return self.memory.preview_approve_all(filters, sample_size=sample_size)

    @_locked
    def approve_previewed(self, preview: ApproveAllPreview) -> DecisionResult:
        """Approve exactly what ``preview`` showed, as one batch (flagged never included)."""
        refuse_approve_all(self.audit)
        arms = None if self.arms is None else list(self.arms)
        result = self.memory.approve_all(preview, by=self.by, session=self.session_id, arms=arms)
        ids = result.memory_ids
        if ids:
            batch = Decided("approved", f"{len(ids)} candidate(s) as one batch")
            self._deciding.record(batch, ids, None)
        self.reload()
        return result

    @_locked
    def summary(self) -> Summary:
        steps = self._deciding.steps
        return Summary(
            tally=self.tally,
            decided=self.decided,
            remaining=self.remaining,
            seconds=self.clock() - self._started,
            seconds_per_card=steps.median_spent(),
            last=steps.latest(5),
            store_path=str(self.memory.store_path),
            filters=self.filters,
            other_wordings=count_other_wordings(steps.outcomes().values()),
            audit=self.audit_progress(),
        )

    def audit_progress(self) -> AuditProgress | None:
        """Where this review's audit stands, blind (None when it reviews no audit)."""
        if self.audit is None:
            return None
        # Read once per queue state: a key press draws the panel (and its summary) twice.
        # Once the sample is all decided, read afresh: approve_rest or review_rest
        # closes the audit without moving this queue, and the summary then states it.
        key = (self._cards.generation, self.decided, self.remaining)
        cached = self._progress
        if cached is None or cached[0] != key or cached[1].decided >= cached[1].sample:
            cached = (key, audit_progress(self.audit, self.by, voting=self.view is not None))
            self._progress = cached
        return cached[1]

    @property
    def filters(self) -> str:
        """What this review is limited to, in words ("" when it covers the whole queue)."""
        if self.audit is not None:
            return f"audit={self.audit.name}"
        named = {"npc": self.npc, "category": self.category, "conversation": self.conversation}
        return ", ".join(f"{name}={value}" for name, value in named.items() if value)
