"""Verification of the history (``nb.verify()``, ``npc-nb verify``): everything a reader
can recompute, recomputed, and every problem named in words.

Three checks, per store (the project's, and the user's when there is one): each hash
chain (``memory_events``, ``votes``, ``model_recordings``: ``store.chain``) recomputed
from its first row, its first broken link named; every memory's row held against its
newest audit event (a status or an approved text that no decision set); and every
snapshot's hash recomputed from the audit log. A chain holds only against edits made
after a row was written: a hash chain without a secret or an outside anchor cannot
tell a history rewritten from its first row on, so a lab that must rule that out
keeps the newest link of each chain somewhere else (docs/reproducibility.md).

A pinned read (``snapshots``) checks its snapshot's hash itself, and names the memory
that changed the same way.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..errors import StoreError
from ..store import Store, Stores
from ..store.chain import CHAINED, first_break
from ..store.memories.consistency import describe, disagreeing_memories
from .snapshots import Snapshots

__all__ = ["Verification", "verify"]


@dataclass(frozen=True)
class Verification:
    """What ``nb.verify()`` found: ``ok`` when every check held, ``problems`` in words
    (the first broken link of each chain, each memory that disagrees with its events,
    each snapshot whose hash no longer matches), ``checked`` what was looked at."""

    ok: bool
    problems: tuple[str, ...]
    checked: tuple[str, ...]

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        looked = "; ".join(self.checked)
        if self.ok:
            return f"History verified: every check held ({looked})."
        found = "\n".join(f"- {problem}" for problem in self.problems)
        return (
            f"History BROKEN: {len(self.problems)} problem(s) found ({looked}):\n{found}\n"
            "Something changed these rows after npc_nb wrote them (SQL on the store, or a "
            "copied file). Restore the store from a copy you trust."
        )

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<pre>{html.escape(str(self))}</pre>"}


def verify(stores: Stores, snapshots: Snapshots) -> Verification:
    """Recompute every chain, memory and snapshot of ``stores`` (see the module)."""
    problems: list[str] = []
    checked: list[str] = []
    for name, store in zip(("project", "user"), stores.existing(), strict=False):
        with store.read() as con:
            for table in _readable_chains(store):
                broken = first_break(con, table)
                if broken is not None:
                    problems.append(f"{name} store: {broken}")
            problems += [f"{name} store: {describe(r)}" for r in disagreeing_memories(con)]
        chains = _readable_chains(store)
        checked.append(f"{name} store: {len(chains)} chains and every memory")
        if len(chains) < len(CHAINED):
            checked.append(
                f"{name} store: the votes' chain is checked by the project's owner only "
                "(row-level security hides open votes from other roles)"
            )
    problems += _snapshot_problems(snapshots, checked)
    return Verification(not problems, tuple(problems), tuple(checked))


def _readable_chains(store: Store) -> tuple[str, ...]:
    """The chains this connection reads whole: on PostgreSQL a role that does not own
    the project reads only some votes, so it checks the other chains."""
    if store.writes_on_server and not store.owns_project:
        return tuple(table for table in CHAINED if table != "votes")
    return tuple(CHAINED)


def _snapshot_problems(snapshots: Snapshots, checked: list[str]) -> list[str]:
    problems, unreadable = [], 0
    every = snapshots.all()
    for snapshot in every:
        try:
            recomputed = snapshots.recomputed_hash(snapshot)
        except StoreError:  # a merged bundle's snapshot that cannot be read here
            unreadable += 1
            continue
        if recomputed != snapshot.hash:
            taken = f"{snapshot.taken_at:%Y-%m-%d %H:%M:%S} UTC"
            problems.append(
                f"snapshot {snapshot.label or snapshot.id!r} (taken {taken}): the memories "
                "approved then no longer hash to its hash "
                f"{snapshot.hash[:12]}...: the past it records was changed."
            )
    skipped = f", {unreadable} a merge could not place skipped" if unreadable else ""
    checked.append(f"{len(every)} snapshot(s){skipped}")
    return problems
