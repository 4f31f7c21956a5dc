"""A saved review cell tells one story, in a real JupyterLab in headless Chromium.

A review is saved half way and again at its end; the kernel is shut down; then each
saved notebook is reopened, trusted and untrusted, and exported with nbconvert. The cell
shows the final summary once (never the "still waiting" line of when it was opened,
never JupyterLab's "Error displaying widget: model not found"), and a notebook saved
half way explains why the panel is missing. Screenshots: saved-review-*.png.
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from npc_nb.review.panel.cards import NEEDS_KERNEL
from tests.jupyterlab import ARTIFACTS, Lab, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
SETUP = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
os.environ["NPC_NB_REVIEWER"] = "browser"
import npc_nb
nb = npc_nb.open({project!r})
for n in range(3):
    nb.add_candidate(f"saved candidate number {{n:02d}}", category="fact", npc="analyst")
%load_ext npc_nb
"""
FINISHED = "Review finished: 3 approved"
HALF_WAY = "2 still waiting: 1 approved"
MODEL_NOT_FOUND = "Error displaying widget"


def test_a_saved_review_cell_shows_its_summary_once_trusted_untrusted_and_exported(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project))
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("review.ipynb", [setup, "%npc_review"])
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 2)
            page.wait_for_selector(".npc-review-panel .npc-card-text", timeout=60_000)
            approve(page, "saved candidate number 00")
            save(page, "review.ipynb")
            # Byte for byte what was saved, so JupyterLab trusts it as it trusts that.
            shutil.copy(lab.root / "review.ipynb", lab.root / "half-way.ipynb")
            approve(page, "saved candidate number 01")
            approve(page, "saved candidate number 02")
            page.get_by_text(FINISHED).first.wait_for(timeout=WAIT_MS)
            save(page, "review.ipynb")
            shut_kernels_down(lab)

            shown = reopen(page, lab, "review.ipynb", "saved-review-trusted.png")
            assert shown.count(FINISHED) == 1, shown
            assert "still waiting" not in shown and MODEL_NOT_FOUND not in shown, shown
            assert NEEDS_KERNEL not in shown, shown  # nothing was left to continue

            shown = reopen(page, lab, "half-way.ipynb", "saved-review-half-way.png")
            assert shown.count(HALF_WAY) == 1 and NEEDS_KERNEL in shown, shown
            assert MODEL_NOT_FOUND not in shown, shown

            untrusted = json.loads((lab.root / "review.ipynb").read_text())
            untrusted["cells"][0]["source"] += "\n# changed after saving: no longer trusted"
            (lab.root / "untrusted.ipynb").write_text(json.dumps(untrusted))
            shown = reopen(page, lab, "untrusted.ipynb", "saved-review-untrusted.png")
            assert not page.locator(".jp-mod-trusted").count(), "the notebook should be untrusted"
            assert shown.count(FINISHED) == 1 and "still waiting" not in shown, shown

        exported = exported_html(lab.root / "review.ipynb")
        assert exported.count(FINISHED) == 1 and "still waiting" not in exported
        exported = exported_html(lab.root / "half-way.ipynb")
        assert exported.count(HALF_WAY) == 1 and NEEDS_KERNEL in exported


def approve(page: object, text: str) -> None:
    """Press a on the card showing ``text`` and wait until the kernel has answered."""
    page.wait_for_function(  # type: ignore[attr-defined]
        "text => document.querySelector('.npc-review-panel .npc-card-text')?.textContent"
        " === text && !document.querySelector('.npc-review-panel.npc-busy')",
        arg=text,
        timeout=WAIT_MS,
    )
    page.click(".npc-review-panel .npc-card-text")  # the keys go to the panel (not after a save)
    page.keyboard.press("a")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "text => document.querySelector('.npc-review-panel .npc-card-text')?.textContent"
        " !== text && !document.querySelector('.npc-review-panel.npc-busy')",
        arg=text,
        timeout=WAIT_MS,
    )


def save(page: object, name: str) -> None:
    """Save with the toolbar's button and wait for the server's answer."""

    def saving(response: object) -> bool:
        request = response.request  # type: ignore[attr-defined]
        return request.method == "PUT" and f"/api/contents/{name}" in request.url

    with page.expect_response(saving, timeout=WAIT_MS) as saved:  # type: ignore[attr-defined]
        page.click(".jp-NotebookPanel-toolbar [data-command='docmanager:save']")  # type: ignore[attr-defined]
    assert saved.value.ok


def shut_kernels_down(lab: Lab) -> None:
    with urllib.request.urlopen(f"{lab.url}/api/kernels?token={lab.token}") as response:
        kernels = json.load(response)
    for kernel in kernels:
        request = urllib.request.Request(
            f"{lab.url}/api/kernels/{kernel['id']}?token={lab.token}", method="DELETE"
        )
        urllib.request.urlopen(request).close()


def reopen(page: object, lab: Lab, name: str, screenshot: str) -> str:
    """Open a saved notebook with no kernel behind its widgets; the review cell's text as
    shown (hidden outputs left out) once the widget manager has given up on the panel."""
    page.goto(f"{lab.url}/lab/tree/{name}?reset&token={lab.token}")  # type: ignore[attr-defined]
    outputs = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")  # type: ignore[attr-defined]
    outputs.locator(".npc-review-static-summary").wait_for(timeout=60_000)
    # The panel's output settles as "Error displaying widget: model not found" (trusted,
    # hidden by the summary's style) or as nothing at all (untrusted).
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => ![...document.querySelectorAll('.jp-OutputArea-output')]"
        ".some(node => node.textContent === 'Loading widget...')",
        timeout=60_000,
    )
    page.screenshot(path=str(ARTIFACTS / screenshot))  # type: ignore[attr-defined]
    return str(outputs.inner_text())


def exported_html(path: Path) -> str:
    """The notebook as nbconvert's HTML (no widget state is saved), as text."""
    html, _ = HTMLExporter().from_notebook_node(nbformat.read(path, as_version=4))
    return html
