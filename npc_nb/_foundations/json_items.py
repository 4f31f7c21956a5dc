"""Split a model's JSON answer into its items and parse each item on its own.

Memory extraction and the concept model both ask for a list of items: the document
itself, or the value of its top-level ``"memories"`` key. ``json.loads`` on the whole
answer lets one hostile item spoil all of them: deep nesting raises RecursionError, an
integer over Python's digit limit raises ValueError, and a lone surrogate escape
(``"\\ud800"``) parses into text that no store can encode.

Design: nothing here recurses on the input. The text is scanned iteratively (string and
escape state, a stack of open brackets) to find each item's span and how deep it nests;
each item is then parsed separately. An item nested deeper than ``MAX_DEPTH`` is refused
before ``json.loads`` sees it, an over-long integer is refused through a ``parse_int``
hook, and every string of a parsed item (keys too) must be encodable. A refused item
becomes ``"item N: reason"`` and the others are kept. Only an answer whose top level is
unusable (too long, not JSON, not a list or ``{key: [...]}``) raises ``OutputError``.
The top level is checked strictly (brackets, commas, keys); the values of other
top-level keys are scanned but never parsed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NoReturn

__all__ = [
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "Item",
    "OutputError",
    "split_items",
    "strip_fence",
]

MAX_CHARS = 200_000
MAX_DEPTH = 32
MAX_INT_DIGITS = 4_300  # Python's default limit for int(str); json.loads fails past it

Item = tuple[int, Any]
"""A usable item: its index in the answer's list and its parsed value."""

_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)  # after the opening "
_TOKEN = re.compile(r'"' + _STRING_REST.pattern + r'|[][{},"]', re.DOTALL)  # a whole string
_SPACE = re.compile(r"[ \t\n\r]*+")
_OPENING_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
_CLOSERS = {"[": "]", "{": "}"}
_JSON_SPACE = " \t\n\r"


class OutputError(ValueError):
    """The model's answer as a whole is not the JSON its prompt asks for."""


class _NumberTooLong(Exception):
    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    depth: int  # how deep brackets nest inside it: 0 for a scalar, 1 for [1, 2]


def strip_fence(raw: str) -> str:
    """The answer stripped of whitespace and of a Markdown code fence around it (an
    opening "```" or "```json", a closing "```"). Linear in the length of the text."""
    text = raw.strip()
    opening = _OPENING_FENCE.match(text)
    if opening:
        text = text[opening.end() :].lstrip()
    if text.endswith("```"):
        text = text[:-3].rstrip()
    return text


def split_items(
    raw: str, key: str = "memories", *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS
) -> tuple[list[Item], list[str]]:
    """The usable items of the answer's list, each with its index, and why the others
    were refused (``"item N: reason"``). Raises OutputError, and nothing else, when the
    answer as a whole is unusable."""
    if len(raw) > max_chars:
        raise OutputError(f"output is {len(raw):,} characters, over {max_chars:,}")
    text = strip_fence(raw)
    items: list[Item] = []
    refusals: list[str] = []
    for index, span in enumerate(_item_spans(text, key)):
        value, problem = _parse_item(text, span, max_depth)
        if problem is None:
            items.append((index, value))
        else:
            refusals.append(f"item {index}: {problem}")
    return items, refusals


def _item_spans(text: str, key: str) -> list[_Span]:
    """The spans of the items of the document's list (or of its ``key`` list)."""
    if not text.startswith(("[", "{")):
        _refuse_scalar(text, key)
    parts, end = _children(text, 0)
    if text[end:].strip(_JSON_SPACE):
        _not_json("Extra data", text, _skip_space(text, end))
    if text[0] == "[":
        return parts
    found = None
    for member in parts:
        name, value = _member(text, member)
        if name == key:  # the last one wins, as in json.loads
            found = value
    if found is None or text[found.start] != "[":
        raise OutputError(_shape(key))
    items, end = _children(text, found.start)
    if text[end : found.end].strip(_JSON_SPACE):
        _not_json("Expecting ',' delimiter", text, _skip_space(text, end))
    return items


def _children(text: str, start: int) -> tuple[list[_Span], int]:
    """The comma-separated parts of the container opening at ``text[start]``, and the
    index just after its closing bracket."""
    stack, parts = [text[start]], []
    part_start, deepest = start + 1, 0
    for token in _TOKEN.finditer(text, start + 1):
        at = token.start()
        char = text[at]
        if char == '"':
            if token.end() == at + 1:  # a quote that no closing quote matches
                _not_json("Unterminated string starting at", text, at)
        elif char in "[{":
            stack.append(char)
            deepest = max(deepest, len(stack) - 1)
        elif char in "]}":
            if _CLOSERS[stack.pop()] != char:
                _not_json(f"{char!r} closes the wrong bracket", text, at)
            if not stack:
                parts.append(_Span(part_start, at, deepest))
                return _values(text, parts), token.end()
        elif len(stack) == 1:  # a comma between two parts
            parts.append(_Span(part_start, at, deepest))
            part_start, deepest = token.end(), 0
    _not_json(f"{len(stack):,} brackets still open at the end", text, len(text))


def _values(text: str, parts: list[_Span]) -> list[_Span]:
    """The parts, none of them blank (an empty container has no parts)."""
    if len(parts) == 1 and not text[parts[0].start : parts[0].end].strip(_JSON_SPACE):
        return []
    for part in parts:
        if not text[part.start : part.end].strip(_JSON_SPACE):
            _not_json("Expecting value", text, part.end)
    return parts


def _member(text: str, span: _Span) -> tuple[str, _Span]:
    """The name and the value span of one ``"name": value`` member of an object."""
    start = _skip_space(text, span.start)
    if text[start] != '"':
        _not_json("Expecting property name enclosed in double quotes", text, start)
    name_end = _string_end(text, start + 1)
    colon = _skip_space(text, name_end)
    if colon >= span.end or text[colon] != ":":
        _not_json("Expecting ':' delimiter", text, colon)
    value_start = _skip_space(text, colon + 1)
    if value_start >= span.end:
        _not_json("Expecting value", text, value_start)
    try:
        name = json.loads(text[start:name_end])  # one string literal: cannot recurse
    except json.JSONDecodeError as exc:
        _not_json(exc.msg, text, start + exc.pos)
    return name, _Span(value_start, span.end, span.depth)


def _string_end(text: str, pos: int) -> int:
    """The index after the closing quote of the string whose body starts at ``pos``."""
    match = _STRING_REST.match(text, pos)
    if match is None:
        _not_json("Unterminated string", text, pos - 1)
    return match.end()


def _skip_space(text: str, pos: int) -> int:
    spaces = _SPACE.match(text, pos)  # matches the empty string too
    return spaces.end() if spaces else pos


def _parse_item(text: str, span: _Span, max_depth: int) -> tuple[Any, str | None]:
    """One item's value, or None and why it is refused."""
    if span.depth > max_depth:
        return None, f"nested {span.depth:,} levels deep (limit {max_depth})"
    try:
        value = _DECODER.decode(text[span.start : span.end])  # json.loads, with the hook
    except _NumberTooLong as exc:
        return None, f"a number with {exc.digits:,} digits (limit {MAX_INT_DIGITS:,})"
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at position {span.start + exc.pos})"
    except ValueError as exc:  # nothing else is known to reach here; refuse, never raise
        return None, f"not usable JSON ({exc})"[:200]
    if _has_lone_surrogate(value):
        return None, "text is not valid Unicode (a lone surrogate)"
    return value, None


def _bounded_int(digits: str) -> int:
    """``parse_int`` that refuses, instead of converting, an integer too long to convert."""
    count = len(digits) - digits.startswith("-")
    if count > MAX_INT_DIGITS:
        raise _NumberTooLong(count)
    try:
        return int(digits)
    except ValueError:  # a process that lowered sys.set_int_max_str_digits
        raise _NumberTooLong(count) from None


_DECODER = json.JSONDecoder(parse_int=_bounded_int)


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string in the value (dictionary keys included) cannot be encoded."""
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(node, dict):
            pending.extend(node)
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return False


def _refuse_scalar(text: str, key: str) -> NoReturn:
    """Raise the OutputError for a document that is no list or object."""
    try:
        _DECODER.decode(text)  # a scalar first: cannot recurse
    except json.JSONDecodeError as exc:
        _not_json(exc.msg, text, exc.pos)
    except (_NumberTooLong, ValueError):
        pass  # a number, still not a list
    raise OutputError(_shape(key))


def _shape(key: str) -> str:
    return f'output must be {{"{key}": [...]}} or a list of {key}'


def _not_json(message: str, text: str, pos: int) -> NoReturn:
    """Raise the OutputError for a document that is not JSON, naming where it breaks."""
    error = json.JSONDecodeError(message, text, pos)
    raise OutputError(f"output is not JSON (JSONDecodeError: {error})")
