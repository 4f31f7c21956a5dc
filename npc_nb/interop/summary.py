"""What an import did, as result objects that render themselves, and the progress line
a long import shows.

``ImportSummary`` (npcpy, mem0, Letta): records read, imported by the status they have
now (``pending_approval`` for review, ``human-approved``, ``human-edited``,
``human-rejected``), merged, suppressed and reinforced by the matcher,
already imported before (the same file again imports nothing new), skipped with their
position and reason, held for review with their reasons (``held``: a decision the
source recorded that the gate did not take), and warnings (a trusted import says so).
``BundleImport``: rows written and duplicates skipped per table, the migrations an old
bundle went through, and its ``held`` conflicts. Both give text and escaped HTML
(``_repr_mimebundle_``); text from a file is shown with its control characters as
visible escapes.

``Progress`` writes one line that updates in place (a carriage return), to standard
error, for an import of at least ``PROGRESS_AT`` records: a terminal shows one
changing line, a notebook too (Jupyter honours the carriage return in a stream), and
nothing needs ipywidgets or tqdm. Updates are at most a few a second.
"""

from __future__ import annotations

import html
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import IO

from .._foundations.markup import terminal_text

__all__ = ["PROGRESS_AT", "BundleImport", "Held", "ImportSummary", "Progress", "Skipped", "preview"]

#: How much of a held record's text its line shows.
PREVIEW_CHARS = 80
#: Held records listed in full; the rest are counted.
LISTED = 20
#: An import of this many records or more shows a progress line.
PROGRESS_AT = 200
_EVERY_SECONDS = 0.25


@dataclass(frozen=True)
class Skipped:
    """A record that was not imported: where it is in the file, and why."""

    position: str
    reason: str

    def __str__(self) -> str:
        return f"{self.position}: {self.reason}"


@dataclass(frozen=True)
class Held:
    """A record the import left for review instead of taking its source's decision:
    where it is (``record``: its position in the file, or its id in a bundle), the
    memory it is about (its pending card, or the target's memory that stands), the
    start of its text, and why."""

    record: str
    memory_id: str | None
    preview: str
    reason: str

    def __str__(self) -> str:
        where = f"{self.record} (memory {self.memory_id})" if self.memory_id else self.record
        return terminal_text(f"{where} \u201c{self.preview}\u201d: {self.reason}")


def preview(text: str) -> str:
    """The start of a text, for a line that names it."""
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "\u2026"


def held_lines(held: list[Held]) -> list[str]:
    """The lines listing what was held for review (none when nothing was)."""
    if not held:
        return []
    lines = [f"  held for review: {len(held)} (the source's decision not taken)"]
    lines += [f"    {entry}" for entry in held[:LISTED]]
    if len(held) > LISTED:
        lines.append(f"    ... and {len(held) - LISTED} more")
    return lines


@dataclass
class ImportSummary:
    """What importing one file of another tool did (see the module docstring)."""

    source: str
    path: str
    read: int = 0
    imported: Counter[str] = field(default_factory=Counter)
    merged: int = 0
    suppressed: int = 0
    reinforced: int = 0
    already_imported: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    held: list[Held] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        by = ", ".join(f"{n} {outcome}" for outcome, n in sorted(self.imported.items()))
        lines = [
            f"Imported from {self.source}: {self.path}",
            f"  read {self.read} record(s) in {self.seconds:.2f} s",
            f"  imported: {sum(self.imported.values())}" + (f" ({by})" if by else ""),
            f"  merged into pending cards: {self.merged}",
            f"  suppressed by a rejection: {self.suppressed}",
            f"  reinforcing approved memories: {self.reinforced}",
            f"  already imported before: {self.already_imported}",
            f"  skipped: {len(self.skipped)}",
        ]
        lines += [f"    {skip}" for skip in self.skipped[:LISTED]]
        if len(self.skipped) > LISTED:
            lines.append(f"    ... and {len(self.skipped) - LISTED} more")
        lines += held_lines(self.held)
        lines += [f"Warning: {warning}" for warning in self.warnings]
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<pre>{html.escape(str(self))}</pre>"}


@dataclass
class BundleImport:
    """What importing a bundle wrote: rows and skipped duplicates per table."""

    path: str
    project: str
    inserted: dict[str, int]
    skipped: dict[str, int]
    format_version: int
    upgraded: tuple[str, ...] = ()
    seconds: float = 0.0
    held: list[Held] = field(default_factory=list)

    @property
    def duplicates(self) -> int:
        """Rows skipped because the project already had them (a merge)."""
        return sum(self.skipped.values())

    def __str__(self) -> str:
        width = max((len(t) for t in self.inserted), default=5)
        lines = [
            f"Imported the bundle {self.path} into {self.project!r} "
            f"(format {self.format_version}, {self.seconds:.2f} s)"
        ]
        if self.upgraded:
            lines.append(f"  an older bundle, brought up to date: {', '.join(self.upgraded)}")
        for table, count in self.inserted.items():
            extra = f"  ({self.skipped[table]} already there)" if self.skipped.get(table) else ""
            lines.append(f"  {table:<{width}}  {count:>9}{extra}")
        total = sum(self.inserted.values())
        lines.append(f"{total} rows written, {self.duplicates} duplicate(s) skipped.")
        lines += held_lines(self.held)
        return "\n".join(lines)

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<pre>{html.escape(str(self))}</pre>"}


class Progress:
    """A line that counts records as they are imported (see the module docstring)."""

    def __init__(self, total: int, label: str, stream: IO[str] | None = None) -> None:
        self.total, self.label = total, label
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.shown = total >= PROGRESS_AT
        self._last = 0.0

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if self.shown and (now - self._last >= _EVERY_SECONDS or self.done == self.total):
            self._last = now
            share = 100 * self.done // max(self.total, 1)
            self.stream.write(f"\r{self.label}: {self.done:,}/{self.total:,} ({share}%)")
            self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
