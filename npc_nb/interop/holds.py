"""Whether the gate takes an approval another tool recorded, or holds it for review.

An approval recorded elsewhere is taken only for a text that passes every check a live
candidate meets here: the text checks (control characters, invalid Unicode, length),
the instruction-like flags, and the *target* project's tombstones (an exact repeat or
the matcher's "same", as ``MemoryCore.screen`` judges it, guards included). The text
an approval puts into prompts is npcpy's ``final_memory`` when it differs from the
``initial_memory``, so that text is screened on its own: the initial one has been
through ``add_candidate`` already (which refuses it, flags it, or lets a tombstone
suppress it).

A held approval leaves the record's card pending, never approved by the import, with
its reason in the summary's ``held`` list and on the card: an instruction-like text
carries its flag already; any other reason becomes a ``held at import: ...`` flag,
which the card shows as a warning and which keeps approve-all away from it, as any
flag does. An approval of a text this project rejected (the same text, or the same
fact as the matcher judges) is a conflict between two people's decisions: it gets a
pending card of its own, flagged with the reason (``MemoryCore.add_conflicting``),
while the rejection stands and keeps the text out of every prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._foundations.markup import terminal_text
from .._foundations.results import CandidateOutcome
from ..errors import NpcError
from ..memory.core import MemoryCore
from ..memory.proposal import Repeat
from ..store.memories import memory_rows
from ..vocabulary import REJECTED
from .records import ForeignRecord
from .summary import Held, ImportSummary, preview

__all__ = ["HELD_FLAG", "Hold", "approval_hold", "approved_text", "hold", "tombstone_reason"]

#: How a card held at import says so (a flag: shown as a warning, kept from approve-all).
HELD_FLAG = "held at import: {reason}"


@dataclass(frozen=True)
class Hold:
    """Why an approval is not taken, and whether the card needs a flag to show it."""

    reason: str
    flag: bool = True


def approved_text(record: ForeignRecord) -> str | None:
    """The final text an edit recorded, when it differs from the proposed one."""
    final = record.final_text if record.decision == "edit" else None
    return final if final is not None and final.strip() != record.text.strip() else None


def approval_hold(
    core: MemoryCore, record: ForeignRecord, outcome: CandidateOutcome, source: str
) -> Hold | None:
    """Why the approval or edit ``record`` carries is held (None: it is taken). The
    record's proposed text is ``outcome``'s card, queued by ``add_candidate``."""
    if record.decision not in ("approve", "edit"):
        return None
    final = approved_text(record)
    flags, repeat = outcome.flags, None
    if final is not None:
        try:
            candidate, repeat = core.screen(
                final, category=record.category, scope=record.scope, npc=record.npc,
                team=record.team,
            )  # fmt: skip
        except NpcError as exc:
            return Hold(
                f"approved in {source} with a final_memory that is refused here ({exc}); "
                "held for review as first proposed"
            )
        flags = candidate.flags
    if flags:
        how = f"as {terminal_text(preview(final))!r}" if final is not None else "as it reads"
        return Hold(
            f"approved in {source} {how}, but it reads like an instruction to the model "
            f"({', '.join(flags)}); a reviewer decides",
            flag=final is not None,
        )
    if repeat is not None and repeat.status == REJECTED:
        return Hold(tombstone_reason(core, repeat, source, final))
    return None


def tombstone_reason(
    core: MemoryCore, repeat: Repeat, source: str, final: str | None = None
) -> str:
    """Why an approval a tombstone covers is held: the rejected memory, and how it
    matched."""
    try:
        text = str(core.stores.locate(repeat.memory_id, columns="final_text")[1]["final_text"])
    except NpcError:
        text = "(no longer in the store)"
    how = "the same text" if repeat.how == "exact" else "the same fact, as the matcher judges"
    edited = f" as {terminal_text(preview(final))!r}" if final is not None else ""
    return (
        f"approved in {source}{edited}, but this project rejected {how} (memory "
        f"{repeat.memory_id}: {terminal_text(preview(text))!r}); the rejection stands"
    )


def hold(
    core: MemoryCore,
    summary: ImportSummary,
    record: ForeignRecord,
    memory_id: str,
    reason: Hold,
) -> None:
    """List ``record`` as held, and put the reason on its card when it needs a flag."""
    summary.held.append(Held(record.position, memory_id, preview(record.text), reason.reason))
    if reason.flag:
        store, _ = core.stores.locate(memory_id, columns="id")
        with store.write() as con:
            flag = HELD_FLAG.format(reason=reason.reason)
            memory_rows.add_flags(store, con, memory_id, [flag])
