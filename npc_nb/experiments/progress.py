"""An experiment's run, shown live in a notebook: one display, updated as jobs finish.

``exp.run()`` returns at once; in a Jupyter kernel it first shows the run's progress
(``ExperimentStatus``'s bars per arm) as a display with an id, and the runner's thread
updates that display after each job, at most every ``EVERY`` seconds, and once more
when the run ends, so the saved notebook holds the final counts. Outside a kernel (a
script, a terminal IPython) nothing is shown: ``exp.status()`` gives the counts.
IPython is imported only here, and only when a kernel is running.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["EVERY", "LiveProgress"]

#: Seconds between two updates of the display while a run goes on.
EVERY = 0.5


def _kernel_running() -> bool:
    """Whether this process is a Jupyter kernel (IPython's shell with a kernel)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


class LiveProgress:
    """A display of ``status()`` that ``update`` refreshes (from the runner's thread)."""

    def __init__(self, status: Callable[[], Any], handle: Any) -> None:
        self._status, self._handle = status, handle
        self._last = time.monotonic()
        self._lock = threading.Lock()

    @classmethod
    def show(cls, status: Callable[[], Any]) -> LiveProgress | None:
        """Show ``status()`` in the running cell and return its live display, or None
        when this process is not a kernel."""
        if not _kernel_running():
            return None
        from IPython.display import display

        return cls(status, display(status(), display_id=True))

    def update(self, final: bool = False) -> None:
        """Show the current status again, unless the last update is under ``EVERY``
        seconds old (the last one, ``final``, always)."""
        with self._lock:
            if not final and time.monotonic() - self._last < EVERY:
                return
            self._last = time.monotonic()
            self._handle.update(self._status())
