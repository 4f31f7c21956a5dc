"""YAML someone else wrote, read as bounded plain data: team files, npcpy's knowledge files.

PyYAML's safe loader builds only plain data (no Python objects), but a small file can
still cost gigabytes or minutes. This loader refuses, as it composes and before
anything is expanded or computed: YAML aliases (``*name``), which a "billion laughs"
file expands exponentially once a value is used or quoted; nesting deeper than
``MAX_DEPTH``; more than ``max_values`` values (each costs tens of microseconds to
build in Python: a megabyte of one-character list items took 25 s); numbers longer
than ``MAX_NUMBER`` characters (big-number arithmetic is quadratic). Every message
quotes a value through ``quoted`` (at most ``QUOTE_LIMIT`` characters, built without
expanding the value), and ``yaml_problem`` turns PyYAML's error into a bounded line.
"""

from __future__ import annotations

import functools
import reprlib
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_NUMBER",
    "MAX_VALUES",
    "QUOTE_LIMIT",
    "Refused",
    "bounded_loader",
    "quoted",
    "yaml_problem",
]

#: Deeper than any file npc_nb reads nests (a few levels), far below Python's recursion.
MAX_DEPTH = 32
#: The default bound on values (keys, items, texts): far more than a team file holds.
MAX_VALUES = 10_000
#: A number written with more characters than this is refused, not computed.
MAX_NUMBER = 100
#: The most characters of a value an error message quotes.
QUOTE_LIMIT = 80


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


class Refused(Exception):
    """What the loader will not build; the message follows the file's name."""


def yaml_problem(exc: Exception) -> str:
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
    return ": ".join(parts) or str(exc)[: 2 * QUOTE_LIMIT]


@functools.cache
def bounded_loader(max_values: int = MAX_VALUES) -> type:
    """PyYAML's safe loader, refusing aliases, deep nesting, more than ``max_values``
    values and long numbers as it composes (``Refused``, before anything is built)."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        depth = 0
        values = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise Refused(
                    f"uses the YAML alias {quoted('*' + event.anchor)} on line "
                    f"{event.start_mark.line + 1}: npc_nb reads such files without "
                    "aliases (a shared file could expand one to gigabytes). Write the "
                    "value out in full."
                )
            line = self.peek_event().start_mark.line + 1
            if self.depth >= MAX_DEPTH:
                raise Refused(
                    f"nests values deeper than {MAX_DEPTH} levels (line {line}); flatten it."
                )
            if self.values >= max_values:
                raise Refused(
                    f"holds more than {max_values:,} values (keys, list items, texts; "
                    f"line {line}), more than npc_nb reads from one such file."
                )
            self.depth += 1
            self.values += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    def bounded_int(loader: Any, node: Any) -> Any:
        if len(node.value) > MAX_NUMBER:
            raise Refused(
                f"has a number {len(node.value):,} characters long on line "
                f"{node.start_mark.line + 1}; quote it if it is text."
            )
        return yaml.SafeLoader.construct_yaml_int(loader, node)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", bounded_int)
    return BoundedLoader
