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
            "Experiment",
            "HistoryChangedError",
            "MemoryBlock",
            "ModelCallError",
            "NpcError",
            "ArgumentError",
            "QueryError",
            "Npc",
            "Project",
            "Reply",
            "Settings",
            "Snapshot",
            "StoreError",
            "StoreLockedError",
            "StreamScrubber",
            "SymlinkedStoreError",
            "UnknownFilterError",
            "UnknownMemoryError",
            "agreement",
            "import_bundle",
            "load_settings",
            "open",
            "open_project",
            "provenance",
            "rerun",
            "RerunReport",
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
    "adjudicate",
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
    "diff",
    "edit",
    "experiment",
    "experiments",
    "export_bundle",
    "get_npc",
    "memories",
    "npc",
    "npcs",
    "reject",
    "reproposals",
    "requeue",
    "review",
    "review_queue",
    "review_session",
    "set_validity",
    "skip",
    "snapshot",
    "snapshots",
    "sql",
    "status",
    "supersede",
    "undo",
    "verify",
    "votes",
]
PROJECT_PROPERTIES = [
    "access",
    "exports",
    "extraction",
    "graph",
    "imports",
    "metrics",
    "store_path",
]


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


#: The module paths of the layout before the store got its rooms and the foundations
#: theirs (issue 35): each still imports, a moved one as the very module it moved to.
EARLIER_LAYOUT = """
    npc_nb._arguments npc_nb._console npc_nb._ids npc_nb._json_items npc_nb._locations
    npc_nb._markup npc_nb._redact npc_nb._results npc_nb._settings npc_nb._settings_view
    npc_nb._store_url npc_nb._tables npc_nb._terms npc_nb._text npc_nb._time npc_nb.cli
    npc_nb.review.session npc_nb.store npc_nb.store._database npc_nb.store._faults
    npc_nb.store._lease npc_nb.store._pg_errors npc_nb.store._pg_presence
    npc_nb.store._pg_sql npc_nb.store._transfer_into npc_nb.store.analytics
    npc_nb.store.chat_log npc_nb.store.events npc_nb.store.exports npc_nb.store.frames
    npc_nb.store.generation npc_nb.store.graph_nodes npc_nb.store.graph_sql
    npc_nb.store.jobs npc_nb.store.known_rows npc_nb.store.memory_rows
    npc_nb.store.migrations npc_nb.store.notice_checks npc_nb.store.notices
    npc_nb.store.pg_analysis npc_nb.store.pg_listener npc_nb.store.pg_migrations
    npc_nb.store.pg_project npc_nb.store.pg_read_only npc_nb.store.pg_roles
    npc_nb.store.postgres npc_nb.store.predicates npc_nb.store.reproposal_rows
    npc_nb.store.schema_doc npc_nb.store.stores npc_nb.store.transfer
    npc_nb.store.user_sql npc_nb.store.views
""".split()


def test_every_module_path_of_the_earlier_layout_still_imports() -> None:
    run_fresh(
        "import importlib\n"
        "from npc_nb._compat import MOVED\n"
        f"for old in {EARLIER_LAYOUT!r}:\n"
        "    module = importlib.import_module(old)\n"
        "    new = MOVED.get(old, old)\n"
        "    assert module is importlib.import_module(new) and module.__name__ == new, old\n"
        "from npc_nb.cli import main  # the console script's entry point\n"
        "from npc_nb.store.postgres import PostgresStore\n"
        "from npc_nb.store._database import Connection, Store, insert_row\n"
        "assert issubclass(PostgresStore, Store)\n"
        "from npc_nb.review.session import (TALLY_KINDS, Card, Decided, Nearest,\n"
        "    ReviewSession, Summary, evidence_span)\n"
    )


def test_an_old_module_path_still_runs_with_python_m(tmp_path) -> None:
    """``python -m npc_nb.store.schema_doc``, the schema page's command of earlier
    releases, prints what today's ``python -m npc_nb.store.schema.doc`` prints."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    printed = [
        subprocess.run(
            [sys.executable, "-W", "error", "-m", module],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        for module in ("npc_nb.store.schema_doc", "npc_nb.store.schema.doc")
    ]
    assert [run.returncode for run in printed] == [0, 0], [run.stderr for run in printed]
    assert printed[0].stdout == printed[1].stdout
    assert printed[0].stdout.startswith("# The store schema")
