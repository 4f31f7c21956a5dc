"""The bundle file: one zip holding ``manifest.json`` and ``tables/<table>.parquet``.

Writing (``write_bundle``): the store's tables are dumped (``store.bundle.dump``) into
a private temporary folder, the manifest records the format and its version, the
npc_nb version, the project, the time, the migrations the store had, per table
its file, columns and types, row count and checksum, and for a reader each audited
batch as it stands (its sample, errors, bound, tolerance, status; stated, never loaded:
the ``audits`` tables carry the audits); the zip is written beside the
target and renamed into place (a failed export leaves no half file), private (0600)
like a store file, since it holds every memory.

Reading (``open_bundle``) treats the file as hostile, and refuses by name, before
anything is imported: an entry that is not ``manifest.json`` or
``tables/<name>.parquet`` (``..``, an absolute path, a backslash, anything else: the
zip-slip shapes), a duplicate name, a symbolic link, an encrypted entry or one packed
with another method than stored or deflated, more than ``MAX_ENTRIES`` entries, an
entry that declares more than ``MAX_ENTRY_BYTES`` or entries that together declare
more than ``MAX_TOTAL_BYTES``, or one that unpacks to more than ``MAX_RATIO`` times
its packed size; an entry is then unpacked counting the bytes it really
gives, and one that gives more than it declared (a zip bomb lying about its size) is
refused as it is read. The manifest is checked against the loader of its
``format_version`` (``LOADERS``: one per version ever written, so an old bundle stays
loadable) and names exactly the files the zip holds.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._foundations.locations import output_path
from .._foundations.safe_yaml import quoted
from .._foundations.utc import utc_now
from ..errors import ConfigError, StoreError
from ..store import Store
from ..store.bundle.dump import Dumped, dump_store
from ..store.bundle.stage import TableSpec
from ..store.bundle.tables import EXCLUDED, Column

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "LOADERS",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "MAX_RATIO",
    "MAX_TOTAL_BYTES",
    "OpenedBundle",
    "open_bundle",
    "write_bundle",
]

FORMAT = "npc_nb-bundle"
#: The version ``write_bundle`` writes; ``LOADERS`` reads this one and every earlier one.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MAX_ENTRIES = 1_000
MAX_MANIFEST_BYTES = 4_000_000
MAX_ENTRY_BYTES = 4_000_000_000
MAX_TOTAL_BYTES = 8_000_000_000
#: A deflated entry that unpacks to more than this many times its size is refused: a
#: bundle's tables are stored (Parquet is compressed already), its manifest is text.
MAX_RATIO = 100
_TABLE_ENTRY = re.compile(r"tables/([a-z_][a-z0-9_]{0,62})\.parquet")
_REFUSED = "Nothing was imported."
_CHUNK = 1 << 20


@dataclass(frozen=True)
class OpenedBundle:
    """A checked bundle, its tables unpacked into a folder."""

    manifest: dict[str, Any]
    format_version: int
    migrations: tuple[str, ...]
    specs: dict[str, TableSpec]


# -- writing ---------------------------------------------------------------------------


def write_bundle(
    store: Store,
    path: str | os.PathLike[str],
    project: str,
    version: str,
    audits: Sequence[dict[str, Any]] = (),
) -> Path:
    """Write the bundle of ``store`` (project ``project``) to ``path``; returns it.
    ``audits``: each audit as the manifest states it (JSON values), for a reader."""
    target = output_path(path)
    with tempfile.TemporaryDirectory(prefix="npc_nb-bundle-") as folder:
        dumped = dump_store(store, Path(folder))
        _write_zip(target, dumped, _manifest_of(dumped, project, version, audits))
    return target


def _manifest_of(
    dumped: Dumped, project: str, version: str, audits: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "npc_nb_version": version,
        "project": project,
        "created_at": utc_now().isoformat(timespec="microseconds") + "Z",
        "migrations": list(dumped.migrations),
        "excluded": sorted(EXCLUDED),
        "tables": {
            table.name: {
                "file": f"tables/{table.name}.parquet",
                "columns": [[c.name, c.type] for c in table.columns],
                "rows": table.rows,
                "sha256": table.sha256,
            }
            for table in dumped.tables
        },
        "audits": list(audits),
    }


def _write_zip(target: Path, dumped: Dumped, manifest: dict[str, Any]) -> None:
    """The zip beside ``target`` (private from its first byte), renamed into place."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as handle, zipfile.ZipFile(handle, "w") as archive:
            for table in dumped.tables:
                archive.write(table.file, f"tables/{table.name}.parquet", zipfile.ZIP_STORED)
            text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
            archive.writestr(MANIFEST, text, zipfile.ZIP_DEFLATED)
        os.replace(partial, target)
    except OSError as exc:  # a folder that cannot be written, a full disk
        partial.unlink(missing_ok=True)
        raise ConfigError(f"Cannot write the bundle {target}: {exc.strerror}.") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


# -- reading -----------------------------------------------------------------------------


def open_bundle(path: str | os.PathLike[str], folder: Path) -> OpenedBundle:
    """Check the bundle at ``path`` and unpack its tables into ``folder``."""
    given = Path(path).expanduser()
    if not given.is_file():
        raise ConfigError(f"No bundle file at {given}: name the .zip that export_bundle wrote.")
    try:
        with zipfile.ZipFile(given) as archive:
            entries = _checked_entries(archive)
            manifest = _manifest(archive, entries)
            version = manifest.get("format_version")
            loader = LOADERS.get(version) if isinstance(version, int) else None
            if loader is None:
                raise StoreError(
                    f"The bundle's format version is {quoted(version)}; this npc_nb reads "
                    f"versions {', '.join(map(str, sorted(LOADERS)))}. A newer npc_nb wrote "
                    f"it: upgrade npc_nb to import it. {_REFUSED}"
                )
            migrations, specs = loader(manifest, folder)
            _check_files(entries, specs)
            for spec in specs.values():
                _unpack(archive, entries[f"tables/{spec.name}.parquet"], spec.file)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise StoreError(
            f"{given} is not a readable bundle (a zip file): {exc}. {_REFUSED}"
        ) from None
    return OpenedBundle(manifest, version, migrations, specs)  # type: ignore[arg-type]


def _checked_entries(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise StoreError(
            f"The bundle holds {len(infos):,} entries, more than a bundle has. {_REFUSED}"
        )
    entries: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if info.filename in entries:
            raise StoreError(f"The bundle holds the entry {info.filename} twice. {_REFUSED}")
        _check_entry(info)
        entries[info.filename] = info
    total = sum(info.file_size for info in infos)
    if total > MAX_TOTAL_BYTES:
        raise StoreError(
            f"The bundle's entries declare {total:,} bytes in all, over the limit of "
            f"{MAX_TOTAL_BYTES:,}. {_REFUSED}"
        )
    return entries


def _check_entry(info: zipfile.ZipInfo) -> None:
    """One entry's name, kind, packing and declared size (see the module docstring)."""
    name = info.filename
    if name != MANIFEST and not _TABLE_ENTRY.fullmatch(name):
        raise StoreError(
            f"The bundle holds an entry named {quoted(name)}, which is not part of a "
            f"bundle (only {MANIFEST} and tables/<table>.parquet are; a path outside "
            f"the bundle is never written). {_REFUSED}"
        )
    if stat.S_ISLNK(info.external_attr >> 16):
        raise StoreError(f"The bundle's entry {name} is a symbolic link. {_REFUSED}")
    if info.flag_bits & 0x1:
        raise StoreError(f"The bundle's entry {name} is encrypted. {_REFUSED}")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise StoreError(f"The bundle's entry {name} is packed in an unknown way. {_REFUSED}")
    if info.file_size > MAX_ENTRY_BYTES:
        raise StoreError(
            f"The bundle's entry {name} declares {info.file_size:,} bytes, over the "
            f"limit of {MAX_ENTRY_BYTES:,}. {_REFUSED}"
        )
    if info.file_size > _CHUNK and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise StoreError(
            f"The bundle's entry {name} unpacks to {info.file_size:,} bytes from "
            f"{info.compress_size:,}, far more than a bundle's data compresses (a zip "
            f"bomb?). {_REFUSED}"
        )


def _manifest(archive: zipfile.ZipFile, entries: dict[str, zipfile.ZipInfo]) -> dict[str, Any]:
    info = entries.get(MANIFEST)
    if info is None:
        raise StoreError(f"The bundle has no {MANIFEST}; it was not written by npc_nb. {_REFUSED}")
    if info.file_size > MAX_MANIFEST_BYTES:
        raise StoreError(f"The bundle's {MANIFEST} is too large for a manifest. {_REFUSED}")
    data = _read_bounded(archive, info, MAX_MANIFEST_BYTES)
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise StoreError(
            f"The bundle's {MANIFEST} is not JSON: {str(exc)[:200]}. {_REFUSED}"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreError(f"The bundle's {MANIFEST} is not an npc_nb bundle manifest. {_REFUSED}")
    return manifest


def _check_files(entries: dict[str, zipfile.ZipInfo], specs: dict[str, TableSpec]) -> None:
    listed = {f"tables/{name}.parquet" for name in specs}
    found = set(entries) - {MANIFEST}
    if extra := sorted(found - listed):
        raise StoreError(
            f"The bundle holds file(s) its manifest does not list: {', '.join(extra)}. {_REFUSED}"
        )
    if missing := sorted(listed - found):
        raise StoreError(
            f"The bundle lacks file(s) its manifest lists: {', '.join(missing)}. {_REFUSED}"
        )


def _read_bounded(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    chunks, size = [], 0
    with archive.open(info) as member:
        while chunk := member.read(_CHUNK):
            size += len(chunk)
            if size > min(limit, info.file_size):
                raise _lying(info)
            chunks.append(chunk)
    return b"".join(chunks)


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """One entry into ``target`` (a name of ours, never the entry's), stopped as soon
    as it gives more bytes than it declared."""
    size = 0
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out, archive.open(info) as member:
        while chunk := member.read(_CHUNK):
            size += len(chunk)
            if size > info.file_size:
                raise _lying(info)
            out.write(chunk)


def _lying(info: zipfile.ZipInfo) -> StoreError:
    return StoreError(
        f"The bundle's entry {info.filename} holds more than the {info.file_size:,} bytes it "
        f"declares (a zip bomb?). {_REFUSED}"
    )


# -- the manifest of each format version -------------------------------------------------


def _specs_v1(
    manifest: dict[str, Any], folder: Path
) -> tuple[tuple[str, ...], dict[str, TableSpec]]:
    """Format 1 (docs/bundle.md): the migrations and each table's spec."""
    expected = {"format", "format_version", "npc_nb_version", "project", "created_at",
                "migrations", "excluded", "tables", "audits"}  # fmt: skip
    if unknown := sorted(set(manifest) - expected):
        raise StoreError(
            f"The manifest has unknown key(s) {', '.join(map(quoted, unknown))}. {_REFUSED}"
        )
    migrations = manifest.get("migrations")
    tables = manifest.get("tables")
    if not isinstance(migrations, list) or not all(isinstance(m, str) for m in migrations):
        raise StoreError(f"The manifest's migrations are not a list of names. {_REFUSED}")
    if not isinstance(tables, dict):
        raise StoreError(f"The manifest's tables are not a mapping. {_REFUSED}")
    if not isinstance(manifest.get("audits", []), list):  # stated for a reader, never loaded
        raise StoreError(f"The manifest's audits are not a list. {_REFUSED}")
    specs = {}
    for name, entry in tables.items():
        if not isinstance(name, str) or not _TABLE_ENTRY.fullmatch(f"tables/{name}.parquet"):
            raise StoreError(f"The manifest names a table {quoted(name)}. {_REFUSED}")
        specs[name] = _table_v1(name, entry, folder)
    return tuple(migrations), specs


def _table_v1(name: str, entry: Any, folder: Path) -> TableSpec:
    problem = f"The manifest's entry for table {name} is malformed"
    if not isinstance(entry, dict) or set(entry) != {"file", "columns", "rows", "sha256"}:
        raise StoreError(f"{problem} (it needs file, columns, rows, sha256). {_REFUSED}")
    columns, rows, digest = entry["columns"], entry["rows"], entry["sha256"]
    if entry["file"] != f"tables/{name}.parquet":
        raise StoreError(f"{problem}: its file is {quoted(entry['file'])}. {_REFUSED}")
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
        raise StoreError(f"{problem}: rows is {quoted(rows)}. {_REFUSED}")
    if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise StoreError(f"{problem}: sha256 is {quoted(digest)}. {_REFUSED}")
    if not isinstance(columns, list) or not all(
        isinstance(c, list) and len(c) == 2 and all(isinstance(p, str) for p in c) for c in columns
    ):
        raise StoreError(f"{problem}: columns are not [name, type] pairs. {_REFUSED}")
    return TableSpec(
        name, tuple(Column(c, t) for c, t in columns), rows, digest, folder / f"{name}.parquet"
    )


Loader = Callable[[dict[str, Any], Path], tuple[tuple[str, ...], dict[str, TableSpec]]]
#: Every format version ever written, and its loader: an old bundle stays loadable.
LOADERS: dict[int, Loader] = {1: _specs_v1}
