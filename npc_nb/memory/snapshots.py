"""Snapshots: the memory state at a moment, recorded, found again, and read.

A snapshot is a row, not a copy (``store.runs.snapshot_rows``): the store's time, the
last audit event it includes in the project's store and in the user's, and the hash
of what was approved then. Reading at a snapshot rebuilds the approved memories from
the audit log through the one approval predicate (``predicates.memories_at``): a
decision undone later, a validity window changed or closed since, a supersession, all
resolve as they stood, and validity is read at the snapshot's time, not now. So a
pinned memory block is byte for byte the block of that moment, and its approved set
never changes: it is kept per snapshot and persona, whatever is decided since.

``as_of`` everywhere takes a ``Snapshot``, its id, its label, or a time; ``resolve``
tells which. The hash (``content_hash``) is SHA-256 over one canonical JSON line per
approved memory, ordered by id (docs/reproducibility.md shows the algorithm). A read at
a snapshot recomputes it first and refuses a past that no longer hashes to it (changed
by SQL since), naming the memory that changed (``HistoryChangedError``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import pandas as pd

from .._foundations.arguments import AS_OF_FORMS
from .._foundations.ids import new_id
from .._foundations.results import Snapshot
from .._foundations.tables import Kind, with_missing_as_na
from .._foundations.utc import to_utc
from ..errors import ConfigError, HistoryChangedError, InvalidValueError, StoreError
from ..store import Store, Stores
from ..store.generation import epoch
from ..store.memories.consistency import describe, disagreeing_memories
from ..store.memories.history import approved_rows_at, approved_table_at
from ..store.memories.predicates import Moment, visible_to
from ..store.runs import snapshot_rows
from .ranking import ApprovedSet, priority_key
from .snapshot_hash import content_hash, hash_line, hash_of, line

__all__ = [
    "RESERVED_LABELS",
    "SNAPSHOT_KINDS",
    "Snapshots",
    "State",
    "content_hash",
    "hash_line",
    "project_moment",
]

#: Words ``%npc_pin`` reads as commands, so never a label.
RESERVED_LABELS = ("now", "off")
#: What the ``pin`` setting may be: the ``allowed`` of its InvalidValueError.
PIN_FORMS = "a snapshot's label or id, 'now' (take one) or 'off'"
_MAX_LABEL = 200
_KEPT_SETS = 32
#: A read's state: a snapshot, a time, or now (None).
State = Snapshot | datetime | None
#: The columns of ``nb.snapshots()`` and their kinds (``_foundations.tables``).
SNAPSHOT_KINDS: dict[str, Kind] = {
    "id": "text",
    "label": "text",
    "taken_at": "time",
    "reviewer": "text",
    "memories": "int",
    "hash": "text",
}


class Snapshots:
    """The snapshots of one project's stores, and reads at them."""

    def __init__(self, stores: Stores, actor: Callable[[str | None], str]) -> None:
        self._stores = stores
        self._actor = actor
        self._sets: OrderedDict[tuple, ApprovedSet] = OrderedDict()
        self._found: dict[str, Snapshot] = {}  # by id and label: rows never change
        self._lock = threading.Lock()

    # -- taking and finding --------------------------------------------------------------

    def take(self, label: str | None = None, *, by: str | None = None) -> Snapshot:
        """Record the memory state now (the store's time, and a hash of every approved
        memory): ``as_of=`` and the ``pin`` setting read it back exactly, whatever is
        decided later. ``label`` names it (unique in the project); ``by`` who took it
        (default: you)."""
        label = self._check_label(label)
        actor = self._actor(by)

        def row(moment: Moment, rows: list[dict]) -> dict[str, Any]:
            user_seq, user_rows = self._user_part(moment.clock)
            every = rows + user_rows
            return {
                "id": new_id(),
                "label": label,
                "taken_at": moment.clock,
                "taken_by": actor,
                "event_seq": moment.seq or 0,
                "user_event_seq": user_seq,
                "event_floor": 0,
                "content_hash": content_hash(every),
                "memories": len(every),
            }

        return self._remember(_snapshot(snapshot_rows.take_snapshot(self._stores.project, row)))

    def _user_part(self, clock: datetime) -> tuple[int, list[dict]]:
        """The user's store at a snapshot: its last event and its approved memories."""
        user = self._user()
        if user is None:
            return 0, []
        moment, rows = snapshot_rows.read_watermark(user, clock)
        return moment.seq or 0, rows

    def _user(self) -> Store | None:
        stores = list(self._stores.existing())
        return stores[1] if len(stores) > 1 else None

    def _check_label(self, label: object) -> str | None:
        if label is None:
            return None
        if not isinstance(label, str) or not label.strip() or len(label.strip()) > _MAX_LABEL:
            raise ConfigError(
                f"A snapshot label is a short text (1 to {_MAX_LABEL} characters), not "
                f"{label!r}; or leave it out (label=None)."
            )
        label = label.strip()
        if label.lower() in RESERVED_LABELS or _reads_as_time(label):
            reads = "a time" if _reads_as_time(label) else "a command of %npc_pin"
            raise ConfigError(
                f"{label!r} cannot label a snapshot: it reads as {reads}. Choose another "
                "label, such as 'submission-v1'."
            )
        found = snapshot_rows.find_snapshot(self._stores.project, label)
        if found is not None:
            taken = f"{found['taken_at']:%Y-%m-%d %H:%M:%S} UTC"
            raise ConfigError(
                f"This project already has a snapshot {label!r} (taken {taken}): labels "
                f"are unique in a project. Choose another label, or pin to that one with "
                f"%npc_pin {label} (pin={label!r})."
            )
        return label

    def all(self) -> list[Snapshot]:
        """Every snapshot of the project, oldest first."""
        return [_snapshot(row) for row in snapshot_rows.list_snapshots(self._stores.project)]

    def frame(self) -> pd.DataFrame:
        """Every snapshot of the project, oldest first: id, label, taken_at, reviewer,
        memories (approved then) and hash."""
        found = [{c: getattr(s, c) for c in SNAPSHOT_KINDS} for s in self.all()]
        return with_missing_as_na(pd.DataFrame(found, columns=list(SNAPSHOT_KINDS)), SNAPSHOT_KINDS)

    def find(self, ref: object, what: str = "as_of") -> Snapshot:
        """The snapshot ``ref`` names (a ``Snapshot``, an id or a label) in this project;
        else an InvalidValueError for the parameter ``what`` (as_of, pin, ...)."""
        key = ref.id if isinstance(ref, Snapshot) else ref
        if not isinstance(key, str) or not key.strip() or not _is_text(key):
            raise InvalidValueError(what, ref, AS_OF_FORMS)
        key = key.strip()
        with self._lock:
            known = self._found.get(key)
        if known is not None:
            return known
        row = snapshot_rows.find_snapshot(self._stores.project, key)
        if row is None:
            raise self._unknown(what, ref)
        return self._remember(_snapshot(row))

    def _unknown(self, what: str, value: object) -> InvalidValueError:
        """No snapshot is ``value``: for ``as_of``, nor is it a time; for ``pin``, it
        names no snapshot (a pin is a snapshot's label or id, 'now' or 'off')."""
        key = str(value).strip()
        labels = [s.label for s in self.all() if s.label]
        known = f"Its labels: {', '.join(labels)}." if labels else "It has none yet."
        missing = f"no snapshot of this project has the id or label {key!r}"
        if what == "as_of":
            lead, allowed = (
                f"as_of={value!r} is neither a time nor a snapshot: {missing}",
                AS_OF_FORMS,
            )
        else:
            lead, allowed = f"{what}={value!r}: {missing}", PIN_FORMS
        return InvalidValueError(
            what, value, allowed, lead=lead, hint=f"{known} Take one with nb.snapshot('label')."
        )

    def _remember(self, snapshot: Snapshot) -> Snapshot:
        with self._lock:
            self._found[snapshot.id] = snapshot
            if snapshot.label:
                self._found[snapshot.label] = snapshot
        return snapshot

    def resolve(self, as_of: object) -> State:
        """What ``as_of`` names: a snapshot (given, or its id or label), a time (a
        datetime, a date, an ISO 8601 string), or now (None). This is the one parser of
        ``as_of``: anything else is an ``InvalidValueError(what="as_of")``."""
        if as_of is None or isinstance(as_of, Snapshot):
            return None if as_of is None else self.find(as_of)
        if isinstance(as_of, datetime | date):
            return to_utc(as_of, name="as_of")
        if not isinstance(as_of, str) or not as_of.strip() or not _is_text(as_of):
            raise InvalidValueError("as_of", as_of, AS_OF_FORMS)
        row = snapshot_rows.find_snapshot(self._stores.project, as_of.strip())
        if row is not None:
            return self._remember(_snapshot(row))
        if _reads_as_time(as_of):
            return to_utc(as_of, name="as_of")
        raise self._unknown("as_of", as_of)

    def between(self, a: object, b: object) -> list[tuple[Store, Moment | None, Moment | None]]:
        """Each store with the moments states ``a`` and ``b`` are in it (``nb.diff``)."""
        states = self.resolve(a), self.resolve(b)
        for state in states:
            self.check(state)
        earlier, later = self.moments(states[0]), self.moments(states[1])
        return [(store, m_a, m_b) for (store, m_a), (_, m_b) in zip(earlier, later, strict=True)]

    def project_moment(self, as_of: object) -> Moment | None:
        """``as_of`` as a moment of the project's store (None: now)."""
        return self.moments(self.resolve(as_of))[0][1]

    def pin_value(self, pin: str | None) -> str | None:
        """A ``pin`` setting as kept: 'now' takes a snapshot (its id is kept); any
        other must name a snapshot of this project (else InvalidValueError)."""
        if pin is None:
            return None
        if pin.lower() == "now":
            return self.take().id
        self.find(pin, "pin")
        return pin

    # -- reading at a state ------------------------------------------------------------------

    def moments(self, state: State) -> list[tuple[Store, Moment | None]]:
        """Each existing store with the moment ``state`` is in it (None: now)."""
        stores = list(self._stores.existing())
        if state is None:
            return [(store, None) for store in stores]
        if isinstance(state, datetime):
            return [(store, Moment(state)) for store in stores]
        at = [project_moment(state), Moment(state.taken_at, state.user_event_seq)]
        return list(zip(stores, at, strict=False))

    def approved(self, state: Snapshot | datetime, npc: str, team: str | None) -> ApprovedSet:
        """The memories approved at ``state`` that ``npc`` may see, in priority order;
        a snapshot's are kept (the audit log only grows: they never change, unless SQL
        rewrote the store, which starts a new epoch of its generation), a time's read
        each time."""
        epochs = tuple(_epoch(store) for store, _ in self.moments(None))
        key = (state.id if isinstance(state, Snapshot) else state, npc, team, epochs)
        with self._lock:
            kept = self._sets.get(key)
            if kept is not None:
                self._sets.move_to_end(key)
                return kept
        rows: list[dict] = []
        if isinstance(state, Snapshot):
            rows = self._visible_checked(state, npc, team)
        else:
            for store, moment in self.moments(state):
                with store.read() as con:
                    rows += approved_rows_at(con, moment, npc, team)
        rows.sort(key=priority_key)
        approved = ApprovedSet(rows)
        if isinstance(state, Snapshot):
            with self._lock:
                self._sets[key] = approved
                while len(self._sets) > _KEPT_SETS:
                    self._sets.popitem(last=False)
        return approved

    def _visible_checked(self, snapshot: Snapshot, npc: str, team: str | None) -> list[dict]:
        """The memories approved at ``snapshot`` that ``npc`` may see, once every
        persona's (read once, as tuples) still hash to its hash."""
        lines, visible = self._read(snapshot, (npc, team))
        if hash_of(lines) != snapshot.hash:
            raise HistoryChangedError(self._changed(snapshot))
        return visible

    def _read(
        self, snapshot: Snapshot, persona: tuple[str, str | None] | None
    ) -> tuple[list[tuple[str, str]], list[dict]]:
        """The (id, hash line) of every memory approved at ``snapshot``, and as dicts
        those the persona (npc, team) may see (none without one)."""
        lines: list[tuple[str, str]] = []
        visible: list[dict] = []
        for store, moment in self.moments(snapshot):
            assert moment is not None  # a snapshot is a moment in every store
            with store.read() as con:
                names, found = approved_table_at(con, moment)
            at = {name: i for i, name in enumerate(names)}
            hashed = [at[c] for c in ("id", "npc", "scope", "team", "final_text")]
            hashed += [at["valid_from"], at["valid_to"]]
            lines += [(t[at["id"]], line(*(t[i] for i in hashed))) for t in found]
            if persona is None:
                continue
            scope, own, group = at["scope"], at["npc"], at["team"]
            visible += [
                dict(zip(names, t, strict=True))
                for t in found
                if visible_to({"scope": t[scope], "npc": t[own], "team": t[group]}, *persona)
            ]
        return lines, visible

    def rows(self, state: State) -> list[dict]:
        """Every memory approved at ``state`` (every persona's), with its store's name
        (``store``: project or user); at a snapshot, only if they still hash to its hash
        (else a ``HistoryChangedError``)."""
        if isinstance(state, Snapshot):
            return self._checked_rows(state)
        return self._rows(state)

    def check(self, state: State) -> None:
        """At a snapshot, a ``HistoryChangedError`` if its memories no longer hash to its
        hash (``rows``); any other state has no hash to hold."""
        if isinstance(state, Snapshot):
            self._checked_rows(state)

    def _checked_rows(self, snapshot: Snapshot) -> list[dict]:
        """``rows(snapshot)``, refused when they no longer hash to the snapshot's hash:
        a past changed since (by SQL), never answered from."""
        found = self._rows(snapshot)
        if content_hash(found) != snapshot.hash:
            raise HistoryChangedError(self._changed(snapshot))
        return found

    def _changed(self, snapshot: Snapshot) -> str:
        """Why a snapshot's memories no longer hash to its hash, naming the memory."""
        named: list[str] = []
        for store in self._stores.existing():
            with store.read() as con:
                named += [describe(row) for row in disagreeing_memories(con, limit=3)]
        why = (
            " ".join(named[:3])
            if named
            else "No memory's status or text disagrees with its audit events, so a row's "
            "scope or validity, or the audit log itself, was changed."
        )
        return (
            f"The snapshot {snapshot.label or snapshot.id!r} cannot be read: the memories "
            f"approved then no longer hash to its hash ({snapshot.hash[:12]}...), so the "
            f"past it records was changed after it was taken. {why} Nothing was answered "
            "from the changed past; run nb.verify() (npc-nb verify) for every problem, and "
            "restore the store from a copy you trust."
        )

    def _rows(self, state: State) -> list[dict]:
        found = []
        for (store, moment), name in zip(self.moments(state), ("project", "user"), strict=False):
            with store.read() as con:
                found += [row | {"store": name} for row in approved_rows_at(con, moment)]
        return found

    def recomputed_hash(self, snapshot: Snapshot) -> str:
        """The hash of what the audit log says was approved at ``snapshot``: its ``hash``
        while the log is whole."""
        return hash_of(self._read(snapshot, None)[0])


def _snapshot(row: dict[str, Any]) -> Snapshot:
    return Snapshot(
        id=row["id"],
        label=row["label"],
        taken_at=row["taken_at"],
        hash=row["content_hash"],
        memories=int(row["memories"]),
        reviewer=row["taken_by"],
        event_seq=int(row["event_seq"]),
        user_event_seq=int(row["user_event_seq"]),
        event_floor=int(row["event_floor"]),
    )


def project_moment(snapshot: Snapshot) -> Moment:
    """The events ``snapshot`` includes in the project's store; a ``StoreError`` for one
    a bundle merge could not place (``event_floor`` -1: docs/bundle.md)."""
    if snapshot.event_floor >= 0:
        return Moment(snapshot.taken_at, snapshot.event_seq, snapshot.event_floor)
    raise StoreError(
        f"The snapshot {snapshot.label or snapshot.id!r} came in a bundle merged into this "
        "project, and cannot be read exactly in this project: some audit events it includes "
        "were already here, numbered among this project's own events. Import that "
        "bundle into a new project (create=True) to read at it."
    )


def _epoch(store: Store) -> int:
    with store.read() as con:
        return epoch(store.generation(con))


def _is_text(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reads_as_time(text: str) -> bool:
    try:
        to_utc(text, name="as_of")
    except ValueError:
        return False
    return True
