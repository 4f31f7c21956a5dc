"""A code cell's outputs saved and shown again: identical, changed or failed.

Outputs are compared as a reader sees them: a stream's text, a result's or display's
data (every MIME type), an error's name and value. Metadata and execution counts are
left out: they carry ids and counters new on every run (a reply's message id), not what
the cell showed. A changed cell's detail is a short unified diff of the text forms
(``text/plain`` where there is one), at most ``DIFF_LINES`` lines.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from .report import CellRerun

__all__ = ["DIFF_LINES", "compare_cell"]

#: The most lines a changed cell's diff shows.
DIFF_LINES = 12


def compare_cell(index: int, saved: Any, again: Any, error: str | None) -> CellRerun:
    """Cell ``index``: its ``saved`` outputs against those of the re-run (``again``);
    ``error`` is what the re-run of it raised, if anything."""
    if error is not None:
        return CellRerun(index, "failed", error)
    before, after = _shown(saved), _shown(again)
    if before == after:
        return CellRerun(index, "identical")
    return CellRerun(index, "changed", _diff(_text(saved), _text(again)))


def _shown(outputs: Any) -> list[tuple[str, str]]:
    """What a reader sees of each output: its type and its content, as text."""
    shown = []
    for output in outputs if isinstance(outputs, list) else []:
        kind = str(output.get("output_type"))
        if kind == "stream":
            shown.append((f"stream:{output.get('name')}", _joined(output.get("text"))))
        elif kind == "error":
            shown.append((kind, f"{output.get('ename')}: {output.get('evalue')}"))
        else:
            data = output.get("data") or {}
            joined = {mime: _joined(value) for mime, value in data.items()}
            shown.append((kind, json.dumps(joined, sort_keys=True, default=str)))
    return _merged_streams(shown)


def _merged_streams(shown: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Consecutive stream outputs of one name as one: how they arrive is not what they
    say (a kernel may split a print in two)."""
    merged: list[tuple[str, str]] = []
    for kind, content in shown:
        if merged and kind.startswith("stream:") and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + content)
        else:
            merged.append((kind, content))
    return merged


def _joined(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _text(outputs: Any) -> list[str]:
    """The outputs as lines of text: text/plain where there is one, else what there is."""
    lines: list[str] = []
    for output in outputs if isinstance(outputs, list) else []:
        data = output.get("data") or {}
        if output.get("output_type") == "stream":
            text = _joined(output.get("text"))
        elif output.get("output_type") == "error":
            text = f"{output.get('ename')}: {output.get('evalue')}"
        else:
            text = _joined(data.get("text/plain", next(iter(data.values()), "")))
        lines += text.splitlines()
    return lines


def _diff(saved: list[str], again: list[str]) -> str:
    found = list(difflib.unified_diff(saved, again, "saved", "re-run", n=1, lineterm=""))
    changes = found[2:]  # the two file headers say nothing here
    if not changes:  # the same text, another representation (the HTML, an image)
        return "the same text, another rich output (HTML, image, ...)"
    if len(changes) > DIFF_LINES:
        changes = [*changes[:DIFF_LINES], f"... {len(changes) - DIFF_LINES} more lines"]
    return "\n".join(changes)
