"""Settings: one pydantic-settings model, strict about unknown keys.

Sources in decreasing priority: explicit arguments, environment (``NPC_NB_`` prefix),
``.env``, then a TOML file (``$NPC_NB_CONFIG_FILE``, else ``$NPC_NB_HOME/config.toml``,
else ``~/.npc_nb/config.toml``). Any unknown key, including a mistyped ``NPC_NB_``
environment variable, is an error that names it: a silently ignored typo would leave a
researcher believing a setting took effect. Secrets never live here; provider keys stay
in litellm's own environment variables.
"""

from __future__ import annotations

import html
import os
import tomllib
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from dotenv import dotenv_values
from pydantic import Field, PrivateAttr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from ...errors import ConfigError, InvalidValueError
from ..locations import user_home
from ..results import Snapshot
from ..store_url import check_store_url, redact, redact_text
from ..suggestions import closest, did_you_mean
from .environment import OwnEnvironment, parent_env_variables
from .reviewer import reviewer_name
from .view import SettingRow, settings_html, settings_rows, settings_text

__all__ = [
    "OFFLINE_MODEL",
    "Settings",
    "config_file_path",
    "load_settings",
    "unknown_setting",
    "user_home",
]

#: The built-in offline demo model: what runs when no model is configured.
OFFLINE_MODEL = "npc_nb/offline"
ENV_PREFIX = "NPC_NB_"
#: Environment variables that are read directly, not settings fields (NPC_NB_RERUN: the
#: replay a re-run forces on a kernel, read by models/recording.py).
_LOCATIONS = {"NPC_NB_CONFIG_FILE", "NPC_NB_HOME", "NPC_NB_RERUN"}


def config_file_path() -> Path:
    """The TOML file settings are read from (it need not exist)."""
    explicit = os.environ.get("NPC_NB_CONFIG_FILE")
    return Path(explicit).expanduser() if explicit else user_home() / "config.toml"


class Settings(BaseSettings):
    """Every tunable of npc_nb, with its default."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", validate_assignment=True
    )

    model: str | None = Field(None, description="litellm model name used when a persona has none")
    reviewer: str | None = Field(
        None,
        description="actor recorded on decisions (default: the OS user; on root or jovyan, "
        "git's user.name if set)",
    )
    context_max_chars: int = Field(32_000, ge=200, description="cap of the memory block")
    near_duplicate_threshold: float = Field(
        80.0,
        ge=50,
        le=100,
        description="meaning similarity (0-100, the offline embedding's cosine) at which "
        "the offline matcher lets one differing word be a rewording of the same fact",
    )
    matcher: str | Callable[..., Any] | None = Field(
        "auto",
        description="how a re-proposal is judged the same fact as a memory: 'auto' (the "
        "model judge when a provider model is configured, else 'offline'), 'offline', "
        "'model' (a judge through litellm), 'package.module:attr', a callable, or "
        "None (exact repeats only)",
    )
    match_model: str | None = Field(
        None,
        description="litellm model of the model judge (matcher 'auto' or 'model'; "
        "default: model, else offline)",
    )
    max_memory_chars: int = Field(2_000, ge=20, description="longest memory text accepted")
    lock_timeout: float = Field(
        10.0,
        ge=0,
        description="seconds to retry a locked store (on PostgreSQL: to wait for a lock)",
    )
    extraction_model: str | None = Field(
        None, description="litellm model for memory extraction (default: the chat model)"
    )
    concept_model: str | None = Field(
        None, description="litellm model for the graph's concepts (default: model, else offline)"
    )
    history_messages: int = Field(20, ge=0, description="earlier turns sent with each message")
    max_memories_per_exchange: int = Field(5, ge=1, le=50, description="extraction limit")
    extraction_attempts: int = Field(3, ge=1, description="tries before a job is failed")
    extraction_retry_delay: float = Field(
        1.0, ge=0, description="seconds before retrying a failed model call (doubles)"
    )
    extract_in_background: bool = Field(
        True, description="run extraction on a worker thread (False: only on wait())"
    )
    offline_delay: float = Field(
        0.0, ge=0, description="seconds the offline demo model takes to extract (demos, tests)"
    )
    idle_release: float = Field(
        0.25,
        ge=0,
        description="seconds a store file stays open after its last use once another "
        "process waits for it (0: closed after every use)",
    )
    store: str | None = Field(
        None,
        description="a shared store: postgresql://user@host:port/database "
        "(default: the embedded DuckDB file in the project's .npc_nb folder)",
    )
    project: str | None = Field(
        None,
        description="the project's name in a shared store (default: the project folder's name)",
    )
    pin: str | None = Field(
        None,
        description="a snapshot's label or id: every memory block is read as it stood then "
        "('now' takes a snapshot and pins to it; 'off' or None: the memory as it is)",
    )
    model_replay: Literal["off", "record", "replay"] = Field(
        "off",
        description="'record' keeps every model call's reply in the store; 'replay' answers "
        "each call from those recordings, never calling the model (an unrecorded call "
        "is an error)",
    )

    @field_validator("pin", mode="before")
    @classmethod
    def _pin(cls, value: object) -> object:
        if isinstance(value, Snapshot):
            return value.id
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "off")):
            return None
        return value.strip() if isinstance(value, str) else value

    review_mode: Literal["single", "independent"] = Field(
        "single",
        description="'single': a reviewer's decision is final; 'independent': reviewers vote "
        "blind, a card is final when its votes agree or an adjudicator decides",
    )
    reviewers_per_card: int = Field(
        2, ge=2, le=20, description="votes a card needs in independent review"
    )
    allow_self_adjudication: bool = Field(
        False,
        description="let a reviewer who voted on a card adjudicate it (independent review)",
    )

    @field_validator("reviewer")
    @classmethod
    def _reviewer(cls, value: str | None) -> str | None:
        if value is None:
            return None
        name = reviewer_name(value)
        if not name:
            raise ValueError("a reviewer's name must have a visible character")
        return name

    @field_validator("store")
    @classmethod
    def _store_url(cls, value: str | None) -> str | None:
        return None if value is None or not value.strip() else check_store_url(value)

    def __repr_args__(self) -> Any:
        # The store URL may carry a password: shown redacted in every repr.
        for name, value in super().__repr_args__():
            yield name, redact(value) if name == "store" and value else value

    #: Where each setting that is not at its default came from (``source_of``).
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    def source_of(self, name: str) -> str:
        """Where a setting's value came from: "default", "npc_nb.open()", "environment
        (NPC_NB_...)", ".env", the config file's path, or "this session"."""
        return self._sources.get(name, "default")

    def mark_source(self, name: str, source: str) -> None:
        self._sources[name] = source

    #: Variables left out because a parent folder's .env set them (``environment``).
    _ignored: dict[str, str] = PrivateAttr(default_factory=dict)

    def store_origin(self) -> str:
        """Where the store setting came from, and any store setting left out."""
        source = self.source_of("store")
        origin = "default: the project's own DuckDB file" if source == "default" else source
        left_out = [
            f"ignored {name} from {path} (a parent folder's .env, loaded into the "
            "environment by a dependency: only the working directory's .env counts)"
            for name, path in self._ignored.items()
            if name in ("NPC_NB_STORE", "NPC_NB_PROJECT")
        ]
        return "; ".join([origin, *left_out])

    #: Who decisions are recorded for, as the project opened with these settings says
    #: (``recording_as``): shown above the table.
    _recording: Callable[[], str] | None = PrivateAttr(default=None)

    def recording_as(self, describe: Callable[[], str]) -> None:
        self._recording = describe

    def _recording_line(self) -> str:
        return self._recording() if self._recording is not None else ""

    def _rows(self) -> list[SettingRow]:
        values = {name: getattr(self, name) for name in type(self).model_fields}
        return settings_rows(values, self._sources, OFFLINE_MODEL)

    def __str__(self) -> str:
        """One setting a line: name, the value in effect, where it came from."""
        line = self._recording_line()
        return f"{line}\n{settings_text(self._rows())}" if line else settings_text(self._rows())

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        line, table = self._recording_line(), settings_html(self._rows())
        shown = f"<p>{html.escape(line)}</p>{table}" if line else table
        return {"text/plain": str(self), "text/html": shown}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=config_file_path())
        own = OwnEnvironment(settings_cls)  # without what a dependency loaded (environment)
        return (init_settings, own, _PrefixedDotEnv(settings_cls), toml)


class _PrefixedDotEnv(PydanticBaseSettingsSource):
    """``.env`` in the working directory, reading only ``NPC_NB_*`` keys.

    The same file usually holds provider keys (``OPENAI_API_KEY=...``) for litellm; those
    are not ours to judge. A mistyped ``NPC_NB_`` key is still an error.
    """

    def __call__(self) -> dict[str, Any]:
        path = Path(".env")
        if not path.is_file():
            return {}
        try:
            values = dotenv_values(path)
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"{path.absolute()} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                "save it as UTF-8 (or remove the stray bytes)."
            ) from exc
        except OSError as exc:
            raise ConfigError(f"Cannot read {path.absolute()}: {exc.strerror}.") from exc
        ours = {k.upper(): v for k, v in values.items() if k.upper().startswith(ENV_PREFIX)}
        _refuse_unknown(ours, f"{path.absolute()}")
        return {k[len(ENV_PREFIX) :].lower(): v for k, v in ours.items() if k not in _LOCATIONS}

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False


def load_settings(**overrides: Any) -> Settings:
    """Build settings from every source, turning any problem into a ConfigError."""
    _refuse_unknown_environment_keys()
    path = config_file_path()
    try:
        settings = Settings(**overrides)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"Cannot parse the config file {path}: {exc}. Fix its syntax.") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"The config file {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
            "save it as UTF-8."
        ) from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read the config file {path}: {exc.strerror}.") from exc
    except ValidationError as exc:
        raise _invalid_source_value(exc, path) or ConfigError(_describe(exc, path)) from exc
    for name, source in _sources(overrides, path).items():
        settings.mark_source(name, source)
    settings._ignored = {name: str(where) for name, where in parent_env_variables().items()}
    return settings


def _sources(overrides: dict[str, Any], path: Path) -> dict[str, str]:
    """Which source gave each setting, in the order the sources are consulted (the file
    has parsed already, or loading would have failed)."""
    found: dict[str, str] = {}
    environment = {k.upper() for k in os.environ} - set(parent_env_variables())
    dotenv = _PrefixedDotEnv(Settings)()
    in_file = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for name in Settings.model_fields:
        variable = ENV_PREFIX + name.upper()
        if name in overrides:
            found[name] = "npc_nb.open()"
        elif variable in environment:
            found[name] = f"environment ({variable})"
        elif name in dotenv:
            found[name] = ".env"
        elif name in in_file:
            found[name] = str(path)
    return found


def _refuse_unknown_environment_keys() -> None:
    ignored = parent_env_variables()
    own = {k.upper(): v for k, v in os.environ.items() if k not in ignored}
    _refuse_unknown(own, "the environment")


def _refuse_unknown(variables: dict[str, Any], where: str) -> None:
    known = {ENV_PREFIX + name.upper() for name in Settings.model_fields} | _LOCATIONS
    unknown = sorted(k for k in variables if k.startswith(ENV_PREFIX) and k not in known)
    if unknown:
        raise ConfigError(
            f"Unknown setting in {where}: {', '.join(unknown)}."
            f"{_guess_variable(unknown[0], known)} "
            f"Known settings: {', '.join(sorted(known))}."
        )


def _guess_variable(variable: str, known: set[str]) -> str:
    """ " Did you mean NPC_NB_MODEL?" for NPC_NB_MODLE: judged without the prefix that
    every variable shares, so that it does not make a far name look close."""
    names = [name.removeprefix(ENV_PREFIX) for name in known]
    return did_you_mean(variable.removeprefix(ENV_PREFIX), names, show=ENV_PREFIX.__add__)


def unknown_setting(key: str) -> ConfigError:
    """The error for a setting name that is none of ``Settings``' fields (``configure``,
    ``%npc_config``): it names the closest, if one is close, and lists them all."""
    return ConfigError(
        f"Unknown setting {key!r}.{did_you_mean(key, Settings.model_fields)} "
        f"Known settings: {', '.join(Settings.model_fields)}."
    )


def invalid_setting(
    key: str, value: object, exc: ValueError, *, lead: str | None = None, hint: str = ""
) -> InvalidValueError:
    """The error for a value the setting ``key`` does not allow (``exc``: pydantic's
    ValidationError): ``allowed`` is the setting's closed set where it has one
    (``model_replay``: off, record, replay), else pydantic's words for what it takes;
    a check of our own (a store URL's) says why in the message. Neither the message
    nor ``value`` repeats a password the value holds."""
    if isinstance(value, str):
        value = redact_text(value)
    lead = lead or f"{key}={value!r} is not allowed"
    allowed: str | tuple[object, ...] = _choices(Settings.model_fields[key].annotation)
    if not allowed:
        reason, allowed = _takes(key, exc)
        hint = f"{reason} {hint}".strip()
    return InvalidValueError(key, value, allowed, lead=lead, hint=hint)


def _choices(annotation: Any) -> tuple[object, ...]:
    """The values a ``Literal`` annotation (or an optional one) allows; () if none."""
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    options = typing.get_args(annotation) if union else ()
    return next((c for option in options if (c := _choices(option))), ())


def _takes(key: str, exc: ValueError) -> tuple[str, str]:
    """Why the value was refused and what the setting takes, in pydantic's words ("a
    valid integer", "a value greater than or equal to 0"), or, when one of our own
    checks refused it, its reason and "a valid <key>"."""
    errors = getattr(exc, "errors", None)
    error = errors()[0] if callable(errors) else {"msg": str(exc), "type": "value_error"}
    message = redact_text(error["msg"])
    if error["type"] == "value_error":
        return message.removeprefix("Value error, ").rstrip(".") + ".", f"a valid {key}"
    words = message.removeprefix("Input should be ")
    return "", words if words.startswith(("a ", "an ")) else f"a value {words}"


def _invalid_source_value(exc: ValidationError, path: Path) -> InvalidValueError | None:
    """The first value a settings source holds that is not allowed, as an
    InvalidValueError; None when the problem is an unknown key (a ConfigError)."""
    error = exc.errors()[0]
    key = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "extra_forbidden" or key not in Settings.model_fields:
        return None
    value = error.get("input")
    shown = redact_text(value) if isinstance(value, str) else value
    return invalid_setting(
        key,
        value,
        exc,
        lead=f"Invalid configuration: {key} = {shown!r} is not allowed",
        hint=f"Check the arguments, the {ENV_PREFIX}* environment variables, .env and {path}.",
    )


def _describe(exc: ValidationError, path: Path) -> str:
    problems = []
    for error in exc.errors():
        key = ".".join(str(part) for part in error["loc"]) or "(settings)"
        if error["type"] == "extra_forbidden":
            guess = closest(key, Settings.model_fields)
            meant = f" (did you mean {guess[0]!r}?)" if guess else ""
            problems.append(f"unknown setting {key!r}{meant}")
        else:
            shown = redact_text(repr(error.get("input")))
            problems.append(f"{key} = {shown}: {redact_text(error['msg'])}")
    return (
        f"Invalid configuration: {'; '.join(problems)}. Check the arguments, the "
        f"{ENV_PREFIX}* environment variables, .env and {path}. "
        f"Known settings: {', '.join(Settings.model_fields)}."
    )
