"""Independent review: votes, their agreement, and adjudication (``review_mode``).

``policy`` (pure: whether votes agree, where a card stands, which cards a reviewer's
queue or the adjudication queue lists), ``engine`` (a vote, an agreement or an
adjudication written with its audit events in one transaction under the memory's lock),
``undo`` (a vote withdrawn while its round collects votes, an adjudication reverted),
``intent`` (what a decision is meant as, a vote or an adjudication, and the
refusal of one whose card moved on meanwhile), ``desk`` (``VoteDesk``: what the
memory core holds, reading the settings at every use) and ``access`` (``nb.access``:
the project's review policy and, on a shared store, the database roles' grants).

Part of the memory core: it may import the store's seam, the memory core's other
modules and the foundations.
"""

from .desk import VoteDesk
from .intent import check_intent
from .policy import CardVotes, Policy, QueueView, agree, card_votes

__all__ = ["CardVotes", "Policy", "QueueView", "VoteDesk", "agree", "card_votes", "check_intent"]
