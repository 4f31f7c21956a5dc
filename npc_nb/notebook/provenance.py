"""``npc_nb.provenance(path)``: each ``%%npc`` cell of a saved notebook, checked against
the store it claims to come from.

A reply's output carries its provenance in its metadata (``{"npc_nb": ...}``, see
``Reply.provenance`` and ``reply_with_provenance``): the persona, the model, the
snapshot (or the time) its memory block was read at, that block's SHA-256, the
memories in it, the reply's SHA-256, its recording's id and the hash of the output as
shown. This reads a saved notebook (nbformat 4, plain JSON: no Jupyter needed) and
gives each ``%%npc`` cell one ``status``, from the first check that fails:

- ``metadata_damaged``: the provenance is not there in its shape (a missing key, a
  wrong type, a time that is not one). Hand-edited metadata is a finding, never an
  exception.
- ``edited_output``: the saved output is not what the cell showed (its hash differs),
  or does not show the reply the store kept.
- ``store_changed``: the store's copy of the reply, its recording, or the block it
  builds at that snapshot is not what the reply was built on (history rewritten, or
  another store).
- ``unknown_memory``: the memories the metadata names are not those the store recorded
  in the reply's prompt.
- ``reproducible``: every check holds. ``no_reply``: the cell saved no reply (never
  run, or it failed).

Key design choice: nothing the notebook says is trusted on its own. The saved text is
hashed again, and every claim is compared with what the store recorded when the reply
was made (the message, its injection manifest, its recording) and with what it builds
now at that state.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._foundations.markup import plain_text
from .._foundations.results import SHOWN_MIMES, sha256_text, shown_hash
from .._foundations.tables import Kind, with_missing_as_na
from ..errors import ConfigError, NpcError
from ..memory.block import scrub_memory_tags

if TYPE_CHECKING:
    from .._project import Project

__all__ = ["PROVENANCE_KINDS", "STATUSES", "provenance"]

#: What a cell's ``status`` can be, the good one first.
STATUSES = (
    "reproducible",
    "edited_output",
    "unknown_memory",
    "store_changed",
    "metadata_damaged",
    "no_reply",
)

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
    "reply_hash": "text",
    "recording_id": "text",
    "status": "text",
    "note": "text",
}

_SHA256 = re.compile(r"[0-9a-f]{64}")


def provenance(notebook_path: str | Path, project: Project | None = None) -> pd.DataFrame:
    """One row per ``%%npc`` cell of the notebook at ``notebook_path``: persona, model,
    snapshot, when its block was read (``as_of``), the block's hash, its memory ids, the
    reply's hash and recording, and its ``status`` against ``project`` (default: the one
    opened last, else the notebook's folder's), with a ``note`` saying why when it is
    not ``reproducible``."""
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
    cells = notebook.get("cells")
    return [
        (index, cell)
        for index, cell in enumerate(cells if isinstance(cells, list) else [])
        if isinstance(cell, dict)
        and cell.get("cell_type") == "code"
        and _joined(cell.get("source")).lstrip().startswith("%%npc ")
    ]


def _joined(value: object) -> str:
    """A notebook's multi-line string: saved as one string or as a list of lines."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _project_for(path: Path) -> Project:
    from .._project import latest_project, open_project

    return latest_project() or open_project(path.absolute().parent)


class _Damaged(Exception):
    """The saved provenance is not in its shape; the message says what is wrong."""


@dataclass(frozen=True)
class _Saved:
    """A reply's saved provenance, each value checked for its type."""

    persona: str
    team: str | None
    model: str
    snapshot: str | None
    as_of: str | None
    block_hash: str
    memory_ids: list[str]
    max_chars: int | None
    message_id: str
    user_message_id: str | None
    reply_hash: str
    recording_id: str | None
    output_hash: str

    def columns(self) -> dict[str, Any]:
        return {
            "persona": self.persona,
            "model": self.model,
            "snapshot": self.snapshot,
            "as_of": self.as_of,
            "block_hash": self.block_hash,
            "memory_ids": list(self.memory_ids),
            "reply_hash": self.reply_hash,
            "recording_id": self.recording_id,
        }


def _row(project: Project, index: int, cell: dict[str, Any]) -> dict[str, Any]:
    words = _joined(cell.get("source")).lstrip().partition("\n")[0].split()
    count = cell.get("execution_count")
    row: dict[str, Any] = {
        "cell": index,
        "execution_count": count if isinstance(count, int) else None,
        "persona": words[1] if len(words) > 1 else None,
    }
    try:
        output = _reply_output(cell)
        if output is None:
            return row | {"status": "no_reply", "note": "no reply saved (not run, or it failed)"}
        saved = _checked(output["metadata"]["npc_nb"])
    except _Damaged as damaged:
        return row | {"status": "metadata_damaged", "note": f"damaged provenance: {damaged}"}
    status, note = _verdict(project, output, saved)
    return row | saved.columns() | {"status": status, "note": note}


def _reply_output(cell: dict[str, Any]) -> dict[str, Any] | None:
    """The output that saved the reply (the last, if several), None if there is none."""
    outputs = cell.get("outputs")
    found, unmarked = None, False
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        metadata = output.get("metadata")
        if isinstance(metadata, dict) and "npc_nb" in metadata:
            found = output
        elif metadata is not None and not isinstance(metadata, dict):
            raise _Damaged("an output's metadata is not an object")
        elif output.get("output_type") == "execute_result":
            # A reply shown without its provenance: stripped, or never saved with it (a
            # live display left behind by a front end is a display_data, not this).
            unmarked |= "npc-nb-reply" in _joined((output.get("data") or {}).get("text/html"))
    if found is None and unmarked:
        raise _Damaged("the reply's output carries no npc_nb metadata")
    return found


def _checked(entry: object) -> _Saved:
    """The saved provenance, or _Damaged naming the first value out of shape."""
    if not isinstance(entry, dict):
        raise _Damaged("the npc_nb metadata is not an object")
    saved = _Saved(
        persona=_text(entry, "persona"),
        team=_text(entry, "team", optional=True),
        model=_text(entry, "model"),
        snapshot=_text(entry, "snapshot", optional=True),
        as_of=_time(entry),
        block_hash=_hash(entry, "block_hash"),
        memory_ids=_ids(entry),
        max_chars=_count(entry, "max_chars"),
        message_id=_text(entry, "message_id"),
        user_message_id=_text(entry, "user_message_id", optional=True),
        reply_hash=_hash(entry, "reply_hash"),
        recording_id=_text(entry, "recording_id", optional=True),
        output_hash=_hash(entry, "output_hash"),
    )
    if saved.snapshot is None and saved.as_of is None:
        raise _Damaged("it names neither a snapshot nor a time (as_of)")
    return saved


def _text(entry: dict[str, Any], key: str, *, optional: bool = False) -> Any:
    if key not in entry:
        raise _Damaged(f"{key} is missing")
    value = entry[key]
    if (value is None and optional) or (isinstance(value, str) and value):
        return value
    raise _Damaged(f"{key} is {value!r}, not {'a text or null' if optional else 'a text'}")


def _hash(entry: dict[str, Any], key: str) -> str:
    value = _text(entry, key)
    if not _SHA256.fullmatch(value):
        raise _Damaged(f"{key} is {value[:20]!r}, not a SHA-256 in hexadecimal")
    return str(value)


def _time(entry: dict[str, Any]) -> str | None:
    value = _text(entry, "as_of", optional=True)
    if value is not None:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise _Damaged(f"as_of is {value[:40]!r}, not an ISO 8601 time") from None
    return value


def _ids(entry: dict[str, Any]) -> list[str]:
    value = entry.get("memory_ids")
    if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
        raise _Damaged(f"memory_ids is {str(value)[:40]!r}, not a list of memory ids")
    return list(value)


def _count(entry: dict[str, Any], key: str) -> int | None:
    value = entry.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0):
        return value
    raise _Damaged(f"{key} is {str(value)[:20]!r}, not a whole number or null")


def _verdict(project: Project, output: dict[str, Any], saved: _Saved) -> tuple[str, str | None]:
    """The first check the saved reply fails, as (status, note); reproducible if none."""
    shown = _shown(output)
    if shown_hash(shown) != saved.output_hash:
        return "edited_output", "the saved output was edited: it is not what the cell showed"
    stored = project._chat.stored_reply(saved.message_id, saved.user_message_id, saved.recording_id)
    failure = _reply_failure(saved, stored, shown) or _memory_failure(saved, stored)
    return failure or _block_failure(project, saved, stored)


def _shown(output: dict[str, Any]) -> dict[str, str]:
    data = output.get("data")
    data = data if isinstance(data, dict) else {}
    return {mime: _joined(data[mime]) for mime in SHOWN_MIMES if mime in data}


def _reply_failure(
    saved: _Saved, stored: dict[str, Any], shown: dict[str, str]
) -> tuple[str, str] | None:
    """Whether the store kept the reply the notebook saved, and shows."""
    text = stored["text"]
    if text is None:
        return "store_changed", f"this store has no reply {saved.message_id} (another store?)"
    if sha256_text(text) != saved.reply_hash:
        return "store_changed", "the store's copy of the reply differs from the one saved"
    if plain_text(text) not in shown.get("text/plain", ""):
        return "edited_output", "the saved output was edited: it does not show the stored reply"
    recorded = stored["recorded"]
    if saved.recording_id is not None and recorded is None:
        return "store_changed", f"this store has no recording {saved.recording_id}"
    if recorded is not None and text not in (recorded, scrub_memory_tags(recorded)):
        return "store_changed", f"the recording {saved.recording_id} was changed since"
    return None


def _memory_failure(saved: _Saved, stored: dict[str, Any]) -> tuple[str, str] | None:
    """Whether the memories the metadata names are those the reply's prompt held."""
    if saved.memory_ids == stored["injected"]:
        return None
    named = ", ".join(i for i in saved.memory_ids if i not in stored["injected"])
    missing = f" (not in its prompt: {named})" if named else ""
    return (
        "unknown_memory",
        f"the memory ids saved are not the memories the store recorded in this reply's "
        f"prompt{missing}",
    )


def _block_failure(project: Project, saved: _Saved, stored: dict[str, Any]) -> tuple[str, Any]:
    """Whether the store still builds, at that state, the block the reply was built on."""
    state: Any = saved.snapshot or saved.as_of  # a snapshot's id, or an ISO 8601 time
    try:
        block = project.context_block(
            saved.persona,
            team=saved.team,
            query=stored["question"] or "",
            max_chars=saved.max_chars,
            as_of=state,
        )
    except NpcError as exc:
        return "store_changed", str(exc)
    if block.memory_ids != saved.memory_ids:
        return "store_changed", "at that state this store holds other memories for the block"
    if block.hash != saved.block_hash:
        return "store_changed", f"this store builds another block at that state ({block.hash[:12]})"
    return "reproducible", None
