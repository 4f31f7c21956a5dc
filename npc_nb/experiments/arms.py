"""An arm: one extractor's whole configuration, checked, recorded and run on an exchange.

An arm names any of ``model`` (or ``extraction_model``), ``prompt`` (the extraction
prompt's text) or ``prompt_file`` (a file holding it), ``prompt_version`` (a label; by
default the prompt's own hash), ``max_memories_per_exchange`` and ``temperature``; what
it leaves out is what the persona's live extraction uses at creation (the model: the
``extraction_model`` setting, else the persona's model, the ``model`` setting, the
offline model; the project's limit per exchange; the built-in prompt), so an arm changes
only what it names. ``extractor``, a Python callable
``(user_text, reply_text) -> JSON text``, stands in for a model (a scripted arm); it is
recorded by its qualified name. The configuration recorded is complete (every key, the
prompt's full text), as JSON with sorted keys, and hashed: the same arms give the same
hash, so a kernel that opens the experiment again knows it is the same one (resolved
again under other settings, the same arms are another configuration, and refused).

Arms see the exchange and nothing else: no reviewed examples of live memory (which
would change while the arms run, and differ between them), so both arms of a pair
extract from the same input.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._foundations.settings import Settings
from .._foundations.suggestions import did_you_mean
from ..chat import prompts
from ..errors import ConfigError
from ..models import gateway, offline
from ..models.recording import Recorder

__all__ = ["ARM_KEYS", "Arm", "checked_arms"]

ARM_KEYS = (
    "model",
    "extraction_model",
    "prompt",
    "prompt_file",
    "prompt_version",
    "max_memories_per_exchange",
    "temperature",
    "extractor",
)
Extractor = Callable[[str, str], str]


@dataclass(frozen=True)
class Arm:
    """One arm as recorded: its name, position, configuration (JSON-ready) and hash,
    and the callable standing in for a model, if any (kept in this process only)."""

    name: str
    position: int
    config: dict[str, Any]
    extractor: Extractor | None = None

    @property
    def config_json(self) -> str:
        return json.dumps(self.config, sort_keys=True)

    @property
    def config_hash(self) -> str:
        return hashlib.sha256(self.config_json.encode()).hexdigest()[:16]

    @property
    def model(self) -> str:
        return str(self.config["model"])

    @property
    def limit(self) -> int:
        return int(self.config["max_memories_per_exchange"])

    def messages(self, user_text: str, reply_text: str) -> list[dict[str, str]]:
        """The extraction prompt for one exchange under this arm (no reviewed examples)."""
        messages = prompts.extraction_messages(user_text, reply_text, {}, self.limit)
        if self.config["prompt"] is not None:
            rules = self.config["prompt"].replace("{limit}", str(self.limit))
            if offline.EXTRACTION_MARKER not in rules:  # the offline model knows it by this
                rules = f"{offline.EXTRACTION_MARKER}\n{rules}"
            messages[0] = {"role": "system", "content": rules}
        return messages

    def extract(
        self, user_text: str, reply_text: str, settings: Settings, recorder: Recorder, caller: str
    ) -> str:
        """The arm's raw answer for one exchange: its callable's, or its model's (recorded
        or replayed under the project's ``model_replay``)."""
        if self.extractor is not None:
            return str(self.extractor(user_text, reply_text))
        options: dict[str, Any] = {}
        if self.config["temperature"] is not None:
            options["temperature"] = self.config["temperature"]
        if offline.is_offline(self.model):
            options = {"max_memories": self.limit, "offline_delay": settings.offline_delay}
        messages = self.messages(user_text, reply_text)
        recording = recorder.recording(caller)
        return gateway.complete(self.model, messages, recording=recording, **options).text


def checked_arms(arms: object, settings: Settings, folder: Path, default_model: str) -> list[Arm]:
    """The arms as recorded, in the order given; a ConfigError says what is wrong.
    ``default_model`` is the model of an arm that names none (its persona's extraction)."""
    if not isinstance(arms, dict) or len(arms) < 2:
        raise ConfigError(
            'An experiment needs at least two arms: arms={"A": {...}, "B": {...}}, each a '
            "dict of model, prompt, prompt_file, prompt_version, max_memories_per_exchange, "
            "temperature or extractor."
        )
    return [_arm(name, position, spec, settings, folder, default_model) for position,
            (name, spec) in enumerate(arms.items())]  # fmt: skip


def _arm(
    name: object, position: int, spec: object, settings: Settings, folder: Path, model: str
) -> Arm:
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"An arm's name must be non-empty text, not {name!r}.")
    if not isinstance(spec, dict):
        raise ConfigError(f"Arm {name!r} must be a dict of settings, not {type(spec).__name__}.")
    for key in spec:
        if key not in ARM_KEYS:
            hint = did_you_mean(str(key), ARM_KEYS)
            raise ConfigError(f"Arm {name!r}: unknown key {key!r}.{hint} It accepts {ARM_KEYS}.")
    extractor = spec.get("extractor")
    if extractor is not None and not callable(extractor):
        raise ConfigError(f"Arm {name!r}: extractor must be a callable (user, reply) -> JSON.")
    prompt = _prompt(name, spec, folder)
    limit = spec.get("max_memories_per_exchange", settings.max_memories_per_exchange)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConfigError(f"Arm {name!r}: max_memories_per_exchange must be a whole number >= 1.")
    model = spec.get("model", spec.get("extraction_model")) or model
    version = spec.get("prompt_version")
    if version is None:
        text = prompt or ""
        version = hashlib.sha256(text.encode()).hexdigest()[:12] if prompt else None
        version = version or prompts.EXTRACTION_VERSION
    config = {
        "model": None if extractor is not None else str(model),
        "prompt": prompt,
        "prompt_version": str(version),
        "max_memories_per_exchange": limit,
        "temperature": spec.get("temperature"),
        "extractor": _qualified(extractor) if extractor is not None else None,
    }
    return Arm(name, position, config, extractor)


def _prompt(name: str, spec: dict, folder: Path) -> str | None:
    """The arm's prompt text: given, or read from its file (relative to the project)."""
    if spec.get("prompt") is not None and spec.get("prompt_file") is not None:
        raise ConfigError(f"Arm {name!r}: give prompt or prompt_file, not both.")
    if spec.get("prompt_file") is not None:
        path = Path(spec["prompt_file"])
        path = path if path.is_absolute() else folder / path
        try:
            return path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"Arm {name!r}: cannot read prompt_file {str(path)!r} ({exc.strerror}); "
                "give a readable file, or the text as prompt=."
            ) from None
    prompt = spec.get("prompt")
    if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
        raise ConfigError(f"Arm {name!r}: prompt must be non-empty text.")
    return prompt


def _qualified(function: Callable[..., Any]) -> str:
    module = getattr(function, "__module__", None) or "?"
    return f"{module}:{getattr(function, '__qualname__', type(function).__name__)}"
