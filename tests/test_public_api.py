"""The public surface behaves: its names import, its errors share one base, and importing
npc_nb stays cheap. What the surface is, name by name, is the generated docs/reference.md."""

from __future__ import annotations

import os
import subprocess
import sys

import npc_nb
from tests.helpers import REPO


def test_every_public_name_resolves() -> None:
    """The list itself is the API snapshot in docs/reference.md (tests/unit/
    test_generated_docs.py); here, each name it holds imports."""
    for name in npc_nb.__all__:
        assert hasattr(npc_nb, name), name


def test_every_domain_error_is_an_npc_error() -> None:
    for name in npc_nb.__all__:
        obj = getattr(npc_nb, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, npc_nb.NpcError), name


def test_import_does_not_pull_in_model_or_notebook_libraries() -> None:
    code = (
        "import sys, npc_nb; heavy = ('litellm', 'IPython', 'ipywidgets', 'anywidget', 'pyvis'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_vocabulary_is_the_design_documents() -> None:
    assert npc_nb.STATUSES == (
        "pending_approval",
        "deferred",
        "human-approved",
        "human-edited",
        "human-rejected",
        "superseded",
    )
    assert npc_nb.CATEGORIES == (
        "decision",
        "preference",
        "commitment",
        "constraint",
        "open_loop",
        "fact",
    )
    assert npc_nb.SCOPES == ("npc", "team", "project", "global")


def test_each_heavy_dependency_has_one_owner() -> None:
    """litellm only in the model gateway, pyvis only in the graph page, the widget
    libraries only in the review panel."""
    import re
    from pathlib import Path

    package = Path(npc_nb.__file__).parent
    owners = {
        "litellm": {"models/gateway.py"},
        "pyvis": {"graph/page.py"},
        "ipywidgets": {"review/panel/panel.py"},
        "anywidget": {"review/panel/keys.py"},
    }
    for module, allowed in owners.items():
        pattern = re.compile(rf"^\s*(import|from) {module}\b", re.MULTILINE)
        importers = {
            path.relative_to(package).as_posix()
            for path in package.rglob("*.py")
            if pattern.search(path.read_text())
        }
        assert importers == allowed, module


def test_module_paths_of_earlier_layouts_are_gone() -> None:
    """Nothing is released before 0.1.0, so a moved module keeps no old path: importing
    npc_nb installs no import hook, and ``npc_nb.metrics`` (now
    ``npc_nb.analytics.metrics``) is not found."""
    code = (
        "import importlib, sys, npc_nb\n"
        "assert not [f for f in sys.meta_path if type(f).__module__.startswith('npc_nb')]\n"
        "for old in ('npc_nb.metrics', 'npc_nb.config', 'npc_nb.store.postgres', 'npc_nb._text'):\n"
        "    try:\n"
        "        importlib.import_module(old)\n"
        "    except ModuleNotFoundError:\n"
        "        continue\n"
        "    raise SystemExit(f'{old} still imports')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr + out.stdout
