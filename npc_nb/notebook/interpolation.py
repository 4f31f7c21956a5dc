"""Opt-in ``{name}`` interpolation of notebook variables into a prompt.

Off unless a cell asks (``%%npc NAME --vars``), because prompts are full of braces:
JSON, code, set notation. When on, ``{name}`` or ``{name.attr}`` is replaced by the
variable's value and ``{{`` / ``}}`` stand for literal braces. A DataFrame is
summarised (shape, columns, the first rows), never dumped; long values are cut.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import NpcError

__all__ = ["interpolate", "summarise"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\}")
MAX_VALUE_CHARS = 4_000
_PREVIEW_ROWS = 5


def interpolate(text: str, namespace: Mapping[str, Any]) -> str:
    """Replace ``{name}`` placeholders with summaries of the named variables."""

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return summarise(_lookup(match.group(1), namespace))

    return _PLACEHOLDER.sub(replace, text)


def _lookup(dotted: str, namespace: Mapping[str, Any]) -> Any:
    head, *rest = dotted.split(".")
    if head not in namespace:
        raise NpcError(
            f"{{{dotted}}}: no variable {head!r} in the notebook. Define it first, or write "
            "{{ and }} for literal braces."
        )
    value = namespace[head]
    for attribute in rest:
        try:
            value = getattr(value, attribute)
        except AttributeError as exc:
            raise NpcError(f"{{{dotted}}}: {type(value).__name__} has no {attribute!r}.") from exc
    return value


def summarise(value: Any) -> str:
    """A prompt-sized text for a value: DataFrames and Series are summarised."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(value, pd.DataFrame):
        head = value.head(_PREVIEW_ROWS).to_csv(index=False).strip()
        text = (
            f"[DataFrame: {value.shape[0]:,} rows x {value.shape[1]} columns; columns: "
            f"{', '.join(map(str, value.columns))}; first {min(len(value), _PREVIEW_ROWS)} "
            f"rows as CSV:]\n{head}"
        )
    elif pd is not None and isinstance(value, pd.Series):
        text = (
            f"[Series {value.name!r}: {len(value):,} values, dtype {value.dtype}; first "
            f"{_PREVIEW_ROWS}: {', '.join(map(str, value.head(_PREVIEW_ROWS)))}]"
        )
    else:
        text = str(value)
    if len(text) > MAX_VALUE_CHARS:
        text = text[:MAX_VALUE_CHARS] + f" [... {len(text) - MAX_VALUE_CHARS:,} characters cut]"
    return text
