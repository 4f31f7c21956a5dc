"""Another tool's file, read as hostile input: bounded, regular, decoded record by record.

A file to import is opened once, without following a final link and without waiting
on a FIFO; it must be a regular file of at most ``MAX_TEXT_BYTES`` (a text format:
YAML, JSON) or ``MAX_SQLITE_BYTES`` (SQLite, which is read a table at a time, never
whole), checked on the open descriptor and again by reading one byte past the limit.
Text is decoded as UTF-8 with the bytes that are not UTF-8 kept as lone surrogates
(``surrogateescape``), so a record holding them is refused on its own when its text
is checked (``add_candidate`` refuses text that is not valid Unicode), and the other
records are imported. ``sqlite_file`` tells a SQLite database by its header.
"""

from __future__ import annotations

import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ConfigError

__all__ = [
    "MAX_SQLITE_BYTES",
    "MAX_TEXT_BYTES",
    "SourceFile",
    "open_source",
    "sqlite_file",
]

#: The largest YAML or JSON file imported (thousands of memories take a few MB).
MAX_TEXT_BYTES = 64_000_000
#: The largest SQLite file imported (read a table at a time, at most ``MAX_ROWS`` rows).
MAX_SQLITE_BYTES = 2_000_000_000
_SQLITE_HEADER = b"SQLite format 3\x00"
#: What ``surrogateescape`` made of bytes that are not UTF-8.
_BAD_BYTES = re.compile("[\udc80-\udcff]")
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class SourceFile:
    """A checked input file: its path, size and modification time, and (a text
    format) its decoded text."""

    def __init__(self, path: Path, size: int, modified: datetime, text: str | None) -> None:
        self.path = path
        self.size = size
        self.modified = modified  # naive UTC
        self.text = text

    @property
    def has_bad_bytes(self) -> bool:
        """Whether the text held bytes that are not UTF-8 (kept as lone surrogates)."""
        return self.text is not None and _BAD_BYTES.search(self.text) is not None


def sqlite_file(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts with SQLite's header."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError:
        return False
    try:
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
        return regular and os.pread(descriptor, len(_SQLITE_HEADER), 0) == _SQLITE_HEADER
    finally:
        os.close(descriptor)


def open_source(path: str | os.PathLike[str], what: str) -> SourceFile:
    """The checked file at ``path`` (``what`` names the format for messages): its text,
    unless it is a SQLite file. Refusals are ConfigErrors naming the file."""
    given = Path(path).expanduser()
    resolved = _resolved(given, what)
    try:
        descriptor = os.open(resolved, _OPEN_FLAGS)
    except OSError as exc:
        raise ConfigError(f"Cannot read {given}: {exc.strerror}.") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{given} is not a regular file; name the {what} file itself.")
        is_sqlite = os.pread(descriptor, len(_SQLITE_HEADER), 0) == _SQLITE_HEADER
        limit = MAX_SQLITE_BYTES if is_sqlite else MAX_TEXT_BYTES
        if info.st_size > limit:
            raise _too_large(given, limit, what)
        data = None if is_sqlite else _read_bounded(descriptor, given, limit, what)
    finally:
        os.close(descriptor)
    modified = datetime.fromtimestamp(info.st_mtime, UTC).replace(tzinfo=None)
    text = None if data is None else data.decode("utf-8", "surrogateescape")
    if text is not None and text.startswith("\ufeff"):
        text = text[1:]  # a byte-order mark is not part of the data
    return SourceFile(resolved, info.st_size, modified, text)


def _resolved(given: Path, what: str) -> Path:
    if "\x00" in str(given):
        raise ConfigError(f"The {what} path holds a NUL character.")
    try:
        return given.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ConfigError(
            f"No {what} file at {given} (or it is a link to nothing): check the path."
        ) from None


def _read_bounded(descriptor: int, path: Path, limit: int, what: str) -> bytes:
    chunks: list[bytes] = []
    wanted = limit + 1
    while wanted > 0 and (chunk := os.read(descriptor, min(wanted, 1 << 20))):
        chunks.append(chunk)
        wanted -= len(chunk)
    if wanted <= 0:
        raise _too_large(path, limit, what)
    return b"".join(chunks)


def _too_large(path: Path, limit: int, what: str) -> ConfigError:
    return ConfigError(
        f"{path} is larger than {limit // 1_000_000:,} MB, the limit for a {what} file "
        "npc_nb imports; split it into smaller files and import each."
    )
