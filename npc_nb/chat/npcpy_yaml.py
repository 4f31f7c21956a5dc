"""npcpy's YAML team files (``*.npc``, ``*.ctx``), read with their Jinja left as text.

npcpy renders its team files with Jinja before parsing them, and its own files use that:
``jinxes:`` lists of unquoted ``- {{ Jinx('edit_file') }}`` items, which plain YAML
rejects. Team folders are shared, and rendering a template runs code, so npc_nb never
renders one. Each Jinja span (``{{ ... }}``, ``{% ... %}``, ``{# ... #}``) is swapped
for a plain placeholder word before parsing and swapped back, character for character,
in the strings npc_nb reads: an unquoted Jinja item parses as a string, and a directive
that says ``{{ 7*7 }}`` sends exactly that. A line holding only ``{% ... %}`` or
``{# ... #}`` tags becomes a YAML comment (inside a block of text it stays text), so
control flow is not followed: every branch's lines are read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["TeamFile", "read_team_file"]

_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
#: One statement or comment tag on one line; its body cannot hold its own closing
#: delimiter, so a line of many tags splits one way only (no runaway backtracking).
_TAG = r"\{%(?:[^%\n]|%(?!\}))*%\}|\{#(?:[^#\n]|#(?!\}))*#\}"
#: A line of statement and comment tags only (after its indentation).
_TAG_LINE = re.compile(rf"^([ \t]*)((?:{_TAG})(?:[ \t]*(?:{_TAG}))*[ \t]*)$", re.MULTILINE)


class TeamFile:
    """One parsed team file: its top-level mapping, Jinja spans kept as their own text."""

    def __init__(self, path: Path, data: dict[Any, Any], spans: list[str], marker: str) -> None:
        self.path = path
        self._data = data
        self._spans = spans
        self._placeholder = re.compile(rf"# {marker}c(\d+)x|{marker}(\d+)x")

    def key_names(self) -> list[str]:
        """The top-level keys, as text."""
        return [self.text(key) for key in self._data]

    def get(self, key: str) -> Any:
        """The value of ``key``; a string comes back with its Jinja spans as written."""
        for raw, value in self._data.items():
            if self.text(raw) == key:
                return self.text(value) if isinstance(value, str) else value
        return None

    def text(self, value: object) -> str:
        """A scalar as text, with the placeholders put back to the Jinja they stand for."""
        return self._placeholder.sub(
            lambda m: self._spans[int(m.group(1) or m.group(2))], str(value)
        )


def read_team_file(path: Path, what: str) -> TeamFile:
    """Parse a team file into a mapping; any problem is a ``ConfigError`` naming the file.

    ``what`` says what a valid file holds, for the message when it is not a mapping.
    """
    import yaml  # only needed when a team folder exists

    try:
        source = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text ({exc.reason}); save it as UTF-8.") from exc
    except OSError as exc:
        raise ConfigError(f"Cannot read the team file {path}: {exc.strerror}.") from exc
    marker = _unused_marker(source)
    spans: list[str] = []

    def as_comment(match: re.Match[str]) -> str:
        spans.append(match.group(2))
        return f"{match.group(1)}# {marker}c{len(spans) - 1}x"

    def as_word(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return f"{marker}{len(spans) - 1}x"

    try:
        data = yaml.safe_load(_JINJA.sub(as_word, _TAG_LINE.sub(as_comment, source)))
    except yaml.YAMLError as exc:
        hint = (
            " npc_nb reads Jinja as plain text and never renders it, so a {% ... %} block "
            "that shapes the YAML cannot be read."
            if spans
            else ""
        )
        raise ConfigError(f"{path} is not valid YAML: {exc}. Fix the file.{hint}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path} is nested too deeply to read; flatten it.") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping with keys {what}.")
    return TeamFile(path, data, spans, marker)


def _unused_marker(source: str) -> str:
    """A placeholder prefix that occurs nowhere in the file (so no text is mistaken for one)."""
    marker = "npcnbjinja"
    while marker in source:
        marker += "q"
    return marker
