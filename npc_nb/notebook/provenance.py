"""``npc_nb.provenance(path)``: what each ``%%npc`` cell of a saved notebook was built on.

A reply's output carries its provenance in its metadata (``{"npc_nb": ...}``, see
``Reply.provenance``): the persona, the model, the snapshot (or the time) its memory
block was read at, that block's SHA-256 and the memories in it. This reads a saved
notebook (nbformat 4, plain JSON: no Jupyter needed) and lists one row per ``%%npc``
cell, with ``reproducible``: whether the project's store, as it is now, still builds a
block with that very hash at that snapshot or time. A cell that was never run, or
whose reply was not saved, is listed too, not reproducible, with a note saying why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._foundations.tables import Kind, with_missing_as_na
from ..errors import ConfigError, NpcError

if TYPE_CHECKING:
    from .._project import Project

__all__ = ["PROVENANCE_KINDS", "provenance"]

#: The columns ``provenance`` returns, and their kinds (``_foundations.tables``).
PROVENANCE_KINDS: dict[str, Kind] = {
    "cell": "int",
    "execution_count": "int",
    "persona": "text",
    "model": "text",
    "snapshot": "text",
    "as_of": "time",
    "block_hash": "text",
    "memory_ids": "other",
    "reproducible": "bool",
    "note": "text",
}


def provenance(notebook_path: str | Path, project: Project | None = None) -> pd.DataFrame:
    """One row per ``%%npc`` cell of the notebook at ``notebook_path``: persona, model,
    snapshot, when its block was read (``as_of``), the block's hash, its memory ids, and
    whether ``project`` (default: the one opened last, else the notebook's folder's)
    can still build that block (``reproducible``)."""
    cells = _cells(Path(notebook_path))
    if project is None:
        project = _project_for(Path(notebook_path))
    rows = [_row(project, index, cell) for index, cell in cells]
    frame = pd.DataFrame(rows, columns=list(PROVENANCE_KINDS))
    frame["as_of"] = pd.to_datetime(frame["as_of"])
    return with_missing_as_na(frame, PROVENANCE_KINDS)


def _cells(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The ``%%npc`` code cells of the notebook, with their index."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"Cannot read the notebook {path}: {exc}. Save it as .ipynb.") from None
    if not isinstance(notebook, dict) or notebook.get("nbformat") != 4:
        raise ConfigError(f"{path} is not a Jupyter notebook (nbformat 4); save it as .ipynb.")
    return [
        (index, cell)
        for index, cell in enumerate(notebook.get("cells", []))
        if cell.get("cell_type") == "code" and _source(cell).lstrip().startswith("%%npc ")
    ]


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _project_for(path: Path) -> Project:
    from .._project import latest_project, open_project

    return latest_project() or open_project(path.absolute().parent)


def _row(project: Project, index: int, cell: dict[str, Any]) -> dict[str, Any]:
    first, _, body = _source(cell).lstrip().partition("\n")
    words = first.split()
    found = _saved(cell)
    row: dict[str, Any] = {
        "cell": index,
        "execution_count": cell.get("execution_count"),
        "persona": words[1] if len(words) > 1 else None,
    }
    if found is None:
        return row | {"reproducible": False, "note": "no reply saved (not run, or it failed)"}
    row |= {
        "persona": found.get("persona") or row["persona"],
        "model": found.get("model"),
        "snapshot": found.get("snapshot"),
        "as_of": found.get("as_of"),
        "block_hash": found.get("block_hash"),
        "memory_ids": list(found.get("memory_ids") or []),
    }
    reproducible, note = _check(project, found, body.strip())
    return row | {"reproducible": reproducible, "note": note}


def _saved(cell: dict[str, Any]) -> dict[str, Any] | None:
    """The provenance a reply's output saved (the last one, if several)."""
    found = None
    for output in cell.get("outputs", []):
        entry = (output.get("metadata") or {}).get("npc_nb")
        if isinstance(entry, dict) and entry.get("block_hash") is not None:
            found = entry
    return found


def _check(project: Project, saved: dict[str, Any], body: str) -> tuple[bool, str | None]:
    """Whether the store builds the block the reply saved, and if not, why."""
    state = saved.get("snapshot") or saved.get("as_of")
    if state is None:
        return False, "the reply saved no snapshot or time"
    try:
        block = project.context_block(
            saved["persona"],
            team=saved.get("team"),
            query=_message(project, saved.get("user_message_id")) or body,
            max_chars=saved.get("max_chars"),
            as_of=state,
        )
    except NpcError as exc:
        return False, str(exc)
    if block.hash != saved["block_hash"]:
        return False, f"this store builds another block at that state ({block.hash[:12]})"
    return True, None


def _message(project: Project, message_id: object) -> str | None:
    """The message the reply answered, as the store keeps it (None if it is not there)."""
    if not isinstance(message_id, str):
        return None
    found = project.sql("SELECT content FROM messages WHERE id = $id", {"id": message_id})
    return str(found["content"].iloc[0]) if len(found) else None
