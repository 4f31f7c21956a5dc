"""The transition table: what a decision would do to a memory, before anything is written.

Callers name a decision; this module alone maps it to a status. A decision that does
not apply (approving a rejected memory without ``reconsider=True``, skipping an approved
one) raises DecisionError here, so nothing is written. A planned ``Change`` carries the
fields to update; ``review`` writes it together with its audit event.

Undo is planned like any decision: it restores the state recorded on the event it
reverts (``state_before``, serialised by ``dump_state``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from rapidfuzz.distance import Levenshtein

from .._foundations.ids import new_id
from .._foundations.terms import content_terms, joined_terms
from .._foundations.text import content_hash, normalise
from .._foundations.utc import to_utc
from ..decisions import UNCHANGED
from ..errors import DecisionError, InvalidValueError
from ..vocabulary import (
    APPROVED,
    APPROVED_STATUSES,
    DEFERRED,
    EDITED,
    OPEN_STATUSES,
    REJECTED,
    SUPERSEDED,
)
from .lookup.embedding import blob

__all__ = [
    "MUTABLE",
    "UNCHANGED",
    "UNDOABLE",
    "VOTE_UNDOABLE",
    "Change",
    "dump_state",
    "plan",
    "plan_replaced",
    "plan_supersede",
    "plan_undo",
]

#: Fields a decision may change; their prior values are kept on the event for undo.
MUTABLE = (
    "status",
    "final_text",
    "final_hash",
    "norm_text",
    "decided_at",
    "decided_by",
    "defer_until",
    "skipped_at",
    "valid_from",
    "valid_to",
    "superseded_by",
    "superseded_at",
    "supersedes",
    "text_change",
    "match_text",
)
#: What matching recorded of a candidate: not carried over to a version a person wrote.
_MATCHING_RECORD = ("matcher", "verdict", "match_neighbours", "match_calls", "match_tokens",
                    "match_ms")  # fmt: skip
_TIMES = {"decided_at", "defer_until", "skipped_at", "valid_from", "valid_to", "superseded_at"}
UNDOABLE = (
    "approve",
    "reject",
    "edit",
    "skip",
    "defer",
    "approve_all",
    "supersede",
    "set_validity",
    "vote",
    "replace_vote",
    "adjudicate",
)
#: The undoable actions of independent review: undone by the vote engine (``votes``),
#: which also puts the card's votes back as they were.
VOTE_UNDOABLE = ("vote", "replace_vote", "adjudicate")
DEFAULT_DEFER = timedelta(days=1)


@dataclass
class Change:
    """One planned update of one memory, with the audit event that explains it."""

    memory: dict
    action: str
    changes: dict[str, Any]
    reason: str | None = None
    new_row: dict | None = None  # set when the decision creates a memory (supersede)
    undoes: int | None = None
    wording: str | None = None  # an approval of a card's other wording: its re-proposal id
    vote_id: str | None = None  # the vote an adjudication picked (independent review)

    @property
    def to_status(self) -> str:
        return self.changes.get("status", self.memory["status"])


def plan(decision: str, memory: dict, *, actor: str, now: datetime, **args: Any) -> Change:
    """Check a decision against the memory's status and say what it would change."""
    status = memory["status"]
    if status == SUPERSEDED:
        raise DecisionError(
            f"Memory {memory['id']} was superseded by {memory['superseded_by']}; "
            "decide on the current version instead."
        )
    planner = _PLANNERS.get(decision)
    if planner is None:
        raise DecisionError(f"{decision!r} cannot be planned here.")
    return planner(memory, actor=actor, now=now, **args)


def _decided(actor: str, now: datetime, status: str) -> dict[str, Any]:
    return {"status": status, "decided_at": now, "decided_by": actor, "defer_until": None}


def _plan_approve(
    memory: dict,
    *,
    actor: str,
    now: datetime,
    reconsider: bool = False,
    action: str = "approve",
    text: str | None = None,
    wording: str | None = None,
    reason: str | None = None,
    **_: Any,
) -> Change:
    """Approve as the card reads, or (``wording``, ``text``) with another wording the
    model proposed for it: an approval of that wording, not an edit by the reviewer.
    ``reason`` says why, when it was not a review of this card (a promotion)."""
    _require_open(memory, "approve", reconsider)
    changes = _decided(actor, now, APPROVED)
    if text is not None and text != memory["final_text"]:
        changes |= _text_fields(text, memory["initial_text"])
    return Change(memory, action, changes, reason=reason, wording=wording)


def _plan_reject(
    memory: dict, *, actor: str, now: datetime, reason: str | None = None, **_: Any
) -> Change:
    if memory["status"] == REJECTED:
        raise DecisionError(f"Memory {memory['id']} is already rejected.")
    # Rejecting an approved memory retracts it: it leaves every prompt and becomes a tombstone.
    return Change(memory, "reject", _decided(actor, now, REJECTED), reason=reason)


def _plan_edit(
    memory: dict, *, actor: str, now: datetime, text: str, reconsider: bool = False, **_: Any
) -> Change:
    if memory["status"] in APPROVED_STATUSES:
        if text == memory["final_text"]:
            raise DecisionError(
                f"Memory {memory['id']} already says exactly that; nothing to change."
            )
        return plan_supersede(memory, text, actor=actor, now=now)
    _require_open(memory, "edit", reconsider)
    if text == memory["final_text"]:
        return _plan_approve(memory, actor=actor, now=now, reconsider=reconsider)
    changes = _decided(actor, now, EDITED) | _text_fields(text, memory["initial_text"])
    return Change(memory, "edit", changes)


def _plan_skip(memory: dict, *, now: datetime, **_: Any) -> Change:
    _require_open(memory, "skip", False)
    return Change(memory, "skip", {"skipped_at": now})


def _plan_defer(memory: dict, *, now: datetime, until: datetime | None = None, **_: Any) -> Change:
    _require_open(memory, "defer", False)
    when = _time(until, "until") if until is not None else now + DEFAULT_DEFER
    return Change(memory, "defer", {"status": DEFERRED, "defer_until": when})


#: set_validity's default: leave that bound as it is (None clears it).


def _plan_validity(
    memory: dict, *, valid_from: Any = UNCHANGED, valid_to: Any = UNCHANGED, **_: Any
) -> Change:
    start = _moment(valid_from, memory["valid_from"], "valid_from")
    end = _moment(valid_to, memory["valid_to"], "valid_to")
    if start is not None and end is not None and start >= end:
        raise DecisionError(f"valid_from ({start}) must be before valid_to ({end}).")
    return Change(memory, "set_validity", {"valid_from": start, "valid_to": end})


def _moment(value: Any, current: datetime | None, name: str) -> datetime | None:
    if value is UNCHANGED:
        return current
    if value is None:
        return None
    return _time(value, name)


def _time(value: Any, name: str) -> datetime:
    try:
        return to_utc(value, name=name)
    except ValueError:
        raise InvalidValueError(name, value, "a datetime, a date or an ISO 8601 string") from None


_PLANNERS = {
    "approve": _plan_approve,
    "reject": _plan_reject,
    "edit": _plan_edit,
    "skip": _plan_skip,
    "defer": _plan_defer,
    "set_validity": _plan_validity,
}


def _require_open(memory: dict, decision: str, reconsider: bool) -> None:
    status = memory["status"]
    if status in OPEN_STATUSES or (status == REJECTED and reconsider):
        return
    if status == REJECTED:
        if decision in ("approve", "edit"):
            raise DecisionError(
                f"Memory {memory['id']} was rejected; to {decision} it anyway, say so with "
                f"{decision}(..., reconsider=True)."
            )
        raise DecisionError(
            f"Memory {memory['id']} was rejected; {decision} applies to pending or deferred "
            "candidates. Use approve(..., reconsider=True) to change your mind."
        )
    raise DecisionError(
        f"Memory {memory['id']} is already {status}; {decision} applies to pending or "
        "deferred candidates. To change an approved memory, edit or supersede it."
    )


def _text_fields(text: str, initial: str) -> dict[str, Any]:
    return {
        "final_text": text,
        "final_hash": content_hash(text),
        "norm_text": normalise(text),
        "text_change": text_change(initial, text),
        "match_text": joined_terms(content_terms(initial) | content_terms(text)),
    }


def text_change(initial: str, final: str) -> float:
    """Character-level Levenshtein distance over the longer length: 0 same, 1 all new."""
    return float(Levenshtein.normalized_distance(initial, final))


def plan_supersede(memory: dict, text: str, *, actor: str, now: datetime) -> Change:
    """Replace an approved memory with a new approved version; keep and link both."""
    if memory["status"] not in APPROVED_STATUSES:
        raise DecisionError(
            f"Memory {memory['id']} is {memory['status']}; only an approved memory can be "
            "superseded. Use edit() on a pending candidate."
        )
    new_id_ = new_id()
    new_row = (
        {k: v for k, v in memory.items() if k not in ("id", "flags", "insert_seq")}
        | {
            "id": new_id_,
            "flags": list(memory["flags"] or ()),
            "initial_text": memory["final_text"],
            "initial_hash": memory["final_hash"],
            "recorded_at": now,
            "supersedes": memory["id"],
            "superseded_by": None,
            "superseded_at": None,
            "skipped_at": None,
            "updates": None,
            "differs": None,
            "match_error": None,
        }
        | dict.fromkeys(_MATCHING_RECORD)
        | {"match_vector": blob(text)}
        | _decided(actor, now, EDITED)
        | _text_fields(text, memory["final_text"])
    )
    changes = {"status": SUPERSEDED, "superseded_by": new_id_, "superseded_at": now}
    return Change(memory, "supersede", changes, new_row=new_row)


def plan_replaced(old: dict, new_id_: str, *, now: datetime) -> Change:
    """The approved memory an approved update replaces: superseded by it, in the same
    batch as the approval (so undo restores both)."""
    if old["status"] not in APPROVED_STATUSES or old["superseded_by"] is not None:
        raise DecisionError(
            f"Memory {old['id']} is {old['status']} now; the update no longer replaces it."
        )
    changes = {"status": SUPERSEDED, "superseded_by": new_id_, "superseded_at": now}
    return Change(old, "supersede", changes)


def plan_undo(event: dict, memory: dict | None, *, now: datetime, changed_since: bool) -> Change:
    """The change that restores ``memory`` to its state before ``event``.

    Refused when anything has happened to the memory since that was not itself undone
    (another reviewer's decision, a validity change): restoring the old state would
    silently erase it. A memory that is gone (removed by ``--write`` SQL) cannot be.
    """
    if memory is None:
        raise DecisionError(f"Cannot undo {event['action']}: memory {event['memory_id']} is gone.")
    if (
        changed_since
        or memory["status"] != event["to_status"]
        or memory["final_text"] != event["text_after"]
    ):
        raise DecisionError(
            f"Cannot undo {event['action']} of memory {memory['id']}: it has changed since "
            f"(now {memory['status']}). Decide on it again instead."
        )
    if event["state_before"] is None:  # the decision created this memory: withdraw it
        changes = {
            "status": SUPERSEDED,
            "superseded_by": memory["supersedes"],
            "superseded_at": now,
        }
    else:
        changes = load_state(event["state_before"])
    return Change(memory, "undo", changes, undoes=event["seq"])


def dump_state(memory: dict) -> str:
    state = {k: memory[k] for k in MUTABLE}
    return json.dumps(
        {k: v.isoformat() if isinstance(v, datetime) else v for k, v in state.items()}
    )


def load_state(raw: str) -> dict[str, Any]:
    state = json.loads(raw)
    if "match_terms" in state:  # recorded before m013, when the terms were a list
        state.setdefault("match_text", joined_terms(state.pop("match_terms") or ()))
    return {k: datetime.fromisoformat(v) if k in _TIMES and v else v for k, v in state.items()}
