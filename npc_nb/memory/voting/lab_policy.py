"""The lab's review policy: ``review_mode``, ``reviewers_per_card`` and
``allow_self_adjudication`` as the project stores them, and as a kernel must follow.

Once the project's owner has set a key (``nb.access.set_policy``, ``npc-nb policy --set``,
stored by ``policy_rows``), every kernel and the command line follow the stored value;
a kernel with no local value of its own simply does. A local value (an argument of
``npc_nb.open``, the environment, ``.env``, the config file, ``%npc_config``) that
disagrees with the stored one is refused with the reason, never silently overruled: a
researcher who set it believes it is in effect. Keys the project never set come from
the kernel's settings, as before any policy was stored.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..._foundations.settings import Settings, invalid_setting
from ...errors import ConfigError
from ...vocabulary import POLICY_KEYS

__all__ = ["FOLLOWED", "POLICY_KEYS", "ReviewPolicy", "as_text", "in_force", "refuse_local"]

#: The source a setting is marked with when it follows the project's policy.
FOLLOWED = "the project's policy"


@dataclass(frozen=True)
class ReviewPolicy:
    """The review policy in force, and where it came from (``stored``: which keys the
    project's store sets; the latest change's author and time)."""

    review_mode: str
    reviewers_per_card: int
    allow_self_adjudication: bool
    stored: tuple[str, ...] = ()
    set_by: str | None = None
    set_at: datetime | None = None

    def __str__(self) -> str:
        origin = (
            f"the project's policy, set by {self.set_by} at {self.set_at:%Y-%m-%d %H:%M} UTC"
            if self.stored and self.set_at is not None
            else "this kernel's settings: the project stores no policy"
        )
        lines = [f"{key} = {getattr(self, key)!r}" for key in POLICY_KEYS]
        return "\n".join([f"review policy ({origin})", *lines])

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        text = str(self)
        return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


def as_text(settings: Settings, values: dict[str, Any]) -> dict[str, str]:
    """``values`` checked as the settings check them (a ConfigError names a bad one),
    as the text the store keeps."""
    unknown = set(values) - set(POLICY_KEYS)
    if unknown:
        raise ConfigError(
            f"Unknown policy key(s) {', '.join(sorted(unknown))}; the policy has "
            f"{', '.join(POLICY_KEYS)}."
        )
    trial = settings.model_copy()
    for key, value in values.items():
        try:
            setattr(trial, key, value)
        except ValueError as exc:  # pydantic's ValidationError
            raise invalid_setting(key, value, exc, hint="Nothing was stored.") from None
    return {key: _text(getattr(trial, key)) for key in values}


def in_force(settings: Settings, changes: list[dict]) -> ReviewPolicy:
    """The policy this kernel follows, given the store's ``changes`` (oldest first);
    a ConfigError if a local setting disagrees with a stored key."""
    latest = {change["key"]: change for change in changes}
    values = {key: getattr(settings, key) for key in POLICY_KEYS}
    for key, change in latest.items():
        stored = _parsed(key, change["value"])
        refuse_local(key, values[key], settings.source_of(key), change, stored)
        values[key] = stored
    newest = max(latest.values(), key=lambda c: (c["set_at"], c["id"]), default=None)
    return ReviewPolicy(
        **values,
        stored=tuple(k for k in POLICY_KEYS if k in latest),
        set_by=newest["set_by"] if newest else None,
        set_at=newest["set_at"] if newest else None,
    )


def refuse_local(key: str, local: Any, source: str, change: dict, stored: Any = None) -> None:
    """Refuse a local ``key`` (from ``source``) that disagrees with the stored ``change``."""
    stored = _parsed(key, change["value"]) if stored is None else stored
    if source in ("default", FOLLOWED) or local == stored:
        return
    raise ConfigError(
        f"{key}={local!r} (from {source}) disagrees with the project's policy "
        f"{key}={stored!r}, set by {change['set_by']} at {change['set_at']:%Y-%m-%d %H:%M} "
        "UTC: every kernel follows the project's policy. Remove the local setting, or ask "
        f"the project's owner to change the policy (nb.access.set_policy({key}=...) or npc-nb "
        f"policy --set {key}=...)."
    )


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _parsed(key: str, text: str) -> Any:
    if key == "reviewers_per_card":
        return int(text)
    if key == "allow_self_adjudication":
        return text == "true"
    return text
