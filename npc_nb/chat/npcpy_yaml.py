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
at most 1 MB): the loader refuses YAML aliases (``*name``), which could expand a small
file into gigabytes once a value is used or quoted, before anything is expanded; it
refuses nesting deeper than ``MAX_DEPTH``, more than ``MAX_VALUES`` values (PyYAML
builds each in Python: a megabyte of one-character list items took 25 s) and numbers
longer than ``MAX_NUMBER`` characters (big-number arithmetic is quadratic); Jinja spans
are found in one pass; and every error quotes a value through ``quoted`` (at most ``QUOTE_LIMIT``
characters, built without expanding the value).
"""

from __future__ import annotations

import functools
import re
import reprlib
import secrets
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .team_source import read_source

__all__ = ["MAX_DEPTH", "MAX_VALUES", "QUOTE_LIMIT", "TeamFile", "quoted", "read_team_file"]

#: Deeper than any npcpy file nests (three or four levels), far below Python's recursion.
MAX_DEPTH = 32
#: Far more values (keys, items, texts) than an npcpy file holds (tens); each costs tens
#: of microseconds to build in PyYAML, so this bounds the time a file takes to read.
MAX_VALUES = 10_000
#: A number written with more characters than this is refused, not computed.
MAX_NUMBER = 100
#: The most characters of a value an error message quotes.
QUOTE_LIMIT = 80

#: What opens a Jinja span, and what closes it.
_OPENERS = re.compile(r"\{[{%#]")
_CLOSERS = {"{{": "}}", "{%": "%}", "{#": "#}"}
#: One statement or comment tag on one line; its body cannot hold its own closing
#: delimiter, so a line of many tags splits one way only (no runaway backtracking).
_TAG = r"\{%(?:[^%\n]|%(?!\}))*%\}|\{#(?:[^#\n]|#(?!\}))*#\}"
#: A line of statement and comment tags only (after its indentation).
_TAG_LINE = re.compile(rf"^([ \t]*)((?:{_TAG})(?:[ \t]*(?:{_TAG}))*[ \t]*)$", re.MULTILINE)


class _Clipped(reprlib.Repr):
    """``repr`` that looks at a few items and characters of a value, never all of it."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = 4
        self.maxstring = self.maxother = QUOTE_LIMIT

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 4 * MAX_NUMBER:  # str() of a huge number is slow or refused
            return "<a number too long to quote>"
        return super().repr_int(x, level)


_CLIPPED = _Clipped()


def quoted(value: object) -> str:
    """``value`` as an error message quotes it: its ``repr``, at most ``QUOTE_LIMIT``
    characters, built from a few of its items (a huge value is never written out)."""
    text = _CLIPPED.repr(value)
    return text if len(text) <= QUOTE_LIMIT else f"{text[: QUOTE_LIMIT - 3]}..."


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


class _Refused(Exception):
    """What the loader will not build, said after the file's name."""


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
        return yaml.load(text, Loader=_bounded_loader())  # a SafeLoader
    except _Refused as exc:
        raise ConfigError(f"{path} {exc}") from None
    except yaml.YAMLError as exc:
        hint = (
            " npc_nb reads Jinja as plain text and never renders it, so a {% ... %} block "
            "that shapes the YAML cannot be read."
            if has_jinja
            else ""
        )
        raise ConfigError(
            f"{path} is not valid YAML: {_yaml_problem(exc)}. Fix the file.{hint}"
        ) from None
    except ValueError as exc:  # a value YAML recognises but Python cannot build (a date)
        raise ConfigError(
            f"{path} holds a value that cannot be read: {quoted(str(exc))}."
        ) from None
    except RecursionError as exc:
        raise ConfigError(f"{path} is nested too deeply to read; flatten it.") from exc


def _yaml_problem(exc: Exception) -> str:
    """What PyYAML says is wrong, and where: its words cut to a bound (they can hold a
    tag of any length), with line and column instead of its quote of the file."""
    parts = []
    for words, mark in (
        (getattr(exc, "context", None), getattr(exc, "context_mark", None)),
        (getattr(exc, "problem", None), getattr(exc, "problem_mark", None)),
    ):
        if isinstance(words, str):
            words = words if len(words) <= 2 * QUOTE_LIMIT else f"{words[: 2 * QUOTE_LIMIT]}..."
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            parts.append(f"{words}{where}")
    return ": ".join(parts) or str(exc)


@functools.cache
def _bounded_loader() -> type:
    """PyYAML's safe loader, refusing aliases, deep nesting, too many values and long
    numbers as it composes (nothing is expanded or computed before the refusal)."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        depth = 0
        values = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise _Refused(
                    f"uses the YAML alias {quoted('*' + event.anchor)} on line "
                    f"{event.start_mark.line + 1}: npc_nb reads team files without "
                    "aliases (a shared file could expand one to gigabytes). Write the "
                    "value out in full."
                )
            line = self.peek_event().start_mark.line + 1
            if self.depth >= MAX_DEPTH:
                raise _Refused(
                    f"nests values deeper than {MAX_DEPTH} levels (line {line}); flatten it."
                )
            if self.values >= MAX_VALUES:
                raise _Refused(
                    f"holds more than {MAX_VALUES:,} values (keys, list items, texts; "
                    f"line {line}), far more than a persona or a team context needs."
                )
            self.depth += 1
            self.values += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    def bounded_int(loader: Any, node: Any) -> Any:
        if len(node.value) > MAX_NUMBER:
            raise _Refused(
                f"has a number {len(node.value):,} characters long on line "
                f"{node.start_mark.line + 1}; quote it if it is text."
            )
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", bounded_int)
    return BoundedLoader


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
