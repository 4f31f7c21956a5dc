"""An NpcError raised in a notebook cell shows its message and the cell's own line, not
the frames inside npc_nb; every other error keeps IPython's traceback, ``%tb`` still
shows everything, and ``%unload_ext npc_nb`` gives IPython its own display back."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

import npc_nb

_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
_INSIDE = ("npc_nb/_foundations/arguments.py", "npc_nb/_project.py", "npc_nb/", "site-packages")


@pytest.fixture
def run(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> Iterator[object]:
    """Run a cell in the shell; return (its result, what it displayed, colours removed)."""

    def run_cell(source: str) -> tuple[object, str]:
        capsys.readouterr()
        result = shell.run_cell(source)
        return result, _COLOURS.sub("", capsys.readouterr().out)

    yield run_cell
    shell.run_line_magic("load_ext", "npc_nb")  # as the fixture left it, if a test unloaded


def test_an_npc_error_shows_its_message_and_the_cells_line_only(run) -> None:
    result, shown = run("nb = __import__('npc_nb').open()\nwhere = 'here'\nnb.context(None)")
    assert isinstance(result.error_in_exec, npc_nb.ArgumentError)  # the cell still failed
    assert shown.rstrip().endswith("ArgumentError: context(): npc must be a string, not None.")
    assert "----> 3 nb.context(None)" in shown  # the user's line, in its cell
    assert not [inside for inside in _INSIDE if inside in shown], shown
    assert len(shown.strip().splitlines()) <= 8, shown


def test_an_engine_error_behind_an_npc_error_stays_behind_it(run) -> None:
    result, shown = run("__import__('npc_nb').open().sql('SELECT * FROM no_such_table')")
    assert isinstance(result.error_in_exec, npc_nb.QueryError)
    assert result.error_in_exec.__cause__ is not None  # kept on the error for whoever asks
    assert "QueryError: The query failed: Catalog Error" in shown
    assert "direct cause" not in shown and "CatalogException" not in shown
    assert "npc_nb/" not in shown


def test_other_errors_and_tb_keep_the_whole_traceback(run) -> None:
    _, shown = run("def f():\n    return {}['missing']\nf()")
    assert "KeyError" in shown and "----> 2     return {}['missing']" in shown
    run("__import__('npc_nb').open().context(None)")
    _, full = run("%tb")
    assert "npc_nb/_foundations/arguments.py" in full and "ArgumentError" in full


def test_unloading_the_extension_gives_ipython_its_own_display_back(
    run, shell: InteractiveShell
) -> None:
    shell.run_line_magic("unload_ext", "npc_nb")
    assert shell.custom_exceptions == ()
    _, shown = run("__import__('npc_nb').open().context(None)")
    assert "npc_nb/_foundations/arguments.py" in shown  # IPython's full traceback again
    shell.run_line_magic("load_ext", "npc_nb")
    _, shown = run("__import__('npc_nb').open().context(None)")
    assert "npc_nb/" not in shown
