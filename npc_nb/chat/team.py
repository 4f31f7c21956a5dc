"""The ``npc_team/`` folder: its personas, the team's ``.ctx`` file, and broken files.

A team folder is shared, and one bad file must not take the others down: each file is
read on its own, and one that cannot be used is kept as a ``BrokenFile`` with its error
(listed by ``nb.npcs()`` and ``%npc_status``; raised when that persona is asked for)
instead of failing the whole team. The team's context file is npcpy's: ``*.ctx`` in the
folder (``team.ctx`` when there are several). Its ``context`` joins the team's personas'
prompt prefix, and its ``model`` and ``provider`` fill in for personas that name none.
Every file is read as bounded data from inside the project (``team_source.py``): a link
out of it, a file that is not a regular file or one over the size limit is broken too,
and a folder ``npc_team`` that links out of the project is one broken entry, its files
not even listed.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from .npcpy_yaml import TeamFile, quoted, read_team_file
from .personas import Npc, persona_from_file
from .team_source import inside_project

__all__ = ["TEAM_FOLDER", "BrokenFile", "Team", "TeamContext", "load_team"]

TEAM_FOLDER = "npc_team"
_PREFERRED_CONTEXT = "team.ctx"
#: How a team file is read: its path and what a valid one holds, to its parse.
Reader = Callable[[Path, str], TeamFile]


@dataclass(frozen=True)
class BrokenFile:
    """A team file that cannot be used, and why (the error names the file)."""

    path: str
    error: str
    name: str | None = None  # the persona it was to define (its file name), for a .npc


@dataclass(frozen=True)
class TeamContext:
    """What npc_nb reads of the team's ``.ctx`` file; npcpy's other keys are ignored."""

    path: str
    context: str | None = None
    model: str | None = None
    provider: str | None = None


@dataclass(frozen=True)
class Team:
    """Everything in one ``npc_team/`` folder."""

    personas: dict[str, Npc] = field(default_factory=dict)
    broken: tuple[BrokenFile, ...] = ()
    context: TeamContext | None = None
    notes: tuple[str, ...] = ()  # what was read but set aside (extra .ctx files)

    def broken_persona(self, name: str) -> BrokenFile | None:
        return next((b for b in self.broken if b.name == name), None)


def load_team(project_root: Path, team: str, read: Reader | None = None) -> Team:
    """Every persona in ``<project>/npc_team/*.npc``, with the team's ``.ctx`` applied.
    ``read`` parses one file (``read_team_file`` unless given: ``TeamFolder`` passes
    one that keeps parses while their files are unchanged)."""
    if read is None:
        read = functools.partial(_read_now, root=project_root)
    folder = project_root / TEAM_FOLDER
    if not folder.is_dir():
        return Team()
    try:
        inside_project(folder, project_root)
    except ConfigError as exc:
        return Team(broken=(BrokenFile(str(folder), str(exc)),))
    broken: list[BrokenFile] = []
    context, notes = _team_context(folder, read, broken)
    loaded: list[Npc] = []
    for path in sorted(folder.glob("*.npc")):
        try:
            loaded.append(
                persona_from_file(
                    read(path, "name and primary_directive"),
                    team,
                    default_model=context.model if context else None,
                    default_provider=context.provider if context else None,
                    team_context=context.context if context else None,
                )
            )
        except ConfigError as exc:
            broken.append(BrokenFile(str(path), str(exc), path.stem))
    personas, clashes = _without_clashes(loaded, folder)
    return Team(personas, (*broken, *clashes), context, notes)


def _without_clashes(loaded: list[Npc], folder: Path) -> tuple[dict[str, Npc], list[BrokenFile]]:
    """The personas by name; two files claiming one name are both broken (which one was
    meant cannot be guessed)."""
    counts = Counter(p.name for p in loaded)
    clashes = []
    for name in (n for n, count in counts.items() if count > 1):
        sources = [p.source for p in loaded if p.name == name]
        error = (
            f"Several files in {folder} define the persona {name!r}: "
            f"{', '.join(sources)}. Rename all but one."
        )
        clashes += [BrokenFile(source, error, name) for source in sources]
    return {p.name: p for p in loaded if counts[p.name] == 1}, clashes


def _read_now(path: Path, what: str, *, root: Path) -> TeamFile:
    return read_team_file(path, what, root=root)


def _team_context(
    folder: Path, read: Reader, broken: list[BrokenFile]
) -> tuple[TeamContext | None, tuple]:
    """The team's ``.ctx`` file, if there is one; a broken one joins ``broken``."""
    files = sorted(folder.glob("*.ctx"))
    if not files:
        return None, ()
    chosen = next((f for f in files if f.name == _PREFERRED_CONTEXT), files[0])
    ignored = [f.name for f in files if f != chosen]
    notes = (
        (f"several .ctx files in {folder}: using {chosen.name}, ignoring {', '.join(ignored)}",)
        if ignored
        else ()
    )
    try:
        file = read(chosen, "context, model and provider")
        return _read_context(file), notes
    except ConfigError as exc:
        broken.append(BrokenFile(str(chosen), str(exc)))
        return None, notes


def _read_context(file: TeamFile) -> TeamContext:
    values = {key: file.get(key) for key in ("context", "model", "provider")}
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{file.path}: key {key!r} must be text, not {quoted(value)}.")
    cleaned = {key: (value.strip() or None) if value else None for key, value in values.items()}
    return TeamContext(str(file.path), **cleaned)
