"""The facade's grouped areas that are not a service of their own: ``nb.imports`` and
``nb.exports``.

``nb.graph``, ``nb.metrics`` and ``nb.access`` are service objects, exposed as they are.
Memories in (another tool's file, through the trust gate) and out (the analytical
tables, the review log, another tool's import shape) are methods of several services, so
each group here is a small class of ``Forward`` members: the service's function bound
to what the facade built, with its own signature and docstring (nothing copied, see
``_foundations/arguments.py``). ``npc_nb.import_bundle`` and ``nb.export_bundle``, the
lossless round trip, stay on the package and the facade.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._foundations.arguments import AsOf, Forward, checked_methods
from .analytics.export import export_review_log, export_tables
from .interop.service import Interop
from .store import Store

__all__ = ["Exports", "Imports"]


class Imports:
    """``nb.imports``: another tool's memories in, through the same gate as extraction:
    ``npcpy(path)`` keeps npcpy's recorded decisions (audited as imported);
    ``mem0(path, *, trust=False)`` and ``letta(path, *, trust=False)`` arrive as
    candidates for review unless ``trust=True``."""

    npcpy = Forward("_interop", Interop.import_npcpy)
    mem0 = Forward("_interop", Interop.import_mem0)
    letta = Forward("_interop", Interop.import_letta)

    def __init__(self, interop: Interop) -> None:
        self._interop = interop

    def __repr__(self) -> str:
        return "<nb.imports: npcpy(path), mem0(path, *, trust=False), letta(path, *, trust=False)>"


@checked_methods()
class Exports:
    """``nb.exports``: the memory and its review history elsewhere, now or as they stood
    at ``as_of``: ``tables(folder)`` (memories and decisions as Parquet or JSON Lines),
    ``review_log(path)`` (Prodigy-style JSONL) and ``to(kind, path)`` (approved memories
    in mem0's, Letta's or npcpy's shape)."""

    to = Forward("_interop", Interop.export_to)

    def __init__(self, store: Store, interop: Interop, moment: Callable[[object], Any]) -> None:
        self._store = store
        self._interop = interop
        self._moment = moment

    def tables(
        self, folder: str | Path, *, format: str = "parquet", as_of: AsOf | None = None
    ) -> dict[str, Path]:
        """Write ``memories`` and ``decisions`` (every column of the analytical views) to
        ``folder`` as Parquet or JSON Lines (``format="jsonl"``), now or as they stood at
        ``as_of``; returns the paths written."""
        return export_tables(self._store, folder, format, self._moment(as_of))

    def review_log(self, path: str | Path, *, as_of: AsOf | None = None) -> Path:
        """Write every decision (not undone; those made by ``as_of``, if given) as
        Prodigy-style JSONL to ``path``: text, answer (accept/reject/ignore), label,
        annotator, timestamp."""
        return export_review_log(self._store, path, self._moment(as_of))

    def __repr__(self) -> str:
        return "<nb.exports: tables(folder), review_log(path), to(kind, path)>"
