"""The closed vocabularies: statuses, decisions, categories, scopes, review modes, and
every other closed set a stored column holds (message roles, job states, match kinds,
policy keys, the experiments' states and outcomes, the audits' steps and exclusions).

They are enforced twice, here and by CHECK constraints in the store's schema, which is
declared from these same tuples (``store.schema.tables``: every CHECK on a closed set
names one of them) so the two can never drift apart. Statuses are never taken
from a caller: public APIs take a decision and the review engine maps it to a status.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "APPROVED_STATUSES",
    "AUDIT_EXCLUSIONS",
    "AUDIT_STEPS",
    "CATEGORIES",
    "DECISIONS",
    "EVENT_ACTIONS",
    "EXPERIMENT_ITEM_OUTCOMES",
    "EXPERIMENT_JOB_STATES",
    "EXPERIMENT_STATES",
    "IMPORT_OUTCOMES",
    "IMPORT_SOURCES",
    "JOB_STATUSES",
    "MATCH_KINDS",
    "MATCH_LABELS",
    "MATCH_TYPES",
    "MESSAGE_ROLES",
    "OPEN_STATUSES",
    "POLICY_KEYS",
    "PROMOTION_OUTCOMES",
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

#: Who wrote a message of a conversation.
MESSAGE_ROLES: Final = ("system", "user", "assistant")
#: What a re-proposal matched: a memory in one of these states.
MATCH_KINDS: Final = ("rejected", "approved", "pending", "superseded")
#: How it matched: the same normalised text, or a near match.
MATCH_TYPES: Final = ("exact", "near")
#: A reviewer's label on an automatic outcome (a split off a card, a requeue).
MATCH_LABELS: Final = ("split", "requeued")
#: An extraction job's state in the durable queue.
JOB_STATUSES: Final = ("queued", "running", "done", "failed", "cancelled")
#: The keys of the lab's review policy (``review_policy``).
POLICY_KEYS: Final = ("review_mode", "reviewers_per_card", "allow_self_adjudication")

#: An extraction experiment's state.
EXPERIMENT_STATES: Final = ("created", "running", "done")
#: The state of an experiment's job (one arm, one exchange).
EXPERIMENT_JOB_STATES: Final = ("queued", "running", "done", "failed")
#: What one item of an arm's extraction became.
EXPERIMENT_ITEM_OUTCOMES: Final = ("queued", "merged", "suppressed", "reinforced")
#: What promotion did with one approved memory of an arm.
PROMOTION_OUTCOMES: Final = ("approved", "approved_card", "reinforced", "tombstoned")

#: What was done with an audited batch (``audit_steps``): a further look at a larger
#: sample, a reviewer's sign-off (independent review), the unsampled rest approved as
#: one batch, or the audit given up (the rest stay in ordinary review).
AUDIT_STEPS: Final = ("extend", "sign_off", "approve_rest", "review_rest")
#: Why an open candidate was kept out of an audit's batch (``audit_members``): it is
#: never batch-approved, so it stays in ordinary review.
AUDIT_EXCLUSIONS: Final = ("flagged", "update", "split", "near_tombstone", "import_conflict")
