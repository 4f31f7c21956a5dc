"""The generated reference pages are the code's current surface: the API snapshot.

docs/reference.md (the Python API), docs/cli.md (``npc-nb``), docs/magics.md and
docs/settings.md are written by ``python docs/generate.py`` from the code. Each test here
regenerates one page in memory and compares it with the committed file: a rename, a new
keyword or a changed default shows up as a diff of these pages in review, and a page left
behind fails with the command that rewrites it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("docs_generate", module)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


@pytest.mark.parametrize("page", sorted(GENERATE.PAGES))
def test_the_generated_page_matches_the_code(page: str) -> None:
    committed = ROOT / "docs" / page
    expected = GENERATE.PAGES[page]()
    actual = committed.read_text(encoding="utf-8") if committed.exists() else ""
    assert actual == expected, (
        f"docs/{page} is out of date with the code: run `{GENERATE.COMMAND}` from the "
        "repository root and review the diff"
    )


def test_the_reference_has_an_entry_for_every_public_name_and_project_group() -> None:
    """The generator reads ``npc_nb.__all__`` and the ``Project`` properties, whatever the
    names are: nothing public is left out of the snapshot."""
    import npc_nb

    headings = set(GENERATE.reference_page().splitlines())
    missing = [  # a class or error under its name, a function or constant as npc_nb.name
        name
        for name in npc_nb.__all__
        if not {f"### `npc_nb.{name}`", f"### `{name}`", f"## `{name}`"} & headings
    ]
    assert missing == []
    assert GENERATE.attribute_groups()["metrics"].__name__ == "Metrics"
    assert "## `nb.metrics` (Metrics)" in headings
