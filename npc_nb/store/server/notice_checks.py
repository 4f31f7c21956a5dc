"""Decision notices are hints, never facts: each is checked against the store before a
review or a cache acts on it.

Any role that may ``LISTEN`` on a project's channel may also ``NOTIFY`` on it, so a
notice can be forged ("memory m was approved by alice"). ``NoticeChecks.confirm`` reads
the memories a batch of notices names in one query and hands on, for each memory the
store holds, a notice of what the store shows *now*: its status and who decided it,
never what the payload claimed. A forged notice therefore changes nothing: at most it
makes a review look again at a card that is still what it showed.

A notice of independent review names nobody (notices never carry a voter): it claims
only the status. A notice whose claim the store does not back is counted (``unconfirmed``, shown by
``%npc_status``): the memory does not exist, or it never moved to that status by that
actor. A real notice can be overtaken (approved, then undone before the notice was
read): the memory then shows a later status, and its audit log still holds the claimed
change, so it is not counted; only those mismatches cost a second query.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ...errors import StoreError
from ..notices import ACTOR_LIMIT, DecisionNotice

if TYPE_CHECKING:
    from ..contract import Connection, Store

__all__ = ["NoticeChecks"]

_log = logging.getLogger("npc_nb")
#: Ids bound in one query (a burst of thousands is read in a few queries).
_CHUNK = 1_000


class NoticeChecks:
    """Turns notices into the store's facts, counting those the store does not back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.unconfirmed = 0  # notices whose claim the store did not back
        self.reads = 0  # batches read from the store

    def confirm(self, store: Store, notices: Sequence[DecisionNotice]) -> list[DecisionNotice]:
        """One notice per memory named, as the store shows it now (memories it does not
        hold left out); a notice naming no memory ("reread everything") passes as it is.
        If the store cannot be read, nothing passes: a review whose card was decided
        elsewhere learns it when its own decision on that card is refused."""
        everything = [n for n in notices if n.memory_id is None][:1]
        named = [n for n in notices if n.memory_id is not None]
        if not named:
            return everything
        ids = list(dict.fromkeys(str(n.memory_id) for n in named))
        try:
            shown, unbacked = _check(store, ids, named)
        except StoreError as exc:
            _log.warning("npc_nb: could not check %d decision notice(s): %s", len(named), exc)
            return everything
        with self._lock:
            self.reads += 1
            self.unconfirmed += sum(_claim(n) in unbacked for n in named)
        return everything + [DecisionNotice(i, *shown[i]) for i in ids if i in shown]

    def alerts(self, channel: str) -> list[str]:
        """What ``%npc_status`` says about notices (nothing while all were confirmed)."""
        if not self.unconfirmed:
            return []
        return [
            f"{self.unconfirmed} decision notice(s) the store did not confirm (possible "
            f"spoofing on the notification channel {channel!r}); none of them changed anything."
        ]


_Claim = tuple[str | None, str | None, str | None]


def _check(
    store: Store, ids: list[str], named: list[DecisionNotice]
) -> tuple[dict[str, tuple[str, str | None]], set[_Claim]]:
    """What the store shows of ``ids``, and the claims it does not back."""
    with store.read() as con:
        shown = _decided(con, ids)
        claims = {_claim(n) for n in named}
        unbacked = {c for c in claims if not _backs(shown.get(str(c[0])), c)}
        if unbacked:  # overtaken by a later change? its audit log holds the claimed one
            unbacked -= _recorded(con, sorted({str(c[0]) for c in unbacked}))
    return shown, unbacked


def _backs(shown: tuple[str, str | None] | None, claim: _Claim) -> bool:
    """Whether the store's (status, decided_by) backs a claim; a claim naming nobody
    (a decision of independent review: its notices never carry a voter) claims only
    the status."""
    if shown is None:
        return False
    return shown == claim[1:] if claim[2] is not None else shown[0] == claim[1]


def _claim(notice: DecisionNotice) -> _Claim:
    return (notice.memory_id, notice.status, _cut(notice.actor))


def _decided(con: Connection, ids: list[str]) -> dict[str, tuple[str, str | None]]:
    """{id: (status, decided_by)} of the memories the store holds."""
    found: dict[str, tuple[str, str | None]] = {}
    for chunk in _chunks(ids):
        rows = con.execute(
            f"SELECT id, status, decided_by FROM memories WHERE id IN ({_marks(chunk)})", chunk
        ).fetchall()
        found.update((memory_id, (status, _cut(by))) for memory_id, status, by in rows)
    return found


def _recorded(con: Connection, ids: list[str]) -> set[_Claim]:
    """Every (memory, to status, actor) change the audit log holds for these memories."""
    found: set[_Claim] = set()
    for chunk in _chunks(ids):
        rows = con.execute(
            "SELECT DISTINCT memory_id, to_status, actor FROM memory_events "
            f"WHERE memory_id IN ({_marks(chunk)})",
            chunk,
        ).fetchall()
        found.update((memory_id, status, _cut(actor)) for memory_id, status, actor in rows)
        found.update((memory_id, status, None) for memory_id, status, _ in rows)  # unnamed
    return found


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


def _marks(chunk: list[str]) -> str:
    return ", ".join("?" for _ in chunk)


def _cut(actor: str | None) -> str | None:
    """An actor as a notice carries it (names are cut to fit a payload)."""
    return actor[:ACTOR_LIMIT] if actor else actor
