"""The ``npc_team/`` folder read once per change, not on every turn.

Every turn needs the team (its personas, its ``.ctx``), and parsing is what costs: a
legal 1 MB team file takes seconds. Team files rarely change, so ``TeamFolder`` keeps
each file's parse under what ``stat`` says of it (``team_source.FileState``: its real
path, size, modification time in nanoseconds, inode and device) and, while no file's
state changed, the ``Team`` built from them.

Every turn still looks at every entry, by cheap calls only (the folder listing, where
each entry leads, one ``stat``): so each refusal of ``team_source`` (a link out of the
project, a file that is not a regular file, one over the size limit) holds from the
very next turn, and a file only ever read is parsed again the moment its state
changes. A file removed is dropped, a file added is read. The parse itself still goes
through ``read_team_file``, which checks on the open descriptor what it reads.

A file rewritten twice within one tick of the file system's clock, at the same size,
would show the same state, so a parse is kept only once its file is older than
``SETTLED_NS`` when read (what git does with "racy" index entries): a file edited
in the last two seconds is parsed on each turn until then.
"""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from .npcpy_yaml import TeamFile, read_team_file
from .team import TEAM_FOLDER, Team, load_team
from .team_source import FileState, file_state, inside_project

__all__ = ["SETTLED_NS", "TeamFolder"]

#: How old a file must be (by its modification time) for its parse to be kept.
SETTLED_NS = 2_000_000_000
#: What one look at the folder saw: each entry's path and its state, or why it is refused.
_Look = tuple[tuple[str, "FileState | str"], ...]


@dataclass(frozen=True)
class _Parsed:
    """A file's parse (or why it cannot be used), and the state it was read at."""

    state: FileState
    what: str
    file: TeamFile | None
    error: str | None


@dataclass
class _Round:
    """One ``load``: the states looked at, the parses kept for the next, and whether
    every file read was settled (only then is the team kept as well)."""

    states: dict[str, FileState | str]
    kept: dict[str, _Parsed] = field(default_factory=dict)
    settled: bool = True


class TeamFolder:
    """One project's ``npc_team/`` folder; ``load()`` is the team now. ``parses`` counts
    the files parsed so far (what the cache saves is visible, and testable)."""

    def __init__(self, root: Path, team: str) -> None:
        self.root = root
        self.team = team
        self.parses = 0
        self._parsed: dict[str, _Parsed] = {}
        self._look: _Look | None = None  # what the kept team was built from
        self._built: Team | None = None
        self._lock = threading.Lock()

    def load(self) -> Team:
        """The team as its files are now: the one built last time when no file changed."""
        with self._lock:
            look = self._look_now()
            if self._built is not None and look == self._look:
                return self._built
            now = _Round(dict(look))
            team = load_team(self.root, self.team, read=functools.partial(self._read, now))
            self._parsed = now.kept  # a file removed (or no longer read) is dropped
            self._built, self._look = team, (look if now.settled else None)
            return team

    def _look_now(self) -> _Look:
        """Every entry of the folder and its state, by cheap calls (nothing is read)."""
        folder = self.root / TEAM_FOLDER
        if not folder.is_dir():
            return ()
        try:
            real = inside_project(folder, self.root)
        except ConfigError as exc:
            return ((str(folder), str(exc)),)
        entries: list[tuple[str, FileState | str]] = [(str(folder), str(real))]
        for path in sorted(folder.glob("*.npc")) + sorted(folder.glob("*.ctx")):
            try:
                entries.append((str(path), file_state(path, self.root)))
            except ConfigError as exc:
                entries.append((str(path), str(exc)))
        return tuple(entries)

    def _read(self, now: _Round, path: Path, what: str) -> TeamFile:
        """``path`` parsed: kept from an earlier turn while its state is the same, else
        parsed now (and kept, once the file is settled); its refusal, if any."""
        state = now.states.get(str(path))
        if not isinstance(state, FileState):  # refused when looked at, or new since
            state = file_state(path, self.root)  # a refusal raises here, every turn
        parsed = self._parsed.get(str(path))
        if parsed is None or parsed.state != state or parsed.what != what:
            settled = time.time_ns() - state.mtime_ns >= SETTLED_NS  # before reading
            parsed = self._parse(path, what, state)
            if not settled:
                now.settled = False
                return _result(parsed)
        now.kept[str(path)] = parsed
        return _result(parsed)

    def _parse(self, path: Path, what: str, state: FileState) -> _Parsed:
        self.parses += 1
        try:
            return _Parsed(state, what, read_team_file(path, what, root=self.root), None)
        except ConfigError as exc:
            return _Parsed(state, what, None, str(exc))


def _result(parsed: _Parsed) -> TeamFile:
    if parsed.file is None:
        raise ConfigError(parsed.error)
    return parsed.file
