"""The test harness itself: what `make test` runs, and how it treats a missing browser."""

from __future__ import annotations

import os
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.helpers import running_in_ci
from tests.jupyterlab import missing_browser

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]


def test_a_missing_chromium_names_the_package_to_install(tmp_path: Path) -> None:
    reason = missing_browser(str(tmp_path / "no-chromium"))
    assert reason is not None
    assert "apt-get install chromium" in reason


def test_an_executable_chromium_lets_the_browser_tests_run(tmp_path: Path) -> None:
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    assert missing_browser(str(chromium)) is None
    chromium.chmod(0o644)  # present but not runnable is as good as missing
    assert missing_browser(str(chromium)) is not None


@pytest.mark.parametrize(("value", "ci"), [("true", True), ("1", True), ("", False), ("0", False)])
def test_ci_is_recognised_from_the_environment(value: str, ci: bool) -> None:
    assert running_in_ci({"CI": value}) is ci


BROWSER_TEST = """
import pytest

@pytest.mark.browser
def test_needs_a_browser():
    pass
"""


@pytest.mark.parametrize(("ci", "outcome"), [("", "skipped"), ("true", "errors")])
def test_browser_tests_skip_outside_ci_and_error_in_ci_without_chromium(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str, outcome: str
) -> None:
    """The real conftest hook, run on a browser-marked test with Chromium made missing."""
    monkeypatch.setattr("tests.jupyterlab.CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setenv("CI", ci)
    pytester.makeconftest("from tests.conftest import pytest_runtest_setup  # noqa: F401")
    pytester.makeini("[pytest]\nmarkers =\n    browser: drives a browser\n")
    pytester.makepyfile(BROWSER_TEST)
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-rs")
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines(["*apt-get install chromium*"])


def _make_dry_run(target: str = "test") -> str:
    """What `make <target>` would run, without running it."""
    done = subprocess.run(
        ["make", "-n", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MAKEFLAGS": ""},
    )
    return done.stdout


def _shipped_notebooks() -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "notebooks/*.ipynb"], cwd=ROOT, capture_output=True, text=True
    )
    if listed.returncode != 0 or not listed.stdout.strip():
        pytest.skip("not a git checkout: the shipped notebooks are those git tracks")
    return set(listed.stdout.split())


def test_make_test_runs_the_shipped_notebooks_by_name_only() -> None:
    nbval = [line for line in _make_dry_run().splitlines() if "--nbval" in line]
    assert len(nbval) == 1
    named = {word for word in nbval[0].split() if word.endswith(".ipynb")}
    assert named == _shipped_notebooks()
    assert " notebooks " not in f"{nbval[0]} "  # never the whole folder


def test_make_test_runs_every_marker_including_slow_and_postgres() -> None:
    """Only a missing browser or PostgreSQL skips tests: nothing is deselected by marker."""
    runs = [line for line in _make_dry_run().splitlines() if "pytest tests" in line]
    assert len(runs) == 1
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    addopts = pyproject["tool"]["pytest"]["ini_options"]["addopts"]
    command = shlex.split(runs[0], comments=True)
    pytest_options = command[command.index("pytest") + 1 :]
    for options in (pytest_options, shlex.split(addopts)):
        assert not any(option.startswith("-m") for option in options), options


def test_make_check_lints_and_runs_the_unit_tier_only() -> None:
    """`make check` is the loop while editing: ruff, then the unit tier, nothing slower."""
    commands = _make_dry_run("check").splitlines()
    assert any("ruff check" in line for line in commands), commands
    assert any("ruff format --check" in line for line in commands), commands
    runs = [shlex.split(line) for line in commands if "pytest" in line]
    assert [run[run.index("pytest") + 1 :][-1] for run in runs] == ["tests/unit"], runs
    assert not any("mypy" in line for line in commands)


def test_a_unit_test_is_marked_unit(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("unit") is not None
    assert request.node.get_closest_marker("integration") is None


TIERS = """
def test_here():
    pass
"""


def test_the_tiers_are_marked_by_folder(pytester: pytest.Pytester) -> None:
    """The real conftest hook: a test under tests/unit is `unit`, any other `integration`,
    so `-m unit` and `-m integration` select the two tiers."""
    pytester.makeconftest("from tests.conftest import pytest_collection_modifyitems  # noqa: F401")
    pytester.makeini("[pytest]\nmarkers =\n    unit: u\n    integration: i\n")
    (pytester.path / "tests" / "unit").mkdir(parents=True)
    (pytester.path / "tests" / "unit" / "test_pure.py").write_text(TIERS)
    (pytester.path / "tests" / "test_store.py").write_text(TIERS)
    for tier, selected in (
        ("unit", "*tests/unit/test_pure.py*"),
        ("integration", "*test_store.py*"),
    ):
        result = pytester.runpytest_inprocess("-p", "no:randomly", "-m", tier, "-v")
        result.assert_outcomes(passed=1, deselected=1)
        result.stdout.fnmatch_lines([selected + "PASSED*"])


def test_a_unit_test_cannot_open_a_store() -> None:
    """The unit tier stays fast: a test there that opens a database fails, saying where
    it belongs."""
    import duckdb

    with pytest.raises(AssertionError, match="tests/unit holds pure tests"):
        duckdb.connect()
