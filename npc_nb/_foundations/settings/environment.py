"""The environment as settings read it: only what the user set, never a parent folder's
``.env`` that a dependency loaded.

litellm calls python-dotenv's ``load_dotenv()`` when it is imported. In a notebook that
walks up from the working directory to the nearest ``.env`` and copies its variables
into ``os.environ``, so a project folder nested in another (a thesis inside the lab's
folder) would read the parent's ``NPC_NB_STORE`` and open the parent's shared store,
while a script in the same folder would not. Settings therefore leave out an ``NPC_NB_*``
variable that a parent folder's ``.env`` sets to the same value, unless it was already
in the environment when npc_nb was imported before litellm (then the user set it). The
working directory's own ``.env`` is read as a source of its own (``model``); what was
left out is remembered, so ``%npc_status`` can say so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values
from pydantic_settings import EnvSettingsSource

__all__ = ["OwnEnvironment", "parent_env_variables"]

PREFIX = "NPC_NB_"
#: What the environment held when npc_nb was imported, and whether litellm (which loads
#: a .env) had been imported already: then nothing here is known to be the user's.
_AT_IMPORT = {k.upper(): v for k, v in os.environ.items() if k.upper().startswith(PREFIX)}
_LITELLM_FIRST = "litellm" in sys.modules


def parent_env_variables() -> dict[str, Path]:
    """{variable: the parent folder's .env it came from} for each ``NPC_NB_*`` variable
    that a ``.env`` above the working directory sets to its value, and that the user did
    not set before (see the module's docstring). Empty when the working directory has a
    ``.env``: that is the one dotenv loads."""
    here = Path.cwd()
    if (here / ".env").is_file():
        return {}
    found = _nearest_parent_env(here)
    if found is None:
        return {}
    try:
        values = {k.upper(): v for k, v in dotenv_values(found).items()}
    except (OSError, UnicodeDecodeError):
        return {}
    return {
        name: found
        for name, value in os.environ.items()
        if name.upper().startswith(PREFIX)
        and values.get(name.upper()) == value
        and (_LITELLM_FIRST or _AT_IMPORT.get(name.upper()) != value)
    }


def _nearest_parent_env(here: Path) -> Path | None:
    for folder in here.parents:
        candidate = folder / ".env"
        if candidate.is_file():
            return candidate
    return None


class OwnEnvironment(EnvSettingsSource):
    """The environment source of the settings, without ``parent_env_variables``."""

    def _load_env_vars(self) -> Mapping[str, str | None]:
        ignored = {name.upper() for name in parent_env_variables()}
        found = super()._load_env_vars()
        return {name: value for name, value in found.items() if name.upper() not in ignored}
