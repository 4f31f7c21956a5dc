"""The closed vocabularies: statuses, decisions, categories, scopes, review modes.

They are enforced twice, here and by CHECK constraints in the store's schema, which is
built from these same tuples so the two can never drift apart. Statuses are never taken
from a caller: public APIs take a decision and the review engine maps it to a status.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "APPROVED_STATUSES",
    "CATEGORIES",
    "DECISIONS",
    "EVENT_ACTIONS",
    "IMPORT_OUTCOMES",
    "IMPORT_SOURCES",
    "OPEN_STATUSES",
    "REVIEW_MODES",
    "SCOPES",
    "SCOPE_RANK",
    "STATUSES",
    "VOTE_ACTIONS",
    "VOTE_DECISIONS",
]

PENDING: Final = "pending_approval"
DEFERRED: Final = "deferred"
APPROVED: Final = "human-approved"
EDITED: Final = "human-edited"
REJECTED: Final = "human-rejected"
SUPERSEDED: Final = "superseded"

STATUSES: Final = (PENDING, DEFERRED, APPROVED, EDITED, REJECTED, SUPERSEDED)
#: A memory in one of these may reach a prompt (if also current and valid).
APPROVED_STATUSES: Final = (APPROVED, EDITED)
#: A memory in one of these still waits for a reviewer.
OPEN_STATUSES: Final = (PENDING, DEFERRED)

DECISIONS: Final = ("approve", "reject", "edit", "skip", "defer")

#: How a card is reviewed: by one reviewer whose decision is final, or by several who
#: vote independently (blind), the card final on their agreement or an adjudication.
REVIEW_MODES: Final = ("single", "independent")
#: What a vote can say in independent review (a skip is not a vote).
VOTE_DECISIONS: Final = ("approve", "edit", "reject", "defer")
#: Audit actions of independent review: a vote cast, a vote that replaced the voter's
#: earlier one, a vote withdrawn (undo), the agreed decision applied, an adjudication.
VOTE_ACTIONS: Final = ("vote", "replace_vote", "withdraw_vote", "agree", "adjudicate")

#: Audit actions: the decisions, plus what the system, revisions and votes record.
EVENT_ACTIONS: Final = (
    *DECISIONS,
    "approve_all",
    "undo",
    "propose",
    "supersede",
    "set_validity",
    *VOTE_ACTIONS,
)

CATEGORIES: Final = ("decision", "preference", "commitment", "constraint", "open_loop", "fact")

SCOPES: Final = ("npc", "team", "project", "global")
#: Most specific first: the order a read walks and the context block is laid out in.
SCOPE_RANK: Final = {scope: rank for rank, scope in enumerate(SCOPES)}

#: The other tools whose memories npc_nb imports (``npc_nb.interop``).
IMPORT_SOURCES: Final = ("npcpy", "mem0", "letta")
#: What became of an imported record: a new card (``queued``), an automatic outcome of
#: the matcher, or the decision the source recorded (or ``trust=True`` made).
IMPORT_OUTCOMES: Final = (
    "queued",
    "merged",
    "suppressed",
    "reinforced",
    "approved",
    "edited",
    "rejected",
)
