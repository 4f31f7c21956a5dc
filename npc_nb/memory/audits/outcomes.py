"""What the sampled cards' decisions say: which are decided, and which are errors.

An error is a sampled card the reviewers did not take as proposed: rejected, edited (or
approved in another wording: its text changed), superseded, or split (a wording put
back off it since the audit began), or approved in a batch (an approve-all, or another
audit's batch approval: nobody judged it on its own, so it cannot count as correct).
Approved unchanged, on its own, is correct. Deferred or skipped
is not decided yet. Key design choice: the outcome is read from the card's state now,
whichever front end decided it (the panel, the CLI, ``nb.approve``, an adjudication),
so an undo puts the card back to undecided and nothing about a look is ever stored
that the memories do not show; in independent review a card changes status only when
its votes settle, so its outcome is its settled outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ...store import Store
from ...store.memories import events, memory_rows, reproposal_rows
from ...vocabulary import OPEN_STATUSES

__all__ = ["Tally", "tally"]

_COLUMNS = "id, status, initial_text, final_text"


@dataclass(frozen=True)
class Tally:
    """The sampled cards of one look: how many, which are still undecided (in sample
    order), and how many of the decided ones are errors."""

    sample: int
    undecided: tuple[str, ...]
    errors: int

    @property
    def reviewed(self) -> int:
        return self.sample - len(self.undecided)

    @property
    def complete(self) -> bool:
        return not self.undecided


def tally(store: Store, sampled: list[str], since: datetime) -> Tally:
    """The outcomes of ``sampled`` (ids in sample order) as they stand now; ``since``:
    when the audit began (a split counts from then)."""
    rows = {row["id"]: row for row in _rows(store, sampled)}
    split = reproposal_rows.split_since(store, sampled, since)
    undecided = tuple(i for i in sampled if i not in rows or rows[i]["status"] in OPEN_STATUSES)
    decided = [i for i in sampled if i in rows and i not in undecided]
    unjudged = events.batch_approved(store, decided)
    errors = sum(1 for i in decided if i in unjudged or _is_error(rows[i], i in split))
    return Tally(len(sampled), undecided, errors)


def _is_error(row: dict, split: bool) -> bool:
    if split or row["status"] in ("human-rejected", "human-edited", "superseded"):
        return True
    return row["final_text"] != row["initial_text"]


def _rows(store: Store, ids: list[str]) -> list[dict]:
    return memory_rows.rows_with(store, ids, _COLUMNS)
