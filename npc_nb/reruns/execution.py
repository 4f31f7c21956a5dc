"""Running a saved notebook again, the replay forced from outside: ``npc_nb.rerun``.

Key design choice: the saved cells are never edited. A copy of the notebook runs in a
kernel of its own, started in the notebook's folder, whose environment holds
``NPC_NB_RERUN=replay`` (``live`` with ``live=True``): the model gateway's recorder reads
it, and it wins over the notebook's own ``model_replay`` cells, so a notebook that
recorded its replies answers every call from those recordings (or, live, calls the
model for every one, keeping nothing). Every cell runs even after one fails, and each
is compared with what the notebook saved. The saved file is left as it is; ``output``
names where the re-run notebook is written, if anywhere.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models.recording import RERUN_VARIABLE
from .comparison import compare_cell
from .report import RerunReport

__all__ = ["CELL_TIMEOUT", "rerun"]

#: Seconds a cell may run before the re-run gives up on it.
CELL_TIMEOUT = 600
#: The re-run's kernel logs only its errors: its warnings ("Kernel is running over TCP
#: ...") would land in the caller's terminal or cell, around the report.
KERNEL_LOG = ("--IPKernelApp.log_level=ERROR",)


def rerun(path: str | Path, live: bool = False, output: str | Path | None = None) -> RerunReport:
    """Execute the saved notebook at ``path`` again, every model call replayed from the
    recordings (``live=True``: made again), and report per code cell whether it showed
    exactly what was saved (``identical``), something else (``changed``, with a short
    diff) or raised (``failed``). ``output``: also write the re-run notebook there."""
    source = Path(path)
    saved = _read(source)
    again = copy.deepcopy(saved)
    errors = _execute(again, source, live)
    target = None if output is None else Path(output)
    if target is not None:
        _write(again, target)
    results = [
        compare_cell(
            index, cell.get("outputs"), again.cells[index].get("outputs"), errors.get(index)
        )
        for index, cell in enumerate(saved.cells)
        if cell.get("cell_type") == "code"
    ]
    return RerunReport(source, live, target, results)


def _read(path: Path) -> Any:
    import nbformat

    if path.suffix != ".ipynb" or not path.is_file():
        raise ConfigError(f"No notebook at {path}: name a saved .ipynb file.")
    try:
        return nbformat.read(path, as_version=4)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"Cannot read the notebook {path}: {exc}. Save it as .ipynb.") from None


def _execute(book: Any, source: Path, live: bool) -> dict[int, str]:
    """Run ``book`` in a fresh kernel in ``source``'s folder with the replay forced;
    returns the error each failing cell raised, by cell index."""
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient

    errors: dict[int, str] = {}

    def failed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        content = execute_reply.get("content", {})
        value = "\n".join(str(content.get("evalue", "")).splitlines()[:3])
        errors[cell_index] = f"{content.get('ename', 'Error')}: {value}"

    client = NotebookClient(
        book,
        timeout=CELL_TIMEOUT,
        allow_errors=True,
        on_cell_error=failed,
        extra_arguments=list(KERNEL_LOG),
        resources={"metadata": {"path": str(source.absolute().parent)}},
    )
    environment = {**os.environ, RERUN_VARIABLE: "live" if live else "replay"}
    try:
        client.execute(env=environment)
    except NoSuchKernel as exc:
        raise ConfigError(
            f"The notebook {source} asks for the kernel {exc.name!r}, which is not "
            "installed here: install it (pip install ipykernel for Python), or choose "
            "another kernel in the notebook and save it."
        ) from None
    return errors


def _write(book: Any, target: Path) -> None:
    import nbformat

    try:
        nbformat.write(book, target)
    except OSError as exc:
        raise ConfigError(
            f"Cannot write the re-run notebook to {target}: {exc.strerror}."
        ) from None
