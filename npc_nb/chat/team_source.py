"""A team file's text: a regular file inside the project, at most ``MAX_BYTES``, read once.

A team folder is shared (a repository, a synced folder), so what it holds is not
trusted to stay in its place. A link (``npc_team/x.npc`` or ``npc_team/`` itself) is
followed only to a file inside the project: a link out of it could put any file the
user can read (a credentials file) into a prompt or an error message, so it is refused,
and the message names the link, never what it points to. Only a regular file is read:
a FIFO would block, a device (``/dev/zero``) never ends, a folder named ``x.npc`` is
not a file. The resolved path is opened once, without following a final link; what
it is and its size are checked on the open descriptor (what is checked is what is
read), and at most one byte over the limit is read, so a file that grows while it is
read is still bounded. ``file_state`` makes the same refusals by ``stat`` alone (nothing
is opened), for a caller that keeps a parse while the file's state stays the same.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

__all__ = ["MAX_BYTES", "FileState", "file_state", "inside_project", "read_source"]

#: The largest team file read (npcpy's own files are a few kilobytes).
MAX_BYTES = 1_000_000
#: Open without following a final link (the path is already resolved) and without
#: waiting for a FIFO's writer; the descriptor is then checked to be a regular file.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True)
class FileState:
    """What ``stat`` says of a team file: while it is the same, so is the file's text
    (a rewrite within one tick of the clock at one size aside: see ``team_folder``)."""

    real: str
    size: int
    mtime_ns: int
    inode: int
    device: int


def file_state(path: Path, root: Path) -> FileState:
    """The state of the team file ``path``, refused as ``read_source`` would refuse it (a
    link out of the project, not a regular file, over ``MAX_BYTES``), by ``stat`` only."""
    real = inside_project(path, root)
    try:
        info = os.stat(real, follow_symlinks=False)
    except OSError as exc:
        raise ConfigError(f"Cannot read the team file {path}: {exc.strerror}.") from None
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(path)
    if info.st_size > MAX_BYTES:
        raise _too_large(path)
    return FileState(str(real), info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)


def read_source(path: Path, root: Path) -> str:
    """The UTF-8 text of the team file ``path``; a ``ConfigError`` naming ``path`` when it
    is not a regular file inside the project folder ``root``, or is over ``MAX_BYTES``."""
    real = inside_project(path, root)
    try:
        descriptor = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        raise ConfigError(f"Cannot read the team file {path}: {exc.strerror}.") from None
    try:
        data = _read_regular_file(descriptor, path)
    finally:
        os.close(descriptor)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8.") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as a text-mode read would


def _read_regular_file(descriptor: int, path: Path) -> bytes:
    """The bytes behind an open ``descriptor``, when it is a regular file of at most
    ``MAX_BYTES`` (its size checked before reading, and again by reading one byte more,
    in case it grows meanwhile)."""
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode):
        raise _not_regular(path)
    if info.st_size > MAX_BYTES:
        raise _too_large(path)
    chunks: list[bytes] = []
    wanted = MAX_BYTES + 1
    while wanted > 0 and (chunk := os.read(descriptor, wanted)):
        chunks.append(chunk)
        wanted -= len(chunk)
    if wanted == 0:
        raise _too_large(path)
    return b"".join(chunks)


def _not_regular(path: Path) -> ConfigError:
    return ConfigError(f"{path} is not a regular file; a team file is a text file in npc_team/.")


def _too_large(path: Path) -> ConfigError:
    return ConfigError(
        f"{path} is larger than {MAX_BYTES // 1_000_000} MB, the limit for a team file; "
        "a persona's directive or a team's context should be far shorter."
    )


def inside_project(path: Path, root: Path) -> Path:
    """Where ``path`` (a file or a folder) really is, when that is inside ``root``; its
    links are followed only to check, and a refusal names ``path`` alone, never its
    target."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):  # missing target, or a loop (RuntimeError before 3.13)
        raise ConfigError(
            f"{path} is a link to nothing (a missing file or a loop of links); "
            "remove it or point it at a file in the project."
        ) from None
    if not real.is_relative_to(root.resolve()):
        raise ConfigError(
            f"{path} is a link to something outside the project {root}; npc_nb reads "
            "team files only inside the project. Copy the file into npc_team/ instead."
        )
    return real
