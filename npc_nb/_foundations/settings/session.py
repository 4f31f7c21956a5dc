"""This kernel's session settings (``%npc_config``, ``%npc_pin``), kept per project.

A notebook often opens its project again (``nb = npc_nb.open()``, the README's first
line) after ``%npc_config reviewer=bob`` or ``%npc_pin``. The new Project reads its
settings afresh, so without this the session's choices would be dropped silently and
later votes recorded under another name. The magics ``remember`` what they set, keyed
by the project's store; opening the same project again applies it (an argument of
``npc_nb.open`` still wins). Another project is never given them.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["remember", "remembered"]

_kept: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()


def remember(store: str, values: dict[str, Any]) -> None:
    """Keep ``values`` as this session's settings of the project whose store is ``store``."""
    with _lock:
        _kept.setdefault(store, {}).update(values)


def remembered(store: str) -> dict[str, Any]:
    """This session's settings of the project whose store is ``store`` ({} if none)."""
    with _lock:
        return dict(_kept.get(store, {}))
