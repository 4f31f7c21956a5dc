"""What changed between two states of the memory (``nb.diff(a, b)``, ``%npc_diff``).

Each state is a moment per store (a snapshot's, a time's, or now). The approved
memories of both are compared by id: a memory approved only at ``b`` was **added**,
one approved only at ``a`` was **removed**, one approved at both with another text or
validity window was **changed**; a revision (an edit of an approved memory, a
supersede, an approved update) is one change, the new version replacing the old. The
``reason`` comes from the audit event that did it, the last one of that memory between
the two states: added by an approval, an edit, an undo of a rejection, a validity
window opened; removed as rejected, superseded, undone or expired (a window closed: by
a decision, or because its time passed, in which case no event did it).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._foundations.tables import Kind, with_missing_as_na
from ..store import Store
from ..store.memories.history import approved_rows_at, events_between
from ..store.memories.predicates import Moment

__all__ = ["DIFF_KINDS", "diff_frame"]

#: The columns of a diff and their kinds (``_foundations.tables``).
DIFF_KINDS: dict[str, Kind] = {
    "change": "text",
    "reason": "text",
    "memory_id": "text",
    "replaces": "text",
    "npc": "text",
    "scope": "text",
    "category": "text",
    "text_before": "text",
    "text_after": "text",
    "action": "text",
    "decided_by": "text",
    "decided_at": "time",
    "event_seq": "int",
}
_ADDED = {
    "approve": "approved",
    "approve_all": "approved",
    "edit": "edited",
    "undo": "undone",
    "set_validity": "became valid",
    "supersede": "revised",
}
_REMOVED = {
    "reject": "rejected",
    "supersede": "superseded",
    "undo": "undone",
    "set_validity": "expired",
    "edit": "superseded",
}


def diff_frame(parts: list[tuple[Store, Moment | None, Moment | None]]) -> pd.DataFrame:
    """The changes from each store's first moment to its second, one row each."""
    found: list[dict[str, Any]] = []
    for store, earlier, later in parts:
        with store.read() as con:
            before = {row["id"]: row for row in approved_rows_at(con, earlier)}
            after = {row["id"]: row for row in approved_rows_at(con, later)}
            changed = [i for i in before.keys() & after.keys() if _differs(before[i], after[i])]
            touched = sorted((before.keys() ^ after.keys()) | set(changed))
            last = {e["memory_id"]: e for e in events_between(con, earlier, later, touched)}
        found += _changes(before, after, changed, last)
    found.sort(key=lambda row: (row["event_seq"] is None, row["event_seq"] or 0, row["memory_id"]))
    return with_missing_as_na(pd.DataFrame(found, columns=list(DIFF_KINDS)), DIFF_KINDS)


def _differs(old: dict, new: dict) -> bool:
    return any(old[k] != new[k] for k in ("final_text", "valid_from", "valid_to"))


def _changes(
    before: dict[str, dict], after: dict[str, dict], changed: list[str], last: dict[str, dict]
) -> list[dict[str, Any]]:
    added = [i for i in after if i not in before]
    removed = {i for i in before if i not in after}
    rows = []
    for memory_id in added:
        new = after[memory_id]
        replaced = new["supersedes"] or new["updates"]  # a revision, an approved update
        old_id = replaced if replaced in removed else None
        if old_id is not None:
            removed.discard(old_id)
            rows.append(_row("changed", "edited", new, before[old_id], last.get(memory_id)))
            rows[-1]["replaces"] = old_id
        else:
            event = last.get(memory_id)
            reason = _ADDED.get(event["action"], event["action"]) if event else "became valid"
            rows.append(_row("added", reason, new, None, event))
    for memory_id in sorted(removed):
        event = last.get(memory_id)
        reason = _REMOVED.get(event["action"], event["action"]) if event else "expired"
        rows.append(_row("removed", reason, None, before[memory_id], event))
    for memory_id in changed:
        event = last.get(memory_id)
        new, old = after[memory_id], before[memory_id]
        reason = "edited" if new["final_text"] != old["final_text"] else "validity changed"
        rows.append(_row("changed", reason, new, old, event))
    return rows


def _row(
    change: str, reason: str, new: dict | None, old: dict | None, event: dict | None
) -> dict[str, Any]:
    shown = new if new is not None else old
    assert shown is not None  # a change has a version on at least one side
    return {
        "change": change,
        "reason": reason,
        "memory_id": shown["id"],
        "replaces": None,
        "npc": shown["npc"],
        "scope": shown["scope"],
        "category": shown["category"],
        "text_before": old["final_text"] if old is not None else None,
        "text_after": new["final_text"] if new is not None else None,
        "action": event["action"] if event else None,
        "decided_by": event["actor"] if event else None,
        "decided_at": event["occurred_at"] if event else None,
        "event_seq": event["seq"] if event else None,
    }
