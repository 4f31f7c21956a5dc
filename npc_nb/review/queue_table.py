"""``%npc_review --list``: the review queue as a table a reviewer can read.

``nb.review_queue()`` returns every column a program needs (ids first, provenance,
evidence, ...): shown as it is, fifteen columns squeeze the text into one word per line.
This view keeps the few a reviewer reads, text first and a short id last, and only shows
the columns about wordings, updates and flags when some candidate has them. The full
frame stays on ``.frame``. Every value is data: escaped for HTML, control characters
made visible for text.
"""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from .._foundations.markup import terminal_text

__all__ = ["QueueTable", "short_id"]

#: Characters of an id shown: the random end of a UUIDv7 (its start is the time, shared
#: by candidates proposed together).
SHORT_ID = 8
#: The text column wraps at word boundaries and keeps a reading width; the short facts
#: beside it never wrap.
_STYLE = (
    "<style>.npc-review-list th, .npc-review-list td {text-align: left; vertical-align: top;"
    " padding: 0.25em 0.6em; white-space: nowrap}"
    " .npc-review-list td.npc-text {white-space: pre-wrap; min-width: 24em; max-width: 48em}"
    "</style>"
)


class QueueTable:
    """The review queue shown as a readable table; ``frame`` is the full DataFrame."""

    def __init__(self, frame: pd.DataFrame, filters: dict[str, Any] | None = None) -> None:
        self.frame = frame
        self.filters = ", ".join(f"{k}={v}" for k, v in (filters or {}).items() if v)

    def __len__(self) -> int:
        return len(self.frame)

    def table(self) -> pd.DataFrame:
        """The columns shown: text, category, persona, scope, when it was proposed, then
        wordings, updates and flags where any candidate has them, and a short id."""
        rows = self.frame.to_dict("records")
        shown = pd.DataFrame(
            {
                "text": [row["final_text"] for row in rows],
                "category": [row["category"] for row in rows],
                "persona": [_persona(row) for row in rows],
                "scope": [row["scope"] for row in rows],
                "proposed": [_when(row["recorded_at"]) for row in rows],
                "wordings": [int(row["variants"]) for row in rows],
                "updates": [short_id(row["updates"]) for row in rows],
                "flags": [", ".join(row["flags"]) for row in rows],
                "id": [short_id(row["id"]) for row in rows],
            }
        )
        optional = {"wordings": shown["wordings"].gt(1), "updates": shown["updates"].ne("")}
        optional["flags"] = shown["flags"].ne("")
        unused = [name for name, used in optional.items() if not used.any()]
        return shown.drop(columns=unused)

    def _heading(self) -> str:
        limited = f" matching {self.filters}" if self.filters else ""
        if self.frame.empty:
            return f"Nothing to review: no candidate{limited} is waiting for approval."
        return (
            f"{len(self.frame)} candidate(s){limited} waiting for review "
            "(every column, full ids: nb.review_queue())"
        )

    def __str__(self) -> str:
        lines = [self._heading()]
        for row in self.table().to_dict("records"):
            facts = [row["category"], row["persona"], row["scope"], row["proposed"]]
            facts.append(f"{row['wordings']} wordings" if row.get("wordings", 1) > 1 else "")
            facts.append(f"updates {row['updates']}" if row.get("updates") else "")
            facts.append(f"flagged {row['flags']}" if row.get("flags") else "")
            lines.append(f"  {terminal_text(row['text'])}")
            lines.append(f"      {terminal_text(' · '.join(f for f in facts if f))} · {row['id']}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        table = self.table()
        ids = self.frame["id"].tolist()
        head = "".join(f"<th>{escape(str(name))}</th>" for name in table.columns)
        body = "".join(
            "<tr>" + "".join(_cell(name, value, full_id) for name, value in row.items()) + "</tr>"
            for row, full_id in zip(table.to_dict("records"), ids, strict=True)
        )
        rows = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        return (
            f'<div class="npc-review-list">{_STYLE}<p>{escape(self._heading())}</p>'
            f"{rows if len(table) else ''}</div>"
        )

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": self._repr_html_()}


def short_id(memory_id: Any) -> str:
    """The last characters of an id ("" for none): enough to tell candidates apart."""
    return f"…{memory_id[-SHORT_ID:]}" if isinstance(memory_id, str) and memory_id else ""


def _cell(name: str, value: Any, full_id: str) -> str:
    if name == "text":
        return f'<td class="npc-text">{escape(str(value))}</td>'
    title = f' title="{escape(full_id)}"' if name == "id" else ""
    return f"<td{title}>{escape(str(value))}</td>"


def _persona(row: dict[str, Any]) -> str:
    """Whose memory it would be: the persona, or the team of a team-scoped one."""
    who = {"npc": row["npc"], "team": row["team"]}.get(row["scope"])
    return who if isinstance(who, str) else ""


def _when(moment: Any) -> str:
    return "" if pd.isna(moment) else f"{pd.Timestamp(moment):%Y-%m-%d %H:%M}"
