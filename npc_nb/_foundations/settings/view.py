"""Settings as a table: one setting a line, the value in effect, where it came from.

A setting left at ``None`` means "fall back to something": the table shows what is
actually used (``model``: the offline demo model; ``reviewer``: the default reviewer),
so nobody reads ``model=None`` and wonders which model answers. Credentials never
belong in settings, but a value can still carry one by accident (a URL with
``user:password@`` or ``?password=``); ``redact`` shows it as ``***``. Every value is
escaped in the HTML.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import NamedTuple

from ..markup import terminal_text
from ..redact import redact_text
from .reviewer import default_reviewer

__all__ = ["SettingRow", "settings_html", "settings_rows", "settings_text"]


class SettingRow(NamedTuple):
    name: str
    value: str
    source: str


def settings_rows(
    values: Mapping[str, object], sources: Mapping[str, str], offline_model: str
) -> list[SettingRow]:
    """Every setting with the value in effect and its source ("default" if unknown)."""
    model = values.get("model") or offline_model
    fallbacks = {
        "model": f"{offline_model} (the offline demo model)",
        "reviewer": _default_reviewer(),
        "match_model": f"{model} (the model setting)",
        "concept_model": f"{model} (the model setting)",
        "extraction_model": "each turn's own model",
        "matcher": "none: exact repeats only",
    }
    rows = []
    for name, value in values.items():
        shown = fallbacks.get(name, "None") if value is None else _shown(value)
        source = terminal_text(sources.get(name, "default"))
        rows.append(SettingRow(name, shown, source))
    return rows


def _shown(value: object) -> str:
    if callable(value):
        return getattr(value, "__qualname__", type(value).__name__)
    return terminal_text(redact_text(str(value)))


def settings_text(rows: list[SettingRow]) -> str:
    """The table as aligned plain text (its cells show control characters visibly)."""
    header = SettingRow("setting", "value", "from")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(2)]
    lines = [
        f"{row.name:<{widths[0]}}  {row.value:<{widths[1]}}  {row.source}".rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def settings_html(rows: list[SettingRow]) -> str:
    """The table as HTML, every cell escaped."""
    cells = "".join(
        f"<tr><td><code>{html.escape(row.name)}</code></td><td>{html.escape(row.value)}</td>"
        f"<td>{html.escape(row.source)}</td></tr>"
        for row in rows
    )
    head = "<tr><th>setting</th><th>value</th><th>from</th></tr>"
    return f'<table class="npc-nb-settings"><thead>{head}</thead><tbody>{cells}</tbody></table>'


def _default_reviewer() -> str:
    """The reviewer in effect when none is set: "ada (the OS user)", "Ada Lovelace (git
    user.name)", or a shared account with how to name yourself instead."""
    default = default_reviewer()
    if default.shared_account:
        return f"{default.name} (the OS user, a shared account: set reviewer= to your name)"
    return f"{default.name} ({default.source})"
