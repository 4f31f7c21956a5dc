"""The JupyterLab graph renderer is committed prebuilt; it must match its sources.

Nothing but ``make labextension`` needs node or npm: installs, the lab and CI use the
build under ``widgets/graph_renderer/labextension``. The build records the digest of the
sources it was made from, so an edit to the sources without a rebuild fails here.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from npc_nb.graph.view import MIME_TYPE

RENDERER = Path(__file__).resolve().parents[2] / "widgets" / "graph_renderer"
BUILD = RENDERER / "labextension"
NOT_SOURCES = {"labextension", "node_modules"}


def source_digest(root: Path) -> str:
    """What build.mjs records: sha256 over "path NUL content NUL" of every file but the
    build output and the dependencies, sorted by path."""
    digest = hashlib.sha256()
    files = sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and not NOT_SOURCES & set(path.relative_to(root).parts)
    )
    for name in files:
        digest.update(name.encode() + b"\0" + (root / name).read_bytes() + b"\0")
    return digest.hexdigest()


def test_the_committed_build_matches_its_sources() -> None:
    recorded = (BUILD / "source.sha256").read_text().strip()
    assert source_digest(RENDERER) == recorded, (
        "widgets/graph_renderer changed since its build: run `make labextension` and "
        "commit widgets/graph_renderer/labextension"
    )


def test_the_build_is_a_mime_renderer_jupyterlab_can_load() -> None:
    package = json.loads((BUILD / "package.json").read_text())
    build = package["jupyterlab"]["_build"]
    assert package["name"] == "npc-nb-graph" and build["mimeExtension"]
    assert (BUILD / build["load"]).is_file()
    # The MIME type the Python side emits is the one the built bundle renders.
    assert MIME_TYPE in (RENDERER / "src" / "index.js").read_text()
    bundled = [path.read_text(errors="replace") for path in (BUILD / "static").glob("*.js")]
    assert any(MIME_TYPE in text for text in bundled)
