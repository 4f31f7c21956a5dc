"""A real JupyterLab on loopback and headless Chromium, for tests that need a browser.

The server runs from this virtual environment with throwaway config, data, runtime and
settings folders and a random token. Chromium is Debian's (/usr/bin/chromium, which
``.ci/run`` installs); Playwright only drives it and never downloads a browser. Every
request that does not go to the local server is blocked and recorded, so a test can
prove a page works offline.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

CHROMIUM = "/usr/bin/chromium"
#: What to install when Chromium is missing (Debian's package; Playwright never downloads one).
CHROMIUM_INSTALL = "sudo apt-get install chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
# The graph renderer built from this checkout, which the lab uses whatever copy of it the
# environment installed (the lab's own data folder comes first in its search path).
GRAPH_RENDERER = ROOT / "widgets" / "graph_renderer" / "labextension"


@dataclass
class Lab:
    url: str
    token: str
    root: Path
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (url, frame url)

    def write_notebook(self, name: str, cells: list[str]) -> str:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nbformat.write(notebook, self.root / name)
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def missing_browser(chromium: str | None = None) -> str | None:
    """Why the browser tests cannot run here (with ``chromium`` or ours), or None."""
    chromium = chromium or CHROMIUM
    if Path(chromium).is_file() and os.access(chromium, os.X_OK):
        return None
    return (
        f"the browser tests need Debian's Chromium at {chromium}, which is missing: "
        f"install it with `{CHROMIUM_INSTALL}` (the package is named chromium)"
    )


@contextmanager
def jupyterlab(base: Path, env: dict[str, str]) -> Iterator[Lab]:
    """Start JupyterLab serving ``base/notebooks`` and stop it afterwards."""
    root, port, token = base / "notebooks", _free_port(), secrets.token_hex(16)
    root.mkdir(parents=True)
    dirs = {
        name: base / name
        for name in ("config", "data", "runtime", "ipython", "settings", "workspaces")
    }
    for folder in dirs.values():
        folder.mkdir()
    (dirs["data"] / "labextensions").mkdir()
    (dirs["data"] / "labextensions" / "npc-nb-graph").symlink_to(GRAPH_RENDERER)
    news = dirs["settings"] / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    server_env = {
        **os.environ,
        **env,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["ipython"]),
        "JUPYTERLAB_SETTINGS_DIR": str(dirs["settings"]),
        "JUPYTERLAB_WORKSPACES_DIR": str(dirs["workspaces"]),
        # In a virtual environment Jupyter looks in the environment's data folder
        # first, where pip copied the renderer as it was at install time; the lab's own
        # data folder (this checkout's build, linked above) must come first.
        "JUPYTER_PREFER_ENV_PATH": "0",
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--allow-root",
    ]
    log = (base / "jupyterlab.log").open("w")
    server = subprocess.Popen(command, env=server_env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, token, server)
        yield Lab(url, token, root)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait_ready(url: str, token: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                return
        except OSError:
            time.sleep(0.25)
    raise TimeoutError("JupyterLab did not start within a minute")


@contextmanager
def browser_page(lab: Lab) -> Iterator[object]:
    """A Chromium page that may reach only the local JupyterLab."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})

        def guard(route: object) -> None:
            request = route.request  # type: ignore[attr-defined]
            if request.url.startswith(lab.url) or request.url.startswith(("data:", "blob:")):
                route.continue_()  # type: ignore[attr-defined]
            else:
                frame = request.frame.url if request.frame else ""
                lab.blocked.append((request.url, frame))
                route.abort()  # type: ignore[attr-defined]

        context.route("**/*", guard)
        page = context.new_page()
        try:
            yield page
        finally:
            context.close()
            browser.close()


def run_all_cells(page: object, count: int, attempts: int = 3) -> None:
    """Run every code cell of the open notebook once, in order, and wait until idle.

    Key presses can be lost while JupyterLab settles focus, and a dialog (kernel
    selection, a notification) can cover the menu, so each cell is run through
    JupyterLab's own "Run Selected Cell" command from the Run menu, after closing any
    dialog, and checked: a cell that shows no execution count is run again (a lost
    command never ran, so nothing runs twice).
    """
    page.wait_for_selector(  # type: ignore[attr-defined]
        ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000
    )
    for index in range(count):
        for _ in range(attempts):
            _run_cell(page, index)
            if _executed(page, index):
                break
        else:
            page.screenshot(path=str(ARTIFACTS / "run-cells-failed.png"))  # type: ignore[attr-defined]
            raise AssertionError(f"cell {index} never ran; see run-cells-failed.png")


def _run_cell(page: object, index: int) -> None:
    _close_dialogs(page)
    _cell(page, index).locator(".jp-InputPrompt").click()
    page.click(".lm-MenuBar-item:has-text('Run')")  # type: ignore[attr-defined]
    page.click(".lm-Menu-item[data-command='notebook:run-cell']")  # type: ignore[attr-defined]


def _executed(page: object, index: int) -> bool:
    """Whether cell ``index`` started (``[*]`` or a count, which JupyterLab shows as soon
    as the command runs) within 30 s of the command; if so, wait (generously) until it
    has finished and the kernel is idle."""
    prompt = _cell(page, index).locator(".jp-InputPrompt")
    try:
        prompt.filter(has_text=re.compile(r"\[(\d+|\*)\]")).wait_for(  # type: ignore[attr-defined]
            timeout=30_000
        )
    except Exception:
        return False  # the command was lost: nothing ran
    prompt.filter(has_text=re.compile(r"\[\d+\]")).wait_for(  # type: ignore[attr-defined]
        timeout=180_000
    )
    page.wait_for_selector(  # type: ignore[attr-defined]
        ".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=180_000
    )
    return True


def _cell(page: object, index: int) -> object:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)  # type: ignore[attr-defined]


def _close_dialogs(page: object) -> None:
    """Dismiss any JupyterLab dialog (recording its text) so it cannot cover the menu."""
    for _ in range(3):
        dialog = page.locator(".jp-Dialog")  # type: ignore[attr-defined]
        if not dialog.count():
            return
        print("closing a JupyterLab dialog:", dialog.first.inner_text()[:300])
        page.keyboard.press("Escape")  # type: ignore[attr-defined]
        page.wait_for_timeout(200)  # type: ignore[attr-defined]
