"""Decision notices: what a store tells this process's open reviews when a memory's
status changed somewhere else.

A notice names the memory, its new status and who decided, never the memory's text; a
notice of independent review (a vote, a withdrawal, an agreement, an adjudication)
names nobody, so a LISTEN on the project's channel never learns who voted.
``memory_id`` None means "anything may have changed" (a listener that lost its
connection and may have missed notices, or SQL written by hand): reread everything.
Subscribers are held weakly, so an abandoned review session simply stops hearing.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EVERYTHING", "DecisionNotice", "Subscribers"]

_log = logging.getLogger("npc_nb")
#: The longest actor name a notice carries (PostgreSQL limits a payload to 8000 bytes).
ACTOR_LIMIT = 200


@dataclass(frozen=True)
class DecisionNotice:
    """Memory ``memory_id`` is now ``status``, decided by ``actor``."""

    memory_id: str | None
    status: str | None = None
    actor: str | None = None

    def payload(self) -> str:
        actor = self.actor[:ACTOR_LIMIT] if self.actor else self.actor
        return json.dumps({"id": self.memory_id, "status": self.status, "by": actor})

    @classmethod
    def from_payload(cls, payload: str) -> DecisionNotice:
        """The notice in ``payload``; one that cannot be read means "reread everything"."""
        try:
            data = json.loads(payload)
            return cls(*(_text(data.get(key)) for key in ("id", "status", "by")))
        except (ValueError, AttributeError):
            return EVERYTHING


EVERYTHING = DecisionNotice(None)


class Subscribers:
    """Callbacks (bound methods or functions) to tell about each notice, held weakly."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refs: list[weakref.ref[Any]] = []

    def add(self, callback: Callable[[DecisionNotice], None]) -> None:
        ref: weakref.ref[Any] = (
            weakref.WeakMethod(callback) if hasattr(callback, "__self__") else weakref.ref(callback)
        )
        with self._lock:
            self._refs.append(ref)

    def tell(self, notice: DecisionNotice) -> None:
        """Call every live subscriber; one that fails is logged, the others still hear."""
        with self._lock:
            self._refs = [ref for ref in self._refs if ref() is not None]
            callbacks = [ref() for ref in self._refs]
        for callback in callbacks:
            if callback is None:
                continue
            try:
                callback(notice)
            except Exception:  # a broken review must not silence the others
                _log.exception("npc_nb: a review could not apply a decision notice")


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
