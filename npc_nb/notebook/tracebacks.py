"""An ``NpcError`` in a notebook cell reads as its message, not as npc_nb's insides.

Every ``NpcError`` already says what went wrong and how to fix it; the frames inside
npc_nb between the user's line and the ``raise`` (the argument check, the facade, the
service, the store) tell a researcher nothing and push the message off the screen. So
``%load_ext npc_nb`` asks IPython (``set_custom_exc``, IPython's own hook for this, on
that shell only) to show an ``NpcError`` as IPython shows any error, cut to the user's
own frames: the cell and its line, then ``ArgumentError: context(): npc must be ...``.
Nothing else changes: other exceptions keep IPython's traceback, the error still fails
the cell (``Out`` is not set, "run all" stops), ``%tb`` shows the whole traceback, and
``%unload_ext npc_nb`` gives the shell back its own display.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from ..errors import NpcError

__all__ = ["register", "unregister"]

_PACKAGE = Path(__file__).resolve().parents[1]


def register(shell: Any) -> None:
    """Show NpcErrors in ``shell`` cut to the user's frames (unless another extension
    already handles exceptions there: a shell has room for one such handler)."""
    if shell.custom_exceptions in ((), (NpcError,)):
        shell.set_custom_exc((NpcError,), show_npc_error)


def unregister(shell: Any) -> None:
    """Give ``shell`` back its own display of NpcErrors (if ours is still in place)."""
    if shell.custom_exceptions == (NpcError,):
        shell.set_custom_exc((), None)
        shell.CustomTB = None  # IPython's own default after init: no custom handler


def show_npc_error(
    shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None
) -> list[str]:
    """IPython's custom-exception handler: display the error's traceback without the
    frames inside npc_nb (and without the engine errors chained to it), and keep the
    whole traceback for ``%tb``."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    # The first frame is IPython's run_code, which IPython's own display skips too.
    mine = _user_frames(tb.tb_next if tb is not None else None)
    cause, context, suppress = value.__cause__, value.__context__, value.__suppress_context__
    value.__cause__, value.__suppress_context__ = None, True
    try:
        stb = shell.InteractiveTB.structured_traceback(etype, value, mine, tb_offset=0)
    finally:
        value.__cause__, value.__context__, value.__suppress_context__ = cause, context, suppress
    shell._showtraceback(etype, value, stb)
    return stb


def _user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """A copy of the traceback's frames up to the first one inside npc_nb."""
    frames = []
    while tb is not None and not _inside_npc_nb(tb.tb_frame.f_code.co_filename):
        frames.append(tb)
        tb = tb.tb_next
    copy = None
    for frame in reversed(frames):
        copy = types.TracebackType(copy, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return copy


def _inside_npc_nb(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(_PACKAGE)
