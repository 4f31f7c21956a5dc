"""The public surface is pinned, and importing npc_nb stays cheap."""

from __future__ import annotations

import os
import subprocess
import sys

import npc_nb
from tests.helpers import REPO


def test_public_names_are_pinned() -> None:
    assert sorted(npc_nb.__all__) == sorted(
        [
            "CATEGORIES",
            "DECISIONS",
            "SCOPES",
            "STATUSES",
            "AlreadyDecidedError",
            "ApproveAllPreview",
            "CandidateError",
            "CandidateOutcome",
            "ConfigError",
            "DecisionError",
            "DecisionResult",
            "MemoryBlock",
            "ModelCallError",
            "NpcError",
            "ArgumentError",
            "QueryError",
            "Persona",
            "Project",
            "Reply",
            "Settings",
            "StoreError",
            "StoreLockedError",
            "StreamScrubber",
            "SymlinkedStoreError",
            "UnknownFilterError",
            "UnknownMemoryError",
            "load_settings",
            "open",
            "open_project",
            "scrub_memory_tags",
        ]
    )
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


PROJECT_METHODS = [
    "add_candidate",
    "approve",
    "approve_all",
    "automatic_outcomes",
    "chat",
    "close",
    "configure",
    "context",
    "context_block",
    "decide",
    "decisions",
    "defer",
    "edit",
    "export",
    "export_graphml",
    "export_review_log",
    "graph",
    "graph_frames",
    "memories",
    "npc",
    "persona",
    "personas",
    "pyvis_network",
    "reject",
    "reproposals",
    "requeue",
    "review_panel",
    "review_queue",
    "review_session",
    "set_validity",
    "show_graph",
    "skip",
    "sql",
    "status",
    "supersede",
    "undo",
]
PROJECT_PROPERTIES = ["extraction", "metrics", "store_path"]


def test_project_public_methods_and_properties_are_pinned() -> None:
    public = {name for name in dir(npc_nb.Project) if not name.startswith("_")}
    assert public == {*PROJECT_METHODS, *PROJECT_PROPERTIES}


def run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter: importing the old paths changes process-wide
    import state, which no other test may inherit."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_module_paths_of_earlier_releases_still_import() -> None:
    run_fresh(
        "import importlib\n"
        "from npc_nb._compat import MOVED\n"
        "for old, new in MOVED.items():\n"
        "    assert importlib.import_module(old) is importlib.import_module(new), old\n"
        "from npc_nb.metrics import Metrics  # the path the docs of earlier releases used\n"
        "assert Metrics.__module__ == 'npc_nb.analytics.metrics'\n"
    )


def test_an_old_module_path_leaves_the_new_module_as_it_was(tmp_path) -> None:
    run_fresh(
        "import importlib, os\n"
        f"os.chdir({str(tmp_path)!r})\n"
        "import npc_nb.magics  # an old notebook's import\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\n"
        "ip.run_line_magic('load_ext', 'npc_nb')\n"
        "assert ip.run_line_magic('npc_sql', 'SELECT 1 AS x')['x'].tolist() == [1]\n"
        "from npc_nb._compat import MOVED\n"
        "for old, new in MOVED.items():\n"
        "    module = importlib.import_module(new)\n"
        "    importlib.import_module(old)\n"
        "    assert module.__spec__.name == new, (old, module.__spec__.name)\n"
    )
