"""The store contract: what every store is to the rest of npc_nb, and the helpers
every query module writes its SQL with.

``Store`` is the one type the rest of the package names. Two backends keep its
contract: one DuckDB file (``embedded.database.FileStore``, the default) and a project's
schema on a PostgreSQL server (``server.database.PostgresStore``, for a lab).
``stores.Stores`` chooses one; nothing else needs to know which, and the query modules
(``memories``, ``conversations``, ``graph``, ``analysis``) are written once for both.

Callers get plain dicts and DataFrames back, never live relations, so no result keeps a
file lock. Writes happen inside ``write()``, one transaction: a status change and its
audit event commit together or not at all. Identifiers that reach SQL text come from
this package's own constants (``TABLES``); values are always bound. ``insert_row`` is
the one builder of INSERT statements.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import duckdb
import pandas as pd

from .._foundations.tables import kind_of_sql_type, with_missing_as_na
from ..errors import ConfigError
from .chain import CHAINED, chain_row

if TYPE_CHECKING:
    from .._foundations.results import RoleAccess
    from .._foundations.settings import Settings
    from .memories.known_rows import KnownRows
    from .notices import DecisionNotice

__all__ = [
    "TABLES",
    "Connection",
    "Store",
    "frame",
    "insert_row",
    "one_of",
    "rows",
    "scalar",
    "typed_frame",
]

Connection = duckdb.DuckDBPyConnection
#: The tables ``insert_row`` writes to (names reach SQL text, so only these).
TABLES = (
    "memories",
    "memory_events",
    "reproposals",
    "match_labels",
    "votes",
    "conversations",
    "messages",
    "extraction_jobs",
    "snapshots",
    "model_recordings",
    "imported_records",
    "experiments",
    "experiment_arms",
    "experiment_jobs",
    "experiment_items",
    "experiment_reviews",
    "experiment_promotions",
    "review_policy",
    "audits",
    "audit_members",
    "audit_steps",
)


_SEQUENCED = {
    "memory_events": ("seq", "memory_event_seq"),
    "memories": ("insert_seq", "memory_insert_seq"),
}


def insert_row(con: Connection, table: str, row: dict[str, Any]) -> int | None:
    """Insert one row: the one INSERT builder. Events get their ``seq`` and memories their
    ``insert_seq`` from their sequences (never from the caller); that number is returned
    (None for the other tables)."""
    if table not in TABLES:
        raise ValueError(f"not an npc_nb table: {table}")
    if table in CHAINED:
        return _insert_chained(con, table, row)
    columns, values = list(row), ["?" for _ in row]
    returning = ""
    if table in _SEQUENCED:
        column, sequence = _SEQUENCED[table]
        columns, values = [column, *columns], [f"nextval('{sequence}')", *values]
        returning = f" RETURNING {column}"
    cursor = con.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(values)}){returning}",
        list(row.values()),
    )
    if not returning:
        return None
    found = cursor.fetchone()
    assert found is not None  # an INSERT ... RETURNING of one row returns one
    return int(found[0])


def _insert_chained(con: Connection, table: str, row: dict[str, Any]) -> int | None:
    """``insert_row`` for a chained table (``chain``): its sequence number drawn first,
    since the row's hash covers it, then the row linked to its chain and written."""
    number = None
    if table in _SEQUENCED:
        column, sequence = _SEQUENCED[table]
        number = int(scalar(con, f"SELECT nextval('{sequence}')"))
        row = {column: number, **row}
    row = chain_row(con, table, row)
    con.execute(
        f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
        list(row.values()),
    )
    return number


def scalar(con: Connection, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
    """The single value a one-row, one-column query returns (aggregates always do)."""
    found = con.execute(sql, params).fetchone()
    if found is None:
        raise LookupError(f"no row for: {sql}")
    return found[0]


#: Up to this many values, ``one_of`` lists them (the engine can skip storage by each
#: value's range); more become one list parameter (compared by a hash join).
_LISTED_VALUES = 64


def one_of(column: str, values: Sequence[Any], name: str) -> tuple[str, dict[str, Any]]:
    """``column`` is one of ``values``, as SQL with named parameters (``name``0, ...).

    Listed, a few ids are found by their zone maps (a memory id begins with its time, so
    one card is a millisecond's read at 100k memories); as ``= ANY($list)`` DuckDB
    compares every row's value with a hash join (five times slower for one id)."""
    if len(values) > _LISTED_VALUES:
        return f"{column} = ANY(${name})", {name: list(values)}
    names = [f"{name}{i}" for i in range(len(values))]
    placeholders = ", ".join(f"${n}" for n in names) or "NULL"
    return f"{column} IN ({placeholders})", dict(zip(names, values, strict=True))


def rows(con: Connection, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict]:
    """Run a query and materialise its rows as dicts."""
    cursor = con.execute(sql, params)
    columns = [d[0] for d in cursor.description or ()]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


class Store(ABC):
    """What every store is to the rest of npc_nb: transactions, the decision generation
    that keys the caches, analytical reads, decision notices, and the claims on jobs.

    The backends say how (see the module docstring). What they share is here: whether
    a write is under way, forgetting a row being changed, and ``untouched_since``.
    """

    #: Held while a backend looks up or creates its one store per file or schema.
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()
    #: Whether a write transaction has the store to itself, so a row read inside a
    #: transaction stays as read until it ends (a DuckDB file; not a shared server).
    sole_writer: ClassVar[bool] = True
    #: Rows read by id, kept while they are the store's (``memories.known_rows``); None
    #: where other clients write meanwhile (a shared store).
    known: KnownRows | None = None
    _writes = 0  # write transactions under way (their rows are not committed)
    #: Where the store is, as shown to the user (a file, or a server and schema).
    path: Path
    #: Memories this process inserted (the neighbour index looks again when it moves).
    memory_inserts: int
    #: How many times the store was (re)opened by this process (``mark``).
    connections: int
    #: Whether a caller's ``allow_write`` SQL runs on a server, in its own dialect
    #: (``run_writes``), rather than in DuckDB (``write``).
    writes_on_server: ClassVar[bool] = False

    @property
    @abstractmethod
    def exists(self) -> bool:
        """Whether the store has been created."""

    def create(self) -> None:
        """Create the store now if it does not exist yet (else its first write does)."""
        if not self.exists:
            with self.write():
                pass

    @abstractmethod
    def release(self) -> None:
        """Let go of what this process holds, so another process can take it at once."""

    @abstractmethod
    def read(self) -> AbstractContextManager[Connection]:
        """A connection for the operational queries, for as long as the block runs."""

    @abstractmethod
    def write(self) -> AbstractContextManager[Connection]:
        """One transaction: everything inside commits together or not at all."""

    @property
    def writing(self) -> bool:
        """Whether a write transaction is under way (on the calling thread: the lease
        lets one thread at a time use the connection)."""
        return self._writes > 0

    def row_changing(self, memory_id: str) -> None:
        """This process is changing the row of ``memory_id`` (``known`` forgets it)."""
        if self.known is not None:
            self.known.forget(memory_id)

    @abstractmethod
    def mark(self) -> tuple[int, int]:
        """Where this process's use of the store stands (``untouched_since``)."""

    def untouched_since(self, mark: tuple[int, int]) -> bool:
        """Whether nothing can have been written since ``mark``: the file stayed open in
        this process (no other process can write while it is) and this process committed
        nothing. Call inside ``write()``; what was read after ``mark`` is still so."""
        return self.sole_writer and mark == self.mark()

    @abstractmethod
    def generation(self, con: Connection) -> int:
        """A token that changes with every decision (``generation`` tells what a change
        of it means to a cache)."""

    @abstractmethod
    def bump_generation(self, con: Connection, *, rewrite: bool = False) -> None:
        """Move the token (``generation``): for a decision, or for a ``rewrite`` the
        audit log does not describe, after which every cache reloads."""

    @abstractmethod
    def dataframe(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        """An analytical query's result (DuckDB's SQL) as a DataFrame."""

    @abstractmethod
    def table(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> pd.DataFrame:
        """A record table for the API: like ``dataframe``, with one missing-value marker
        per kind of column, decided by the column's SQL type (``_foundations.tables``)."""

    @abstractmethod
    def read_only(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A connection of its own that cannot change anything (a caller's SQL)."""

    @property
    @abstractmethod
    def engine_errors(self) -> tuple[type[Exception], ...]:
        """The errors the engine raises for a failing statement (a caller's SQL)."""

    @abstractmethod
    def vet_read_only(self, con: Connection, statements: Sequence[Any]) -> None:
        """Refuse (QueryError) read-only ``statements`` that could still act through
        ``con``."""

    @abstractmethod
    def default_actor(self) -> str | None:
        """Who a decision is recorded for when no reviewer is configured (None: the OS
        user)."""

    @property
    def owns_project(self) -> bool:
        """Whether the connected role owns the project (may set its policy): always on a
        file, the schema's owner (or a superuser) on PostgreSQL."""
        return True

    @abstractmethod
    def announce(self, con: Connection, notice: DecisionNotice) -> None:
        """Tell other processes, when ``con``'s transaction commits, that a status
        changed."""

    @abstractmethod
    def subscribe(self, callback: Callable[[DecisionNotice], None]) -> None:
        """Call ``callback`` (held weakly, from another thread) with each decision made
        in another process."""

    @abstractmethod
    def alerts(self) -> list[str]:
        """What the user should know about this store now (``%npc_status``)."""

    @abstractmethod
    def hold_decisions(self, con: Connection) -> None:
        """Keep every decision from committing until ``con``'s transaction ends, so the
        audit log's newest event then is exact (a snapshot)."""

    @abstractmethod
    def lock_text(self, con: Connection, digest: str) -> None:
        """Serialise proposals of the same text until ``con``'s transaction ends."""

    @abstractmethod
    def lock_memory(self, con: Connection, memory_id: str) -> None:
        """Serialise the votes and decisions on one memory until ``con``'s transaction
        ends: what the transaction reads of the memory and its votes stays as read."""

    @abstractmethod
    def claiming(self, owner: str) -> AbstractContextManager[None]:
        """Around claiming and running jobs as ``owner`` (``host:pid``), so others can
        tell it is alive."""

    @abstractmethod
    def claimant_alive(self, owner: str) -> bool:
        """Whether the claimer of a running job still lives."""

    @abstractmethod
    def analysis(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A DuckDB connection for npc_nb's own analytical reads (registered frames,
        relations, exports)."""

    @abstractmethod
    def configure(self, settings: Settings) -> None:
        """Apply ``settings``' timeouts to the running store."""

    def copy_rows(
        self, con: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
    ) -> None:
        """Insert many ``rows`` into ``table`` (a quoted name from this package) inside
        ``con``'s transaction: in batches here; PostgreSQL copies them (``COPY``)."""
        listed = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
        sql = f"INSERT INTO {table} ({listed}) VALUES ({', '.join('?' for _ in columns)})"
        batch: list[Sequence[Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= 1000:
                con.executemany(sql, batch)
                batch = []
        if batch:
            con.executemany(sql, batch)

    def run_writes(
        self, sql: str, params: Any, before: Callable[[Connection], None]
    ) -> pd.DataFrame:
        """A caller's write SQL, run by the server in one transaction that starts with
        ``before`` (npc_nb's own statements); only where ``writes_on_server``."""
        raise NotImplementedError("a caller's writes run in DuckDB here (write())")

    def grant(self, role: str, level: str | None, *, project: str) -> RoleAccess:
        """Give the database role ``role`` exactly ``level`` in ``project`` (reader or
        reviewer; None takes every grant away); only a shared store has roles."""
        raise ConfigError(NO_ROLES)


#: Why a store without database roles cannot grant or revoke, and what to do instead.
NO_ROLES = (
    "Roles exist only on a shared PostgreSQL store (store='postgresql://...'); this "
    "project's store is a DuckDB file, protected by its file permissions (private to your "
    "OS user). To share the project with a lab, copy it to PostgreSQL with npc-nb "
    "migrate-store, open it there, then grant."
)


def frame(cursor: Any) -> pd.DataFrame:
    """A result (DuckDB's or the PostgreSQL store's) as a DataFrame; a statement without
    a result gives an empty one."""
    return cursor.df() if cursor is not None and cursor.description else pd.DataFrame()


def typed_frame(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | dict[str, Any] = ()
) -> pd.DataFrame:
    """A DuckDB query's result with one missing-value marker per kind of column, decided
    by the column's SQL type (``_foundations.tables``)."""
    cursor = con.execute(sql, params)
    kinds = {d[0]: kind_of_sql_type(str(d[1])) for d in cursor.description or ()}
    return with_missing_as_na(cursor.df(), kinds)
