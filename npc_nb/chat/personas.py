"""Personas ("NPCs"): defined in Python or as YAML ``.npc`` files in ``npc_team/``.

The file format is npcpy's: ``name``, ``primary_directive``, ``model``, ``provider``. The
folder is the team: every persona found in ``<project>/npc_team/`` belongs to a team
named after the project, so team-scoped memories reach all of them. A name defined
nowhere gets an ad-hoc persona with a generic research-assistant directive (the caller
is told, once).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

__all__ = ["ADHOC_DIRECTIVE", "Persona", "load_team", "validate_name"]

TEAM_FOLDER = "npc_team"
ADHOC_DIRECTIVE = (
    "You are a careful research assistant working with the user in a Jupyter notebook. "
    "Answer concisely, say when you are unsure, and use what you remember about the "
    "user and the project when it helps."
)
_NAME = re.compile(r"^[A-Za-z][\w.-]{0,63}$")
_KEYS = {"name", "primary_directive", "model", "provider"}
#: npcpy keys we accept and ignore, so existing team folders load unchanged.
_TOLERATED = {"tools", "use_global_tools", "jinxs", "mcp_servers", "api_url", "api_key_env"}


@dataclass(frozen=True)
class Persona:
    """Who the model plays: a name, a standing directive, optionally a model."""

    name: str
    directive: str
    model: str | None = None
    provider: str | None = None
    team: str | None = None
    source: str = "python"  # "python", a .npc file path, or "ad-hoc"

    @property
    def adhoc(self) -> bool:
        return self.source == "ad-hoc"

    @property
    def model_name(self) -> str | None:
        """The litellm model string, provider-prefixed when the file names a provider."""
        if self.model and self.provider and "/" not in self.model:
            return f"{self.provider}/{self.model}"
        return self.model


def validate_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"Persona name {name!r} is not valid: use letters, digits, '_', '-' or '.', "
            "starting with a letter (at most 64 characters)."
        )
    return name


def load_team(project_root: Path, team: str) -> dict[str, Persona]:
    """Every persona in ``<project>/npc_team/*.npc``; a malformed file is an error."""
    folder = project_root / TEAM_FOLDER
    if not folder.is_dir():
        return {}
    personas: dict[str, Persona] = {}
    for path in sorted(folder.glob("*.npc")):
        persona = _load_file(path, team)
        if persona.name in personas:
            raise ConfigError(
                f"Two files in {folder} define the persona {persona.name!r}: "
                f"{personas[persona.name].source} and {path}. Rename one."
            )
        personas[persona.name] = persona
    return personas


def _load_file(path: Path, team: str) -> Persona:
    import yaml  # only needed when a team folder exists

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}. Fix the file.") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8.") from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read the persona file {path}: {exc.strerror}.") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping with keys name and primary_directive.")
    unknown = sorted(set(data) - _KEYS - _TOLERATED)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r}. Allowed keys: {', '.join(sorted(_KEYS))}."
        )
    for key in ("name", "primary_directive"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ConfigError(f"{path}: key {key!r} is missing or not a non-empty string.")
    for key in ("model", "provider"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise ConfigError(f"{path}: key {key!r} must be a string, not {data[key]!r}.")
    name = data["name"].strip()
    try:
        validate_name(name)
    except ConfigError as exc:
        raise ConfigError(f"{path}: key 'name': {exc}") from exc
    return Persona(
        name,
        data["primary_directive"].strip(),
        data.get("model"),
        data.get("provider"),
        team,
        str(path),
    )
