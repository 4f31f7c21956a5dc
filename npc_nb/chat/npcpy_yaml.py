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

A shared file is data, and reading it is bounded by its size (``team_source.py`` reads
at most 1 MB) and by the foundations' bounded loader (``_foundations.safe_yaml``: no
aliases, bounded nesting, values and numbers, errors that quote at most ``QUOTE_LIMIT``
characters); Jinja spans are found in one pass.
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._foundations.safe_yaml import (
    MAX_DEPTH,
    MAX_VALUES,
    QUOTE_LIMIT,
    Refused,
    bounded_loader,
    quoted,
    yaml_problem,
)
from ..errors import ConfigError
from .team_source import read_source

__all__ = ["MAX_DEPTH", "MAX_VALUES", "QUOTE_LIMIT", "TeamFile", "quoted", "read_team_file"]

#: What opens a Jinja span, and what closes it.
_OPENERS = re.compile(r"\{[{%#]")
_CLOSERS = {"{{": "}}", "{%": "%}", "{#": "#}"}
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


def read_team_file(path: Path, what: str, *, root: Path) -> TeamFile:
    """Parse a team file into a mapping; any problem is a ``ConfigError`` naming the file.

    ``root`` is the project folder: the file must be a regular file inside it (a link
    out of it is refused; see ``team_source``). ``what`` says what a valid file holds,
    for the message when it is not a mapping.
    """
    source = read_source(path, root)
    marker = _unused_marker(source)
    spans: list[str] = []

    def as_comment(match: re.Match[str]) -> str:
        spans.append(match.group(2))
        return f"{match.group(1)}# {marker}c{len(spans) - 1}x"

    def as_word(span: str) -> str:
        spans.append(span)
        return f"{marker}{len(spans) - 1}x"

    data = _parse(path, _swap_jinja(_TAG_LINE.sub(as_comment, source), as_word), bool(spans))
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping with keys {what}.")
    return TeamFile(path, data, spans, marker)


def _parse(path: Path, text: str, has_jinja: bool) -> Any:
    import yaml  # only needed when a team folder exists

    try:
        return yaml.load(text, Loader=bounded_loader())  # a SafeLoader
    except Refused as exc:
        raise ConfigError(f"{path} {exc}") from None
    except yaml.YAMLError as exc:
        hint = (
            " npc_nb reads Jinja as plain text and never renders it, so a {% ... %} block "
            "that shapes the YAML cannot be read."
            if has_jinja
            else ""
        )
        raise ConfigError(
            f"{path} is not valid YAML: {yaml_problem(exc)}. Fix the file.{hint}"
        ) from None
    except ValueError as exc:  # a value YAML recognises but Python cannot build (a date)
        raise ConfigError(
            f"{path} holds a value that cannot be read: {quoted(str(exc))}."
        ) from None
    except RecursionError as exc:
        raise ConfigError(f"{path} is nested too deeply to read; flatten it.") from exc


def _swap_jinja(source: str, replace: Callable[[str], str]) -> str:
    """``source`` with each Jinja span replaced by ``replace(span)``: the leftmost opener,
    up to its first closer (as a lazy regex would match), found in one pass. An opener
    with no closer after it means no later opener of its kind closes either, so each
    kind is searched to the end at most once (a regex would, once per opener)."""
    pieces: list[str] = []
    done = position = 0
    unclosed: set[str] = set()
    while match := _OPENERS.search(source, position):
        opener = match.group()
        end = -1 if opener in unclosed else source.find(_CLOSERS[opener], match.end())
        if end < 0:
            unclosed.add(opener)
            position = match.start() + 1
            continue
        pieces += [source[done : match.start()], replace(source[match.start() : end + 2])]
        done = position = end + 2
    return "".join([*pieces, source[done:]])


def _unused_marker(source: str) -> str:
    """A placeholder prefix that occurs nowhere in the file (so no text is mistaken for one).

    ``npcnbjinja``, else that and random letters: a file cannot be written to hold the
    next guess (a marker grown a letter at a time took time quadratic in such a file)."""
    marker = "npcnbjinja"
    while marker in source:
        marker = "npcnbjinja" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))
    return marker
