"""Which threads' store work is background work: the extraction worker and the review
panel's look-ahead mark themselves with ``in_background()``, so a cell's or a reviewer's
next statement waits for at most one of theirs.

Only the flag lives here, so any part of npc_nb can mark a thread without knowing which
backend runs the store: the embedded file's lease (``embedded.lease``) reads it and lets
a waiting foreground thread go first; a PostgreSQL store's pool has no such queue and
ignores it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["background_work", "in_background"]

#: Whether this thread's store work is background work (``in_background``).
_background = threading.local()


def background_work() -> bool:
    """Whether this thread's store work is background work now (``in_background``)."""
    return bool(getattr(_background, "on", False))


@contextmanager
def in_background() -> Iterator[None]:
    """Mark this thread's store work as background work for as long as the block runs:
    it lets any other thread waiting for the same file go first."""
    before = getattr(_background, "on", False)
    _background.on = True
    try:
        yield
    finally:
        _background.on = before
