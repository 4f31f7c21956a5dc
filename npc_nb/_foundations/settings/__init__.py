"""Settings: what a user may configure, where each value came from, and who reviews.

``model`` is the one pydantic-settings model (strict about unknown keys; arguments,
environment, ``.env``, TOML), ``view`` shows the settings as a table (``%npc_config``),
and ``reviewer`` decides the default reviewer's name. The names the rest of npc_nb uses
are re-exported here, so ``from npc_nb._foundations.settings import Settings`` reads
as it did when this was one module.
"""

from .model import (
    OFFLINE_MODEL,
    Settings,
    config_file_path,
    invalid_setting,
    load_settings,
    unknown_setting,
    user_home,
)

__all__ = [
    "OFFLINE_MODEL",
    "Settings",
    "config_file_path",
    "invalid_setting",
    "load_settings",
    "unknown_setting",
    "user_home",
]
