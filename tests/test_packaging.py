"""The review panel's front-end files ship inside the wheel and are found by every install."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from npc_nb.review.panel.assets import FRONTEND_FILES, frontend_file
from npc_nb.review.panel.keys import KeyBridge

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (built,) = out.glob("npc_nb-*.whl")
    return built


def test_wheel_contains_the_front_end_files(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in FRONTEND_FILES:
            shipped = archive.read(f"npc_nb/_frontend/{name}")
            assert shipped == (ROOT / "widgets" / name).read_bytes()
    assert not [n for n in names if n.startswith(("tests/", "widgets/"))]


def test_wheel_installs_the_graph_renderer_for_jupyterlab(wheel: Path) -> None:
    built = ROOT / "widgets" / "graph_renderer" / "labextension"
    name, version = wheel.name.split("-")[:2]
    shared = f"{name}-{version}.data/data/share/jupyter/labextensions/npc-nb-graph"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for path in (p for p in built.rglob("*") if p.is_file()):
            name = f"{shared}/{path.relative_to(built).as_posix()}"
            assert archive.read(name) == path.read_bytes()
    # Only the build: no sources, no node_modules, nothing of it inside the package.
    assert not [n for n in names if "node_modules" in n or "graph_renderer" in n]


def test_an_installed_wheel_finds_them(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    code = (
        "from npc_nb.review.panel.assets import frontend_file; "
        "print(frontend_file('review_keys.js'))"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    found = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(found) == site / "npc_nb" / "_frontend" / "review_keys.js"


def test_the_editable_install_finds_them_in_the_checkout() -> None:
    assert frontend_file("review_keys.js") == ROOT / "widgets" / "review_keys.js"
    assert str(KeyBridge._esm) == (ROOT / "widgets" / "review_keys.js").read_text()
    assert str(KeyBridge._css) == (ROOT / "widgets" / "review_panel.css").read_text()


def test_wheel_contains_the_frozen_schema_steps(wheel: Path) -> None:
    """An older bundle is staged on its step's frozen statements: they ship as package
    data, byte for byte."""
    frozen = sorted((ROOT / "npc_nb" / "store" / "schema" / "steps").glob("*.sql"))
    assert [path.name for path in frozen][:1] == ["0001.duckdb.sql"]
    with zipfile.ZipFile(wheel) as archive:
        for path in frozen:
            assert archive.read(f"npc_nb/store/schema/steps/{path.name}") == path.read_bytes()
