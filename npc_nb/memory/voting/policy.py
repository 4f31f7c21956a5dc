"""The policy of independent review, as pure functions of a card's votes: whether they
agree, and where a card stands (still voting, waiting for adjudication).

Nothing here reads the store or knows what anybody voted beyond what a queue may use:
``CardVotes`` holds a count and the voters' names, never a decision or a text, so a
reviewer's queue built from it can show "1 of 2 votes" and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CardVotes", "Policy", "QueueView", "agree", "card_votes", "voter_key"]


@dataclass(frozen=True)
class Policy:
    """How many votes a card needs, and whether a voter may adjudicate it."""

    needed: int
    allow_self: bool = False


@dataclass(frozen=True)
class CardVotes:
    """Where a card's open round stands: how many active votes, by whom, and whether
    they agree. Counts and names only: what anybody voted is not here."""

    count: int
    voters: frozenset[str]
    agreeing: bool

    def state(self, needed: int) -> str:
        """``voting`` (fewer votes than needed), ``adjudication`` (enough, and they
        disagree) or ``agreed`` (enough and agreeing, the card still open: only when the
        setting was lowered since; the next vote applies it)."""
        if self.count < needed:
            return "voting"
        return "agreed" if self.agreeing else "adjudication"


def voter_key(vote: dict) -> str:
    """Who cast a vote, as the same-voter rules compare: its ``reviewer_role`` (the
    connected role on PostgreSQL, the reviewer's name on a file), else, for a vote
    recorded before roles were, its reviewer's name."""
    return vote.get("reviewer_role") or vote["reviewer"]


def agree(ballots: Sequence[dict]) -> bool:
    """Whether votes agree: one decision, and for approve and edit one normalised text
    (``final_hash``). Several defers agree whatever their dates."""
    decisions = {ballot["decision"] for ballot in ballots}
    if len(decisions) != 1:
        return False
    if decisions & {"approve", "edit"}:
        return len({ballot["final_hash"] for ballot in ballots}) == 1
    return True


def card_votes(ballots: Sequence[dict]) -> dict[str, CardVotes]:
    """{memory id: its open round's standing} from ``vote_rows.open_ballots`` rows."""
    grouped: dict[str, list[dict]] = {}
    for ballot in ballots:
        grouped.setdefault(ballot["memory_id"], []).append(ballot)
    return {
        memory_id: CardVotes(len(found), frozenset(voter_key(b) for b in found), agree(found))
        for memory_id, found in grouped.items()
    }


@dataclass(frozen=True)
class QueueView:
    """Which open cards a queue shows in independent review: a reviewer's own (the
    cards still collecting votes that ``reviewer`` has not voted on), or with
    ``adjudicate`` the cards waiting for adjudication (those ``reviewer`` voted on left
    out, unless the policy lets voters adjudicate)."""

    reviewer: str | None
    policy: Policy
    adjudicate: bool = False

    def shows(self, standing: CardVotes | None) -> bool:
        """Whether a card whose open round stands so (None: no vote yet) is listed."""
        count = standing.count if standing is not None else 0
        voters = standing.voters if standing is not None else frozenset()
        if self.adjudicate:
            if standing is None or standing.state(self.policy.needed) != "adjudication":
                return False
            return self.policy.allow_self or self.reviewer not in voters
        return count < self.policy.needed and self.reviewer not in voters
