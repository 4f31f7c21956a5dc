"""Personas ("NPCs"): defined in Python or as YAML ``.npc`` files in ``npc_team/``.

The file format is npcpy's. npc_nb uses ``name``, ``primary_directive``, ``model`` and
``provider``; npcpy's other keys (``jinxes``, ``tools``, ``mcp_servers``, ...) are
accepted and ignored, so a team folder written for npcpy loads as it is, and any other
key is an error naming it (a typo must not silently drop a directive). Reading the
folder, the team's ``.ctx`` file and broken files is ``team.py``'s job. A name defined
nowhere gets an ad-hoc persona with a generic research-assistant directive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

from .._foundations.markup import plain_text
from .._foundations.suggestions import closest
from ..errors import ConfigError
from .npcpy_yaml import TeamFile, quoted

__all__ = [
    "ADHOC_DIRECTIVE",
    "IGNORED_NPCPY_KEYS",
    "Npc",
    "closest_names",
    "litellm_model",
    "persona_from_file",
    "validate_name",
]

ADHOC_DIRECTIVE = (
    "You are a careful research assistant working with the user in a Jupyter notebook. "
    "Answer concisely, say when you are unsure, and use what you remember about the "
    "user and the project when it helps."
)
_NAME = re.compile(r"^[A-Za-z][\w.-]{0,63}$")
_KEYS = ("name", "primary_directive", "model", "provider")
#: npcpy keys npc_nb accepts and ignores: tools, jinxes, servers, credentials and looks.
#: (``api_key`` is ignored, never read: npc_nb keeps no secrets.)
IGNORED_NPCPY_KEYS = (
    "jinxes",
    "jinxs",
    "use_global_jinxes",
    "use_global_jinxs",
    "tools",
    "use_global_tools",
    "mcp_servers",
    "api_url",
    "api_key",
    "api_key_env",
    "plain_system_message",
    "team",
    "memory",
    "ascii_art",
    "colors",
)


@dataclass(frozen=True)
class Npc:
    """Who the model plays: a name, a standing directive, optionally a model.

    ``team_context`` is the ``context`` of the team's ``.ctx`` file, for personas
    defined in ``npc_team/``; it follows the directive in the prompt's static prefix.
    """

    name: str
    directive: str
    model: str | None = None
    provider: str | None = None
    team: str | None = None
    source: str = "python"  # "python", a .npc file path, or "ad-hoc"
    team_context: str | None = None

    @property
    def adhoc(self) -> bool:
        return self.source == "ad-hoc"

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        """In a notebook: "persona analyst (defined in Python): its directive", not the
        dataclass's repr; the directive is shown as text."""
        where = {"python": "defined in Python", "ad-hoc": "ad hoc"}.get(
            self.source, f"from {self.source}"
        )
        model = f", model {self.model_name}" if self.model_name else ""
        head = f"persona {self.name} ({where}{model})"
        return {
            "text/plain": plain_text(f"{head}: {self.directive}"),
            "text/html": f"<p><b>{escape(head)}</b>: {escape(self.directive)}</p>",
        }

    @property
    def model_name(self) -> str | None:
        """The litellm model string, provider-prefixed when the file names a provider."""
        return litellm_model(self.model, self.provider)


def litellm_model(model: str | None, provider: str | None) -> str | None:
    """npcpy's model and provider as one litellm model string: ``provider/model``."""
    if model and provider and "/" not in model:
        return f"{provider}/{model}"
    return model


def validate_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(
            f"Persona name {quoted(name)} is not valid: use letters, digits, '_', '-' or '.', "
            "starting with a letter (at most 64 characters)."
        )
    return name


def closest_names(name: str, known: Iterable[str]) -> list[str]:
    """The defined names a mistyped ``name`` most likely meant, best first (at most 3)."""
    return closest(name, known, n=3, cutoff=0.75)


def persona_from_file(
    file: TeamFile,
    team: str,
    *,
    default_model: str | None = None,
    default_provider: str | None = None,
    team_context: str | None = None,
) -> Npc:
    """The persona a parsed ``.npc`` file defines; a bad key is a ``ConfigError``.

    ``default_model`` and ``default_provider`` (the team's ``.ctx``) fill what the file
    leaves out, key by key, as npcpy does. A file without ``name`` is named after itself.
    """
    path = file.path
    unknown = [k for k in file.key_names() if k not in _KEYS and k not in IGNORED_NPCPY_KEYS]
    if unknown:
        guess = closest(unknown[0], [*_KEYS, *IGNORED_NPCPY_KEYS])
        meant = f" (did you mean {guess[0]!r}?)" if guess else ""
        raise ConfigError(
            f"{path}: unknown key {quoted(unknown[0])}{meant}. npc_nb reads "
            f"{', '.join(_KEYS)} and ignores npcpy's {', '.join(IGNORED_NPCPY_KEYS)}."
        )
    directive = file.get("primary_directive")
    if not isinstance(directive, str) or not directive.strip():
        raise ConfigError(f"{path}: key 'primary_directive' is missing or not a non-empty string.")
    fields = {key: file.get(key) for key in ("name", "model", "provider")}
    for key, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{path}: key {key!r} must be a string, not {quoted(value)}.")
    name = (fields["name"] or path.stem).strip()
    try:
        validate_name(name)
    except ConfigError as exc:
        raise ConfigError(f"{path}: key 'name': {exc}") from exc
    return Npc(
        name,
        directive.strip(),
        fields["model"] or default_model,
        fields["provider"] or default_provider,
        team,
        str(path),
        team_context,
    )
