"""Exports: take the memory and its review history elsewhere.

- ``export(folder, format="parquet" | "jsonl", as_of=None)``: ``memories`` and
  ``decisions`` (the analytical views, every column) as two files.
- ``export_review_log(path, as_of=None)``: the decisions as Prodigy-style JSONL (``text``,
  ``answer`` accept/reject/ignore, ``label`` = category, ``_annotator_id``,
  ``_timestamp``), for teams that move review to an annotation server. Edits are
  accepts with an ``edited_text``; skips and deferrals are ``ignore``; undone
  decisions are left out.

Both read the store now or, given ``as_of``, as it stood then: the same queries, rewound
(``store.analysis.rewind``), so an export at a snapshot is what it would have been then.
"""

from __future__ import annotations

from pathlib import Path

from .._foundations.locations import output_path
from ..errors import InvalidValueError
from ..store import Store
from ..store.analysis import exports
from ..store.memories.predicates import Moment

__all__ = ["export_review_log", "export_tables"]

_SUFFIX = {"parquet": ".parquet", "jsonl": ".jsonl"}


def export_tables(
    store: Store, folder: str | Path, format: str = "parquet", moment: Moment | None = None
) -> dict[str, Path]:
    """Write ``memories`` and ``decisions`` (every column of the analytical views) to
    ``folder`` as Parquet or JSON Lines (``format="jsonl"``), now or as they stood at
    ``moment``; returns the paths written."""
    file_format = format
    if file_format not in _SUFFIX:
        raise InvalidValueError("format", file_format, tuple(_SUFFIX))
    target = output_path(folder, is_folder=True)
    written = {}
    for name, sql in exports.EXPORTS.items():
        path = target / f"{name}{_SUFFIX[file_format]}"
        exports.write(store, sql, path, file_format, moment)
        written[name] = path
    return written


def export_review_log(store: Store, path: str | Path, moment: Moment | None = None) -> Path:
    """Write every decision (not undone; those by ``moment``, if given) as Prodigy-style
    JSONL to ``path``: text, answer (accept/reject/ignore), label, annotator, timestamp."""
    target = output_path(path)
    exports.write(store, exports.REVIEW_LOG_SQL, target, "jsonl", moment)
    return target
