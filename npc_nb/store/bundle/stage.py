"""A bundle's tables staged in a private DuckDB file, checked, then migrated.

The staging file gets exactly the migrations the bundle was written at (its
manifest lists them), so the bundle's tables must have exactly the columns and types
that schema has: a table or column it does not know, one it lacks, or a value of
another type is refused by name before anything is read. Each Parquet file is then
loaded, which the schema's own constraints check (statuses, categories, scopes, keys,
NOT NULL); each table's row count and checksum (``tables.table_digest``) must be those
of the manifest. Only then is the staging file migrated to this npc_nb's schema, by
the very migrations that upgrade a store: an old bundle is read as an old store is.

Nothing here touches the project: the staged file is what ``load`` writes into it,
so a refusal at any step leaves the project as it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ...errors import StoreError
from ..memories.consistency import disagreeing_memories
from ..schema.legacy import as_steps
from ..schema.migrations import apply_migrations, step_names
from .tables import Column, quoted, schema_columns, table_digest

__all__ = ["Staged", "TableSpec", "stage_bundle", "staged_disagreements"]

_REFUSED = "Nothing was imported."


@dataclass(frozen=True)
class TableSpec:
    """What a bundle's manifest says of one table, and where its file was put."""

    name: str
    columns: tuple[Column, ...]
    rows: int
    sha256: str
    file: Path


@dataclass(frozen=True)
class Staged:
    """The staged database file, and the migrations that brought it up to date."""

    path: Path
    upgraded: tuple[str, ...]


def stage_bundle(folder: Path, specs: Mapping[str, TableSpec], migrations: Sequence[str]) -> Staged:
    """Load ``specs``' files into ``folder``/staged.duckdb, check them, migrate it."""
    steps = as_steps(migrations)  # a bundle of the old ladder's end is at the baseline
    if unknown := sorted(steps - set(step_names())):
        raise StoreError(
            f"This bundle was written by a newer npc_nb (migrations {', '.join(unknown)}). "
            f"Upgrade npc_nb to import it. {_REFUSED}"
        )
    path = folder / "staged.duckdb"
    with _connection(path) as con:
        apply_migrations(con, only=steps)
        _check_specs(specs, schema_columns(con))
        for spec in specs.values():
            _load_table(con, spec)
        upgraded = apply_migrations(con)
    return Staged(path, tuple(upgraded))


@contextmanager
def _connection(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(
        str(path),
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    try:
        con.execute("SET TimeZone = 'UTC'")
        yield con
    finally:
        con.close()


def _check_specs(specs: Mapping[str, TableSpec], schema: dict[str, list[Column]]) -> None:
    """The manifest's tables and columns are those of the schema it was written at."""
    if unknown := sorted(set(specs) - set(schema)):
        raise StoreError(
            f"The bundle holds table(s) npc_nb's schema does not have: {', '.join(unknown)}. "
            f"It was not written by npc_nb, or was changed. {_REFUSED}"
        )
    if missing := sorted(set(schema) - set(specs)):
        raise StoreError(
            f"The bundle lacks table(s) {', '.join(missing)} of the schema it says it was "
            f"written at. It is incomplete or was changed. {_REFUSED}"
        )
    for name, spec in specs.items():
        if list(spec.columns) != schema[name]:
            raise StoreError(
                f"The bundle's table {name} has columns the schema does not: "
                f"{_differences(spec.columns, schema[name], 'the schema')}. It was "
                f"changed. {_REFUSED}"
            )


def _differences(found: Sequence[Column], wanted: Sequence[Column], where: str) -> str:
    """How ``found`` differs from ``wanted``, column by column (the first few)."""
    types = {c.name: c.type for c in wanted}
    named = {c.name for c in found}
    said = [f"{c.name} (unknown)" for c in found if c.name not in types]
    said += [f"{c.name} (missing)" for c in wanted if c.name not in named]
    said += [
        f"{c.name} is {c.type} where {where} says {types[c.name]}"
        for c in found
        if c.name in types and c.type != types[c.name]
    ]
    if not said:
        said = ["the columns are in another order"]
    return ", ".join(said[:6]) + (f", and {len(said) - 6} more" if len(said) > 6 else "")


def _load_table(con: duckdb.DuckDBPyConnection, spec: TableSpec) -> None:
    """One Parquet file into its table, checked column by column, then counted and
    checksummed against the manifest."""
    try:
        described = con.execute(
            "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))",
            [str(spec.file)],
        ).fetchall()
    except duckdb.Error as exc:
        raise _unreadable(spec, exc) from None
    found = tuple(Column(str(name), str(kind)) for name, kind in described)
    if found != spec.columns:
        raise StoreError(
            f"The bundle's file for table {spec.name} holds columns its manifest does not "
            f"list: {_differences(found, spec.columns, 'the manifest')}. {_REFUSED}"
        )
    listed = ", ".join(quoted(c.name) for c in spec.columns)
    try:
        con.execute(
            f"INSERT INTO {quoted(spec.name)} ({listed}) SELECT {listed} FROM read_parquet(?)",
            [str(spec.file)],
        )
    except duckdb.Error as exc:
        raise _unreadable(spec, exc) from None
    rows, digest = table_digest(con, f"SELECT {listed} FROM {quoted(spec.name)}")
    if (rows, digest) != (spec.rows, spec.sha256):
        raise StoreError(
            f"The bundle's table {spec.name} does not match its manifest: {rows} row(s) "
            f"with checksum {digest[:12]}..., where the manifest says {spec.rows} with "
            f"{spec.sha256[:12]}.... The file was changed or damaged. {_REFUSED}"
        )


def _unreadable(spec: TableSpec, exc: Exception) -> StoreError:
    text = str(exc).strip().splitlines()
    reason = text[0][:300] if text else type(exc).__name__
    reason = reason.replace(str(spec.file.parent), "<bundle>")  # a temporary folder
    return StoreError(
        f"The bundle's file for table {spec.name} cannot be read into npc_nb's schema: "
        f"{reason}. {_REFUSED}"
    )


def staged_disagreements(path: Path) -> list[dict]:
    """The staged bundle's memories whose status (or approved text) no audit event of
    the bundle set (``memories.consistency``): what an import refuses."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        return disagreeing_memories(con)
    finally:
        con.close()
