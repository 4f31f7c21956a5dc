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
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


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
    """Run every cell of the open notebook through JupyterLab's own "Run All Cells"
    command (the Run menu), once the kernel is ready, and wait until it is idle again.

    Key presses can be lost while JupyterLab is still settling focus; the menu command
    cannot. If the first cell shows no execution after a while, the command is issued
    again (it is harmless before anything ran).
    """
    del count  # the menu command runs them all
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']",  # type: ignore[attr-defined]
        timeout=60_000,
    )
    first_prompt = ".jp-Cell:first-child .jp-InputPrompt"
    for _ in range(attempts):
        page.click(".lm-MenuBar-item:has-text('Run')")  # type: ignore[attr-defined]
        page.click(  # type: ignore[attr-defined]
            ".lm-Menu-item[data-command='runmenu:run-all']"
        )
        try:
            page.wait_for_function(  # type: ignore[attr-defined]
                "s => /\\[(\\d+|\\*)\\]/.test(document.querySelector(s)?.textContent || '')",
                arg=first_prompt,
                timeout=20_000,
            )
            break
        except Exception:
            continue
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']",  # type: ignore[attr-defined]
        timeout=120_000,
    )
