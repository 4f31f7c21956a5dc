"""``VoteDesk``: independent review as the memory core uses it, one per core.

The review policy is the project's stored policy where its owner set one, else the
``review_mode``, ``reviewers_per_card`` and ``allow_self_adjudication`` settings
(``lab_policy``; ``configure`` changes them for the next decision). A decision reads it
once: ``rules()`` gives the vote rules in force (None in single review), and every step
of that decision is handed those rules rather than reading the policy again: whether it
is a vote (``votes_on``), the refusal of one meant as a vote or an adjudication on a card
that moved on (``refuse_moved_on``, ``intent``), the vote or adjudication itself
(``engine``). The desk also builds what the queues filter by (``view``, ``standings``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..._foundations.results import DecisionResult
from ..._foundations.settings import Settings
from ..._foundations.settings.reviewer import Identity
from ..._foundations.utc import utc_now
from ...errors import ConfigError, DecisionError, StoreError
from ...store import Store, Stores
from ...store.memories import policy_rows, vote_rows
from ...vocabulary import OPEN_STATUSES, VOTE_DECISIONS
from ..decisions import VoteUndo
from .engine import Also, adjudicate_vote, cast
from .intent import not_adjudicated, vote_too_late
from .lab_policy import FOLLOWED, ReviewPolicy, as_text, in_force, refuse_local
from .policy import CardVotes, Policy, QueueView, card_votes
from .undo import undo_vote_event

__all__ = ["VoteDesk"]


class VoteDesk:
    """Votes, adjudications and the vote-aware queues of one project's stores."""

    def __init__(self, stores: Stores, settings: Settings, also: Also) -> None:
        self.stores = stores
        self.settings = settings
        self._also = also  # what comes with a final decision (the memory core knows)

    def lab_policy(self) -> ReviewPolicy:
        """The review policy in force (a ConfigError if a local setting disagrees with
        the project's stored policy)."""
        return in_force(self.settings, policy_rows.policy_changes(self.stores.project))

    def set_policy(self, values: dict[str, Any], me: Identity) -> ReviewPolicy:
        """Store ``values`` as the project's policy, as its owner (``me``); this kernel
        follows it from now on."""
        store = self.stores.project
        if not store.owns_project:
            raise StoreError(
                f"{me.role!r} may not set the review policy of this project: only the "
                "project's owner may (the role that owns its schema). Nothing was stored; "
                "ask the owner to run nb.access.set_policy(...) or npc-nb policy --set."
            )
        if not values:
            raise ConfigError(
                "set_policy() needs at least one of review_mode=, reviewers_per_card=, "
                "allow_self_adjudication=."
            )
        texts = as_text(self.settings, values)
        policy_rows.insert_changes(store, texts, at=utc_now(), by=me.name, role=me.role)
        for key in texts:
            setattr(self.settings, key, values[key])
            self.settings.mark_source(key, FOLLOWED)
        return self.lab_policy()

    def refuse_local(self, key: str, value: Any) -> None:
        """Refuse setting ``key`` to ``value`` in this session if the project's policy
        sets it otherwise (``lab_policy``)."""
        latest = {c["key"]: c for c in policy_rows.policy_changes(self.stores.project)}
        if key in latest:
            refuse_local(key, value, "this session", latest[key])

    @property
    def independent(self) -> bool:
        return self.lab_policy().review_mode == "independent"

    def policy(self) -> Policy:
        found = self.lab_policy()
        return Policy(found.reviewers_per_card, found.allow_self_adjudication)

    def rules(self) -> Policy | None:
        """The vote rules in force for one decision, read once (None: single review)."""
        found = self.lab_policy()
        if found.review_mode != "independent":
            return None
        return Policy(found.reviewers_per_card, found.allow_self_adjudication)

    @staticmethod
    def votes_on(rules: Policy | None, decision: str, memory: dict) -> bool:
        """Whether ``decision`` on ``memory`` is a vote under ``rules``: in independent
        review, any decision but a skip on an open card (a final memory is retracted or
        revised by one reviewer, as in single review)."""
        return (
            rules is not None and decision in VOTE_DECISIONS and memory["status"] in OPEN_STATUSES
        )

    def vote(
        self,
        rules: Policy,
        store: Store,
        memory: dict,
        decision: str,
        *,
        voter: str,
        args: dict[str, Any],
        audit: dict[str, Any],
        expect_status: str | None,
        intent: str | None = None,
    ) -> DecisionResult:
        """``voter``'s decision on an open card, as a vote (or an adjudication), as
        ``intent`` allows (``intent``)."""
        return cast(
            store,
            memory["id"],
            decision,
            voter=voter,
            now=utc_now(),
            policy=rules,
            args=args,
            audit=audit,
            expect_status=expect_status,
            also=self._also,
            intent=intent,
        )

    @staticmethod
    def refuse_reconsider(rules: Policy | None, memory: dict, reconsider: bool) -> None:
        """In independent review a rejection is its reviewers' (agreed, or adjudicated):
        one reviewer's ``reconsider=True`` may not overturn it."""
        if not (rules is not None and reconsider and memory["status"] not in OPEN_STATUSES):
            return
        raise DecisionError(
            f"Memory {memory['id']} is {memory['status']} by the review's votes (or an "
            "adjudication), and in independent review one reviewer's reconsider=True may "
            "not overturn them. Nothing was written. The project's owner may reconsider "
            "it in single review (configure(review_mode='single')), which the audit log "
            "records under their name."
        )

    @staticmethod
    def refuse_moved_on(
        rules: Policy | None,
        intent: str | None,
        decision: str,
        memory: dict,
        expected: str | None,
        latest: Callable[[], dict | None],
    ) -> None:
        """Refuse a vote or an adjudication (``intent``) on a card that is no longer open
        or not as shown (``expected``), read before the engine's transaction (which
        checks it again); ``latest``: a function giving its last change. An adjudication
        on a card decided since it was shown is left to ``AlreadyDecidedError``."""
        if not (rules is not None and intent is not None and decision in VOTE_DECISIONS):
            return
        status = memory["status"]
        if status == (expected or status) and status in OPEN_STATUSES:
            return
        if intent == "vote":
            raise vote_too_late(memory["id"], status, latest())
        if expected is None or status == expected:
            raise not_adjudicated(memory["id"], f"is {status} now; nothing was written")

    def adjudicate(
        self,
        memory_id: str,
        number: int,
        *,
        actor: str,
        audit: dict[str, Any],
        expect_status: str | None = None,
    ) -> DecisionResult:
        """Decide a card in adjudication as its vote ``number`` says."""
        store, row = self.stores.locate(memory_id, columns="id")
        return adjudicate_vote(
            store,
            row["id"],
            number,
            actor=actor,
            now=utc_now(),
            policy=self.policy(),
            audit=audit,
            expect_status=expect_status,
            also=self._also,
        )

    def undo_hook(self, actor: str, session: str | None, role: str | None = None) -> VoteUndo:
        """How undo reverts a vote or an adjudication of ``actor``'s (``role``: who is
        recording, for the events' ``reviewer_role``)."""
        return functools.partial(undo_vote_event, actor=actor, session=session, role=role)

    def view(self, reviewer: str, *, adjudicate: bool) -> QueueView | None:
        """What a queue of ``reviewer``'s shows: None (every open card) in single review,
        unless it lists the cards waiting for adjudication."""
        if not (self.independent or adjudicate):
            return None
        return QueueView(reviewer, self.policy(), adjudicate)

    def standings(self, store: Store, memory_ids: list[str] | None = None) -> dict[str, CardVotes]:
        """{memory id: where its open round stands} of the cards of ``store`` with votes."""
        return card_votes(vote_rows.open_ballots(store, memory_ids))

    def open_votes(self, memory_id: str) -> list[dict]:
        """The active votes of the card's open round, oldest first (the numbers an
        adjudication picks by, from 1): who, what, the text, the reason. For the
        adjudicator's card only: a reviewer's queue never reads them."""
        store, row = self.stores.locate(memory_id, columns="id")
        with store.read() as con:
            found = vote_rows.round_votes(con, row["id"])
        return [v for v in found if v["replaced_by"] is None and v["withdrawn_at"] is None]
