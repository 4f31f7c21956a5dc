"""What a re-run found: one ``CellRerun`` per code cell, gathered in a ``RerunReport``.

The report renders itself (a line per cell, each changed cell's short diff under it)
for a notebook, a terminal and ``npc-nb rerun`` alike; ``cells`` is the same as a
DataFrame. Saved and new outputs are data from a notebook file, hence hostile: the
HTML view escapes them and the terminal view shows control characters visibly.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._foundations.markup import plain_text
from .._foundations.tables import Kind, with_missing_as_na

__all__ = ["CELL_KINDS", "CellRerun", "RerunReport"]

#: The columns of ``RerunReport.cells``, and their kinds (``_foundations.tables``).
CELL_KINDS: dict[str, Kind] = {"cell": "int", "status": "text", "detail": "text"}


@dataclass(frozen=True)
class CellRerun:
    """One code cell re-run: ``status`` is ``identical``, ``changed`` (``detail``: a
    short unified diff, saved lines ``-``, new ``+``) or ``failed`` (``detail``: the
    error it raised)."""

    cell: int
    status: str
    detail: str | None = None


@dataclass
class RerunReport:
    """A saved notebook re-run: replayed (``live=False``) or calling the model again."""

    notebook: Path
    live: bool
    output: Path | None
    results: list[CellRerun] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        """Whether every code cell showed again exactly what the notebook saved."""
        return all(result.status == "identical" for result in self.results)

    @property
    def cells(self) -> pd.DataFrame:
        """One row per code cell: ``cell`` (its index), ``status``, ``detail``."""
        rows = [(r.cell, r.status, r.detail) for r in self.results]
        return with_missing_as_na(pd.DataFrame(rows, columns=list(CELL_KINDS)), CELL_KINDS)

    def headline(self) -> str:
        counts = {s: sum(r.status == s for r in self.results) for s in _STATUSES}
        how = "calling the model again (live)" if self.live else "replayed from its recordings"
        tally = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        return f"{self.notebook.name} re-run, {how}: {tally or 'no code cells'}"

    def __str__(self) -> str:
        lines = [self.headline()]
        for result in self.results:
            lines.append(f"cell {result.cell}: {result.status}")
            lines += [f"    {line}" for line in (result.detail or "").splitlines()]
        if self.output is not None:
            lines.append(f"saved to {self.output}")
        return plain_text("\n".join(lines))

    def _repr_mimebundle_(self, **_: object) -> dict[str, str]:
        return {"text/plain": str(self), "text/html": f"<pre>{html.escape(str(self))}</pre>"}


_STATUSES = ("identical", "changed", "failed")
