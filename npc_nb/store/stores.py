"""The two stores a project reads: its own file (or its schema on a shared PostgreSQL
server, with ``store=URL``) and the user's file for ``global`` scope, which stays
personal on every backend.

Neither file is created before something is written to it: the project's by its first
write (a candidate, a chat), the user's when a global memory is first written, so a
project that never uses global scope never touches ``~/.npc_nb``. A memory id is looked up in
the project store first, then the user store; ids are UUIDv7 strings, unique across both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .._foundations.settings import Settings
from .._foundations.store_url import project_schema
from ..errors import ConfigError, UnknownMemoryError
from .contract import Store
from .embedded.database import FileStore
from .memories.memory_rows import get_memory

__all__ = ["Stores"]


class Stores:
    """Routes reads and writes to the project store or the user store."""

    def __init__(
        self,
        project_folder: Path,
        user_folder: Path,
        settings: Settings,
        project_name: str | None = None,
        *,
        create_schema: bool = True,
    ) -> None:
        """``create_schema``: whether a shared store may create the project's schema
        (a command that only reads or reviews must not); the file is created by its
        first write either way."""
        name = project_name or project_folder.parent.name
        self.project = (
            _shared_store(settings.store, name, settings, create_schema)
            if settings.store
            else FileStore.shared(project_folder, settings)
        )
        # Global scope stays personal: the user's own file, whatever the project uses.
        self.user = FileStore.shared(user_folder, settings)

    def for_scope(self, scope: str) -> Store:
        return self.user if scope == "global" else self.project

    def existing(self) -> Iterator[Store]:
        """The project store, and the user store if it has been created."""
        yield self.project
        if self.user.path != self.project.path and self.user.exists:
            yield self.user

    def locate(self, memory_id: object, *, columns: str = "*") -> tuple[Store, dict]:
        """The store holding a memory, and its current row (only ``columns``, from this
        package's own SQL: a decision reads the whole row, a caller showing the text
        reads that alone)."""
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise UnknownMemoryError(
                f"{memory_id!r} is not a memory id; ids are strings such as those in the "
                "'id' column of review_queue() or memories()."
            )
        for store in self.existing():
            row = get_memory(store, memory_id.strip(), columns=columns)
            if row is not None:
                return store, row
        raise UnknownMemoryError(
            f"No memory with id {memory_id!r} in this project or the user store. "
            "Look ids up with review_queue() or memories()."
        )

    def open(self, *, create: bool) -> None:
        """Create the project store now (``create``), and open and migrate it now if it
        exists: a broken store fails when the project is opened, not at its first use."""
        if create:
            self.project.create()
        if self.project.exists:
            with self.project.read():
                pass

    def release(self) -> None:
        self.project.release()
        self.user.release()

    def configure(self, settings: Settings) -> None:
        """Apply new lock and release timeouts to both stores' running leases."""
        self.project.configure(settings)
        self.user.configure(settings)


def _shared_store(url: str, project: str, settings: Settings, create: bool) -> Store:
    """The project's schema on the PostgreSQL server at ``url``, which must record this
    project's name (``pg_project``); created if need be unless not ``create``."""
    from .server.database import PostgresStore  # psycopg only when a shared store is used

    try:
        schema = project_schema(project)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return PostgresStore.shared_pg(url, schema, settings, project, create=create)
