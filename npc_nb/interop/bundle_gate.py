"""A bundle's memories through the gate: what a load takes as the bundle says, and what
it leaves for review.

A bundle is a lossless copy, so its rows are written as they are; but an approval in
it is another project's, and it reaches this project's prompts only if its text passes
what a live candidate here meets (``MemoryCore.screen``): the text checks, the
instruction-like flags (a flag the bundle's row does not show was never shown to the
person who approved it), and this project's tombstones (an exact repeat or the
matcher's "same" of a rejected memory). An approved memory that fails is written, then
put back in the review queue with its reason (``store.bundle.decided.reopen``).

Merged into a project that holds rows (``into_nonempty=True``), a memory the project
already has keeps the project's row and audit trail (``without_kept``): where the two
disagree (the target rejected what the bundle approved, or decided it otherwise), the
target's decision stands and the conflict is listed. Every hold is a ``Held`` entry
of the import's summary (``BundleImport.held``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._foundations.markup import terminal_text
from ..errors import NpcError
from ..memory.core import MemoryCore
from ..store.bundle.decided import incoming_memories
from ..store.memories import memory_rows
from ..vocabulary import APPROVED_STATUSES, REJECTED
from .holds import tombstone_reason
from .summary import Held, preview

__all__ = ["SOURCE", "Screened", "screen_bundle"]

#: How the audit log names a bundle's hold (the actor of its ``propose`` event).
SOURCE = "imported:bundle"


@dataclass
class Screened:
    """What the load must do beyond writing rows: the memories already here whose
    trail it keeps (``kept``), the incoming ones it re-opens ({id: reason}), and the
    summary's list of both."""

    kept: set[str] = field(default_factory=set)
    reopen: dict[str, str] = field(default_factory=dict)
    held: list[Held] = field(default_factory=list)


def screen_bundle(core: MemoryCore, staged: Path, *, merge: bool) -> Screened:
    """Screen the staged memories against this project (see the module docstring)."""
    incoming = incoming_memories(staged)
    here: dict[str, dict[str, Any]] = {}
    if merge:
        found = memory_rows.rows_by_id(core.stores.project, [m["id"] for m in incoming])
        here = {row["id"]: row for row in found}
    screened = Screened()
    for memory in incoming:
        ours = here.get(memory["id"])
        if ours is not None:
            screened.kept.add(memory["id"])
            if (ours["status"], ours["final_text"]) != (memory["status"], memory["final_text"]):
                screened.held.append(_entry(memory, _decided_otherwise(memory, ours)))
        elif memory["status"] in APPROVED_STATUSES and memory["experiment_arm"] is None:
            reason = _approval_hold(core, memory)
            if reason is not None:
                screened.reopen[memory["id"]] = reason
                screened.held.append(_entry(memory, reason))
    return screened


def _entry(memory: dict[str, Any], reason: str) -> Held:
    return Held("bundle memory", memory["id"], terminal_text(preview(memory["final_text"])), reason)


def _decided_otherwise(memory: dict[str, Any], ours: dict[str, Any]) -> str:
    theirs = f"{memory['status']} {terminal_text(preview(memory['final_text']))!r}"
    here = f"{ours['status']} {terminal_text(preview(ours['final_text']))!r}"
    return (
        f"the bundle has it {theirs}, this project {here}: this project's decision and "
        "audit trail stand"
    )


def _approval_hold(core: MemoryCore, memory: dict[str, Any]) -> str | None:
    """Why an incoming approval is not taken (None: it is)."""
    fields = {k: memory[k] for k in ("category", "scope", "npc", "team")}
    try:
        candidate, repeat = core.screen(memory["final_text"], **fields)
    except NpcError as exc:
        return f"approved in the bundle, but its text is refused here ({exc})"
    unseen = [flag for flag in candidate.flags if flag not in (memory["flags"] or ())]
    if unseen:
        return (
            f"approved in the bundle, but it reads like an instruction to the model "
            f"({', '.join(unseen)}) and the bundle showed no such warning; a reviewer decides"
        )
    if repeat is not None and repeat.status == REJECTED:
        return tombstone_reason(core, repeat, "the bundle")
    return None
