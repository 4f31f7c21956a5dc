"""Notebooks as a researcher saves them: built from cells, executed by nbclient in a
real kernel (ipykernel) as Jupyter would, and written to disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient


def notebook(project: Path, *cells: str) -> Any:
    """A notebook that opens ``project`` (extraction only on wait(), so nothing runs
    behind the cells) and runs ``cells``."""
    opening = (
        "import npc_nb\n"
        f"nb = npc_nb.open({str(project)!r}, extract_in_background=False)\n"
        "%load_ext npc_nb"
    )
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in (opening, *cells)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )


def executed(book: Any, folder: Path, *, allow_errors: bool = False) -> Any:
    """``book`` run top to bottom in a kernel whose working directory is ``folder``."""
    client = NotebookClient(
        book,
        timeout=600,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()
    return book


def saved(book: Any, path: Path) -> Path:
    """``book`` written to ``path``, as Jupyter saves it."""
    nbformat.write(book, path)
    return path
