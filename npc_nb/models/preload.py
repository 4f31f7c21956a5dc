"""Loading the model client in the background: ``%load_ext npc_nb`` starts it.

``import litellm`` takes 5–7 s. Started when the extension loads, it runs while the user
writes the first cell, so the first ``%%npc`` reply starts at once. The thread is a
daemon (it never holds up the kernel's exit) and is started once per process; it
imports the gateway itself, on that thread (its own imports, pydantic among them, cost
a tenth of a second), then litellm through ``gateway.load_client``, under the gateway's
lock, so a model call that arrives meanwhile waits for this import rather than starting
a second one. Nothing else is done in the background, and nothing there is printed (as
on a first call, litellm's import loads the working directory's ``.env`` into the
environment).

Why a background import is safe here: litellm (outside its proxy server) installs no
signal handler, starts no thread at import and prints nothing once
``LITELLM_LOCAL_MODEL_COST_MAP`` is set, which is done here on the caller's thread
before the thread starts (otherwise it fetches its cost map from the network and starts
a retry thread). Python's per-module import locks let the user's own imports run beside
it (a module both threads need is imported once, the second waiting); npc_nb's own
modules cannot wait on each other in a cycle across the two threads, because their
imports point one way (``tests/test_layers.py``). A failed import is not reported here:
the first model call imports again and raises what went wrong.
"""

from __future__ import annotations

import os
import threading

__all__ = ["start"]

THREAD_NAME = "npc_nb model client"
_lock = threading.Lock()
_thread: threading.Thread | None = None


def start() -> threading.Thread:
    """Start loading the model client on a daemon thread, once per process; returns that
    thread (the same one on every call), which ends once litellm is loaded."""
    global _thread
    with _lock:
        if _thread is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            _thread = threading.Thread(target=_load, name=THREAD_NAME, daemon=True)
            _thread.start()
        return _thread


def _load() -> None:
    from . import gateway

    gateway.load_client()
