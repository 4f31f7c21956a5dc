"""One reviewer working through the queue: the state behind the panel and ``npc-nb review``.

A ``ReviewSession`` turns the review engine's single decisions into a session: the
candidates in review order, skipped ones moved to the back, the time spent on each card,
a live tally that undo takes back, approve-all bound to the preview the reviewer saw,
and a summary at the end. Every decision is written to the store the moment it is made;
the session holds nothing that would be lost with the kernel. Front ends (the ipywidgets
panel, the terminal) only render ``Card`` (``card``: what a card shows) and ``Summary``
(``summary``: the tally and the end screen) and forward keys.

On a shared store the session also hears decisions made in other kernels (the store's
decision notices, from a background thread): a card decided elsewhere leaves the queue
at once, and ``elsewhere`` says who decided it. ``lock`` serialises those updates with
the reviewer's own actions, so a key press never acts on a queue being changed.

In independent review (``review_mode="independent"``) the session is its reviewer's:
the queue holds only the cards still collecting votes that the reviewer has not voted
on, a decision is a vote, and a card shows how many votes it has, never whose or which;
another's vote that completes the card (agreed, or waiting for adjudication) takes it
out of the queue. ``adjudicate=True`` reviews the cards waiting for adjudication, their
votes side by side (``Card.votes``): ``adjudicate_vote(n)`` picks one, a decision is
the adjudication. Adjudication is deliberate: a decision here says what it is meant as
(``intent``), so a reviewer's key press on a card whose votes came in meanwhile is
refused, nothing recorded ("this card now waits for adjudication"), never taken as the
adjudication; and an adjudicator's on a card that no longer waits for it is never a
vote. The card then leaves the review, as any refused decision's does.
"""

from __future__ import annotations

import functools
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from .._foundations.ids import new_id
from .._foundations.results import ApproveAllPreview, DecisionResult
from ..errors import DecisionError, NpcError
from ..memory.candidates import validate_memory_text
from ..memory.core import MemoryCore
from ..memory.queue import queue_filters
from ..memory.voting import QueueView
from ..store.notices import DecisionNotice
from ..vocabulary import OPEN_STATUSES
from .card import (
    Card,
    Nearest,
    VoteShown,
    card_from_row,
    conversation_ids,
    evidence_span,
    text_or_none,
)
from .dates import defer_time as typed_defer_time
from .names import card_name, differs_line, done_as
from .summary import KIND_OF, TALLY_KINDS, Decided, Summary, count_kinds, count_other_wordings

__all__ = [
    "TALLY_KINDS",
    "Card",
    "Decided",
    "Nearest",
    "ReviewSession",
    "Summary",
    "evidence_span",
]

NEAREST_LIMIT = 3
#: Cards read ahead at a time: a queue holds every open id in order, but reads a card's
#: row only when it comes near the front (opening a queue of 100,000 reads 32 rows).
READ_AHEAD = 32
NEAREST_MIN_SIMILARITY = 60.0


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
class _Step:
    decided: Decided
    memory_ids: list[str]
    spent: float | None  # seconds on the card; None for a batch
    #: The card's decision event (memory id, seq), so undo finds it without a search.
    event: tuple[str, int] | None = None
    #: The card's row as it was read before the decision: undo restores it as it was.
    row: dict[str, Any] | None = None


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

    def __post_init__(self) -> None:
        #: Held by every change to the queue: the reviewer's actions, and updates from
        #: other kernels' decisions (which arrive on another thread). Front ends hold it
        #: while they act and redraw.
        self.lock = threading.RLock()
        #: The last card another kernel decided, in words (None until one was).
        self.elsewhere: str | None = None
        self._watchers: list[Callable[[str], None]] = []
        self._queue: list[str] = []  # every card in this review, in order
        self._waiting: set[str] = set()  # the same ids, to look up
        self._rows: dict[str, dict[str, Any]] = {}  # the rows read so far (the front)
        self._steps: list[_Step] = []
        #: What the last ``undo`` took back (``Decided.undo_line`` says so in words).
        self.undone: Decided | None = None
        self._automatic: list[dict[str, Any]] | None = None
        self._generation = 0  # bumped by every re-read of the queue
        self._card: tuple[tuple, Card] | None = None
        #: Set by a front end that loads the neighbour index in the background: until it
        #: is loaded, cards come without their nearest memories (``Card.nearest_pending``)
        #: instead of waiting for the load.
        self.nearest_later = False
        self._started = self._shown_at = self.clock()
        self.reload()
        stores = self.memory.stores
        for store in {id(s): s for s in (stores.project, stores.user)}.values():
            store.subscribe(self._heard)

    @property
    def view(self) -> QueueView | None:
        """Which cards this review lists in independent review (None: every open card)."""
        return self.memory.votes.view(self.memory.actor(self.by), adjudicate=self.adjudicate)

    @property
    def unnamed_reviewer(self) -> str | None:
        """The shared account (root) this review's decisions are recorded under because
        nobody named the reviewer, else None."""
        return self.memory.unnamed_reviewer(self.by)

    # -- decisions made elsewhere -------------------------------------------------------

    def watch(self, callback: Callable[[str], None]) -> None:
        """Call ``callback`` (from the store's listener thread, holding ``lock``) whenever
        another kernel's decision changed this queue, with what happened in words."""
        self._watchers.append(callback)

    def _heard(self, notice: DecisionNotice) -> None:
        with self.lock:
            before = (list(self._queue), self.current)
            message = self._apply(notice)
            if message is None and before == (self._queue, self.current):
                return
            if self.current != before[1]:
                self._shown_at = self.clock()  # a new card is on screen from now
            if message is not None:
                self.elsewhere = message
            for callback in self._watchers:
                callback(message or "")

    def _apply(self, notice: DecisionNotice) -> str | None:
        """Bring the queue in line with ``notice``; say so if a card left it."""
        memory_id = notice.memory_id
        if memory_id is not None and notice.status in OPEN_STATUSES and self.view is not None:
            return self._voted_elsewhere(memory_id)
        if memory_id is None or (memory_id not in self._waiting and notice.status in OPEN_STATUSES):
            waiting = set(self._queue)
            self.reload()  # anything may have changed, or a card came back: reread
            gone = len(waiting - set(self._queue))
            return f"{gone} card(s) were decided elsewhere; moved on." if gone else None
        if memory_id not in self._waiting:
            return None  # not in this review
        row = self._rows.get(memory_id)
        if row is None:  # a card further back, not read yet: read it now
            self._reread([memory_id])
            if memory_id in self._waiting:
                return None  # still open
            text = self._stored_text(memory_id)
        elif notice.status == row["status"]:
            return None  # nothing changed for it (a skip)
        else:
            text = row["final_text"]
            self._drop(memory_id)
            self._generation += 1
            self._read_front()
        done = done_as(notice.status)
        return (
            f"\u201c{text}\u201d was {done} by {notice.actor or 'someone'} "
            "elsewhere; it left this review."
        )

    def _voted_elsewhere(self, memory_id: str) -> str | None:
        """Somebody voted on (or withdrew a vote from) an open card: read it again. It
        leaves this review once it has the votes it needs (agreed, or waiting for
        adjudication), or joins it (an adjudicator's, a reviewer's after a withdrawal);
        said without whose vote or which."""
        listed = memory_id in self._waiting
        text = self._rows.get(memory_id, {}).get("final_text")
        self._reread([memory_id])
        if not listed or memory_id in self._waiting:
            return None
        shown = f"\u201c{text}\u201d" if text else "A card"
        return f"{shown} has the votes it needs from others; it left this review."

    # -- the queue ----------------------------------------------------------------------

    @_locked
    def reload(self, first: list[str] | None = None) -> None:
        """Re-read the queue from the store, keeping this session's order.

        Candidates decided elsewhere drop out, new ones join at the back, and ``first``
        (memories to show first) go to the front. Only the ids are read here, the rows
        as their cards come near the front (``READ_AHEAD``). Undo and a refused decision
        re-read only their own cards (``_reread``), not the whole queue.
        """
        found = self.memory.queue_order(
            npc=self.npc,
            category=self.category,
            conversation=self.conversation,
            view=self.view,
            arms=self.arms,
        )
        if self.order is not None:
            found = self.order(found)
        if self.auto_only:
            mine = {e.get("requeued_as") for e in self._automatic or []} | set(first or [])
            found = [i for i in found if i in mine]
        self._rows = {}  # read again as the cards come up
        self._generation += 1
        if self._queue or first:
            listed = set(found)
            # dicts keep order and drop repeats: the reopened first, this session's
            # order, then newcomers
            order = dict.fromkeys([*(first or []), *self._queue, *found])
            self._queue = [i for i in order if i in listed]
        else:  # a new review: the store's order as it is (a third of opening 160,000)
            self._queue = found
        self._waiting = set(self._queue)
        self._read_front()

    @_locked
    def _reread(self, memory_ids: list[str], *, first: bool = False) -> None:
        """Re-read only these cards, not the whole queue: what ``reload`` does for them.

        Those no longer open (or outside this review's filters) leave the queue; new
        ones join at the back, or with ``first`` (cards an undo has just reopened) all
        go to the front in the order given.
        """
        self._read_rows(memory_ids, first=first)
        self._read_front()

    def _read_rows(self, memory_ids: list[str], *, first: bool = False) -> None:
        """``_reread`` without reading the front card afterwards."""
        rows = self.memory.queue_rows(
            npc=self.npc,
            category=self.category,
            conversation=self.conversation,
            ids=memory_ids,
            view=self.view,
            arms=self.arms,
        )
        found = {row["id"]: row for row in rows}
        for memory_id in memory_ids:
            if memory_id in found:
                self._rows[memory_id] = found[memory_id]
                if memory_id not in self._waiting:
                    self._queue.append(memory_id)
                    self._waiting.add(memory_id)
            elif memory_id in self._waiting:
                self._drop(memory_id)
        if first:
            reopened = [i for i in dict.fromkeys(memory_ids) if i in found]
            self._queue = reopened + [i for i in self._queue if i not in found]
        self._generation += 1

    def _drop(self, memory_id: str) -> None:
        """Take a card out of this review."""
        self._rows.pop(memory_id, None)
        self._queue.remove(memory_id)
        self._waiting.discard(memory_id)

    @property
    def current(self) -> str | None:
        """The id of the candidate on screen, or None when the queue is empty."""
        return self._queue[0] if self._queue else None

    def _read_front(self) -> None:
        """Make sure the front card's row is read: every change to the queue ends here,
        so a decision applies to the card as it was read before the reviewer saw it."""
        while self._queue and self._queue[0] not in self._rows:
            self._read_ahead()

    def _read_ahead(self) -> None:
        """Read the rows of the next ``READ_AHEAD`` cards not read yet; those decided
        elsewhere meanwhile leave the queue, and ``elsewhere`` says so."""
        unread = []
        for memory_id in self._queue:
            if memory_id not in self._rows:
                unread.append(memory_id)
                if len(unread) == READ_AHEAD:
                    break
        self._read_rows(unread)
        gone = sum(memory_id not in self._waiting for memory_id in unread)
        if gone:
            self.elsewhere = f"{gone} card(s) were decided elsewhere; moved on."

    @_locked
    def card_order(self) -> list[str]:
        """The ids of this review's cards, in the order it shows them."""
        return list(self._queue)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    @property
    def tally(self) -> dict[str, int]:
        """Cards per kind of decision in this review, each card counted once, by its latest
        decision (skipped then approved is one approved; undone ones no longer count)."""
        return count_kinds(self._outcomes().values())

    @property
    def decided(self) -> int:
        """Cards this review has decided for good (their latest decision is not a skip)."""
        return sum(decided.kind != "skipped" for decided in self._outcomes().values())

    @property
    def undoable(self) -> bool:
        """Whether this review has a decision that undo could take back."""
        return bool(self._steps)

    def _outcomes(self) -> dict[str, Decided]:
        """Each card this review touched, with its latest decision."""
        return {memory_id: step.decided for step in self._steps for memory_id in step.memory_ids}

    @_locked
    def card_text(self) -> str:
        """The current candidate's text ("" when the queue is empty)."""
        memory_id = self.current
        return self._rows[memory_id]["final_text"] if memory_id is not None else ""

    @_locked
    def card(self) -> Card | None:
        """The current candidate with its evidence, source and nearest approved memories
        (read once per card and queue state: a key press draws it several times)."""
        memory_id = self.current
        if memory_id is None:
            return None
        pending = self.nearest_later and not self.memory.neighbours_loaded()
        key = (memory_id, self._generation, self.decided, len(self._queue), pending)
        if self._card is None or self._card[0] != key:
            card = self._read_card(memory_id, nearest_pending=pending)
            self._card = (key, card.blinded() if self.blind else card)
        return self._card[1]

    def _read_card(self, memory_id: str, *, nearest_pending: bool = False) -> Card:
        row = self._rows[memory_id]
        updates, differs = text_or_none(row.get("updates")), text_or_none(row.get("differs"))
        return card_from_row(
            row,
            source=self.memory.source_message(row["source_message_id"]),
            position=self.decided + 1,
            total=self.decided + len(self._queue),
            nearest=() if nearest_pending else self._nearest(row),
            nearest_pending=nearest_pending,
            updates_text=(self._current(updates) or {}).get("final_text"),
            differs=differs and differs_line(differs, row["final_text"], self._current),
            conversations=self.memory.conversation_starts(conversation_ids(row)),
            votes=self._votes_shown(memory_id) if self.adjudicate else (),
        )

    def _votes_shown(self, memory_id: str) -> tuple[VoteShown, ...]:
        """The card's votes, numbered, for its adjudicator."""
        return tuple(
            VoteShown(n, v["reviewer"], v["decision"], v["final_text"], v["reason"])
            for n, v in enumerate(self.memory.votes.open_votes(memory_id), start=1)
        )

    def look_ahead(self) -> None:
        """Read what the card after this one will show while the reviewer reads this one:
        its nearest approved memories (the store keeps their rows, the neighbour index
        its answer), so the key that brings it up does not wait for them. Any thread may
        call it: it changes nothing, and holds the lock only to find that card."""
        with self.lock:
            upcoming = self._rows.get(self._queue[1]) if len(self._queue) > 1 else None
            if upcoming is None or (self.nearest_later and not self.memory.neighbours_loaded()):
                return
        self._nearest(upcoming)

    # -- one card per fact --------------------------------------------------------------

    @_locked
    def approve_wording(self, number: int) -> DecisionResult:
        """Approve the current card with its wording ``number`` (1 is the card's own, 2
        and up its merged variants, as ``Card.wordings``): another wording is approved
        as the model proposed it (not an edit), and the tally says so."""
        card = self._card_for_wording(number, "approve")
        if number == 1:
            return self.decide("approve")
        variant = card.variants[number - 2].reproposal_id
        return self._decide("approve", {"variant": variant}, wording=number)

    @_locked
    def split(self, number: int) -> str:
        """Split wording ``number`` (2 and up) off the current card into a card of its
        own, at the back of this review; returns the new card's id."""
        card = self._card_for_wording(number, "split")
        if number == 1:
            raise DecisionError(
                "Wording 1 is the card's own; split off one of the others (2 and up)."
            )
        new_card = self.memory.requeue(card.variants[number - 2].reproposal_id, self.by)
        self._reread([card.memory_id, new_card])
        return new_card

    def automatic(self) -> list[dict[str, Any]]:
        """What the matcher decided without asking since the last review (merged,
        suppressed, reinforced; this review's persona's only, if it has one), read once
        per session and then noted as listed; an entry put back carries ``requeued_as``."""
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
        listed = self.automatic()
        if not 1 <= number <= len(listed):
            raise DecisionError(
                f"No automatic outcome {number}: the list has {len(listed)}."
                if listed
                else "Nothing was decided automatically since the last review."
            )
        entry = listed[number - 1]
        if entry.get("requeued_as"):
            put_back = card_name(str(entry["proposed_text"]))
            raise DecisionError(f"Already put back as its own card {put_back}.")
        entry["requeued_as"] = self.memory.requeue(entry["id"], self.by)
        self._reread([entry["requeued_as"]])
        return entry["requeued_as"]

    def _card_for_wording(self, number: int, what: str) -> Card:
        card = self.card()
        if card is None:
            raise DecisionError("Nothing left to review: the queue is empty.")
        if not 1 <= number <= len(card.wordings):
            raise DecisionError(
                f"Cannot {what} wording {number}: this card has "
                + (f"wordings 1 to {len(card.wordings)}." if card.variants else "one wording.")
            )
        return card

    def _current(self, memory_id: str | None) -> dict[str, Any] | None:
        """A memory's status and text as they are now (None if it is not there)."""
        if memory_id is None:
            return None
        try:
            return self.memory.stores.locate(memory_id, columns="status, final_text")[1]
        except NpcError:
            return None

    def _stored_text(self, memory_id: str) -> str:
        return str(self.memory.stores.locate(memory_id, columns="final_text")[1]["final_text"])

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
    def decide(self, decision: str, **extra: Any) -> DecisionResult:
        """Apply ``decision`` (approve, reject, edit, skip, defer) to the current card.

        It is refused if somebody changed the candidate since it was read (another
        kernel, reviewer or cell): a decision applies only to what the reviewer saw.
        """
        return self._decide(decision, extra)

    def _decide(
        self, decision: str, extra: dict[str, Any], *, wording: int | None = None
    ) -> DecisionResult:
        """``decide``; ``wording``: the number of the card's other wording approved."""
        memory_id = self.current
        if memory_id is None:
            raise DecisionError("Nothing left to review: the queue is empty.")
        if decision not in KIND_OF:
            raise DecisionError(
                f"Unknown decision {decision!r}; use approve, reject, edit, skip or defer."
            )
        if decision == "defer" and extra.get("until") is not None:
            extra["until"] = self.defer_time(extra["until"])
        row = self._rows[memory_id]
        spent = max(self.clock() - self._shown_at, 0.0)
        try:
            result = self.memory.decide(
                memory_id,
                decision,
                by=self.by,
                time_spent=spent,
                session=self.session_id,
                expect_status=row["status"],
                intent="adjudicate" if self.adjudicate else "vote",
                **extra,
            )
        except DecisionError:
            # Somebody else may have decided it: re-read this card alone (it leaves the
            # queue if it is no longer open), not the whole queue.
            self._reread([memory_id])
            self._shown_at = self.clock()
            raise
        # An edit that changes nothing is stored as an approval: count what was stored.
        kind = KIND_OF.get(result.decision, KIND_OF[decision])
        if not result.final and result.decision in ("vote", "replace_vote"):
            # A vote leaves the memory as it was: the text it approves is the vote's.
            text = self._voted_text(decision, extra, wording)
            before = row["final_text"] if text != row["final_text"] else None
            decided = Decided(kind, text, before=before, wording=wording)
        elif kind == "edited" or wording is not None:  # the text approved, as stored
            stored = self._stored_text(memory_id)
            decided = Decided(kind, stored, before=row["final_text"], wording=wording)
        else:
            decided = Decided(kind, row["final_text"])
        self._done(decided, result, spent, row)
        return result

    def _voted_text(self, decision: str, extra: dict[str, Any], wording: int | None) -> str:
        row = self._rows[self.current or ""]
        if decision == "edit":
            return self.edit_text(str(extra["text"]))
        card = self.card()
        if wording is not None and card is not None:
            return card.wordings[wording - 1]
        return str(row["final_text"])

    def _done(
        self, decided: Decided, result: DecisionResult, spent: float, row: dict[str, Any]
    ) -> None:
        """The current card was decided (or voted on): record it, move on."""
        memory_id = row["id"]
        event = (memory_id, result.event_seqs[0]) if result.event_seqs else None
        self._record(decided, [memory_id], spent, event=event, row=row)
        self._queue.pop(0)
        if decided.kind == "skipped":
            self._queue.append(memory_id)
        else:
            self._waiting.discard(memory_id)
            del self._rows[memory_id]
        self._read_front()

    @_locked
    def adjudicate_vote(self, number: int) -> DecisionResult:
        """Adjudicate the current card as its vote ``number`` says (``Card.votes``)."""
        card = self.card()
        if card is None:
            raise DecisionError("Nothing left to review: the queue is empty.")
        if not card.votes:
            raise DecisionError(
                "This card is not waiting for adjudication: a number key picks a vote "
                "only in an adjudication review (%npc_review --adjudicate)."
            )
        if not 1 <= number <= len(card.votes):
            raise DecisionError(f"Pick a vote from 1 to {len(card.votes)}.")
        row = self._rows[card.memory_id]
        spent = max(self.clock() - self._shown_at, 0.0)
        try:
            result = self.memory.adjudicate(
                card.memory_id,
                number,
                by=self.by,
                time_spent=spent,
                session=self.session_id,
                expect_status=row["status"],
            )
        except DecisionError:
            self._reread([card.memory_id])
            self._shown_at = self.clock()
            raise
        picked = card.votes[number - 1]
        text = picked.text if picked.text is not None else row["final_text"]
        before = row["final_text"] if text != row["final_text"] else None
        self._done(Decided(KIND_OF[picked.decision], text, before=before), result, spent, row)
        return result

    @_locked
    def undo(self) -> DecisionResult:
        """Revert this review's last decision or batch; its cards come back first.

        Only decisions made in this session are undone, never one from another review
        or a notebook cell (which could re-open a rejection made long ago).
        """
        if not self._steps:
            raise DecisionError("Nothing to undo: no decision has been made in this review.")
        last = self._steps[-1]
        result = self.memory.undo(by=self.by, session=self.session_id, expected=last.event)
        undone = set(result.memory_ids)
        step = None
        for index in range(len(self._steps) - 1, -1, -1):
            if set(self._steps[index].memory_ids) & undone:
                step = self._steps.pop(index)
                self.undone = step.decided
                break
        if step is not None and _restores(step, result):
            self._reopen(step)  # the card as it was read: undo put every field back
        else:
            self._reread(result.memory_ids, first=True)
        self._shown_at = self.clock()
        return result

    def _reopen(self, step: _Step) -> None:
        """Put the card of an undone step back at the front, with its row as read."""
        assert step.row is not None
        memory_id = step.row["id"]
        if memory_id in self._waiting:  # a skip: the card was at the back
            self._queue.remove(memory_id)
        self._queue.insert(0, memory_id)
        self._waiting.add(memory_id)
        self._rows[memory_id] = step.row
        self._generation += 1

    def preview_all(self, sample_size: int = 5) -> ApproveAllPreview:
        """What approve-all would approve under this session's filters (nothing changes)."""
        arms = None if self.arms is None else list(self.arms)
        filters = queue_filters(self.npc, None, self.category, None, self.conversation, arms=arms)
        preview = self.memory.approve_all(
            filters, confirm=False, by=self.by, sample_size=sample_size, session=None
        )
        assert isinstance(preview, ApproveAllPreview)
        return preview

    @_locked
    def approve_previewed(self, preview: ApproveAllPreview) -> DecisionResult:
        """Approve exactly what ``preview`` showed, as one batch (flagged never included)."""
        arms = None if self.arms is None else list(self.arms)
        filters = queue_filters(None, None, None, None, None, list(preview.ids), arms)
        result = self.memory.approve_all(
            filters, confirm=True, by=self.by, sample_size=0, session=self.session_id
        )
        assert isinstance(result, DecisionResult)
        ids = result.memory_ids
        if ids:
            self._record(Decided("approved", f"{len(ids)} candidate(s) as one batch"), ids, None)
        self.reload()
        return result

    @_locked
    def summary(self) -> Summary:
        last = tuple(step.decided for step in reversed(self._steps[-5:]))
        latest = self._outcomes().values()
        spent = [step.spent for step in self._steps if step.spent is not None]
        return Summary(
            tally=self.tally,
            decided=self.decided,
            remaining=self.remaining,
            seconds=self.clock() - self._started,
            seconds_per_card=statistics.median(spent) if spent else None,
            last=last,
            store_path=str(self.memory.store_path),
            filters=self.filters,
            other_wordings=count_other_wordings(latest),
        )

    @property
    def filters(self) -> str:
        """What this review is limited to, in words ("" when it covers the whole queue)."""
        named = {"npc": self.npc, "category": self.category, "conversation": self.conversation}
        return ", ".join(f"{name}={value}" for name, value in named.items() if value)

    # -- helpers -------------------------------------------------------------------------

    def _record(
        self,
        decided: Decided,
        memory_ids: list[str],
        spent: float | None,
        *,
        event: tuple[str, int] | None = None,
        row: dict[str, Any] | None = None,
    ) -> None:
        self._steps.append(_Step(decided, memory_ids, spent, event, row))
        self._shown_at = self.clock()

    def _nearest(self, row: dict[str, Any]) -> tuple[Nearest, ...]:
        found = self.memory.nearest_approved(
            row["final_text"],
            row["npc"],
            row["team"],
            limit=NEAREST_LIMIT,
            min_similarity=NEAREST_MIN_SIMILARITY,
        )
        return tuple(Nearest(*item) for item in found)


def _restores(step: _Step, result: DecisionResult) -> bool:
    """Whether ``result`` undid exactly ``step``'s card, back to the status it was read
    with: then its row as read is its row again (undo restores every field a decision
    changes, and a decision nobody else changed since is the only kind undo reverts)."""
    if step.row is None or len(result.changes) != 1:
        return False
    memory_id, _, to_status = result.changes[0]
    return memory_id == step.row["id"] and to_status == step.row["status"]
