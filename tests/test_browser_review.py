"""The review panel in a real JupyterLab, in headless Chromium: single keys decide, the
edit box takes Ctrl+Enter, undo brings a card back, nothing leaks into the notebook's
own shortcuts, a double click is one decision, and once the kernel is gone the saved
notebook shows the static summary. Key-to-next-card latency is measured and printed."""

from __future__ import annotations

import json
import statistics
import urllib.request
from pathlib import Path

import pytest

import npc_nb
from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

CANDIDATES = 40
LATENCY_PRESSES = 24
WAIT_MS = 30_000  # the longest wait for something the page or kernel should do at once

SETUP = """
import os
os.environ["NPC_NB_HOME"] = {home!r}
os.environ["NPC_NB_REVIEWER"] = "browser"
import npc_nb
nb = npc_nb.open({project!r})
for n in range({count}):
    nb.add_candidate(f"browser candidate number {{n:02d}}", category="fact", npc="analyst")
%load_ext npc_nb
"""

# Times (performance.now) of each key press reaching the page and of each change of the
# card text, recorded by the page itself so the measure includes the browser's work.
WATCH = """() => {
    window.npcKeys = []; window.npcCards = [];
    window.addEventListener("keydown", () => window.npcKeys.push(performance.now()), true);
    const panel = document.querySelector(".npc-review-panel");
    new MutationObserver(() => {
        const text = panel.querySelector(".npc-card-text")?.textContent;
        if (text !== window.npcLastCard) {
            window.npcLastCard = text;
            window.npcCards.push(performance.now());
        }
    }).observe(panel, {subtree: true, childList: true, characterData: true});
    window.npcLastCard = panel.querySelector(".npc-card-text")?.textContent;
}"""

DEBUG = """() => ({active: document.activeElement.outerHTML.slice(0, 200),
    busy: !!document.querySelector('.npc-review-panel.npc-busy'),
    status: document.querySelector('.npc-review-panel')?.innerText.slice(-300)})"""

CELLS = """() => [...document.querySelectorAll(".jp-Notebook .jp-Cell")].map(cell =>
    (cell.classList.contains("jp-CodeCell") ? "code" : "other") + ":" +
    (cell.querySelector(".cm-content")?.textContent || ""))"""


def card_text(page: object) -> str:
    return page.inner_text(".npc-review-panel .npc-card-text")  # type: ignore[attr-defined]


def press_and_wait(page: object, key: str) -> str:
    """Press ``key`` in the panel and wait until a different card is shown."""
    before = card_text(page)
    page.keyboard.press(key)  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "before => document.querySelector('.npc-review-panel .npc-card-text')"
        "?.textContent !== before",
        arg=before,
        timeout=WAIT_MS,
    )
    return card_text(page)


def wait_for_card(page: object, text: str) -> None:
    """Wait until the card showing ``text`` is on screen and the panel is not busy."""
    page.wait_for_function(  # type: ignore[attr-defined]
        "text => document.querySelector('.npc-review-panel .npc-card-text')?.textContent === text",
        arg=text,
        timeout=WAIT_MS,
    )
    wait_idle(page)


def wait_idle(page: object) -> None:
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !document.querySelector('.npc-review-panel.npc-busy')", timeout=WAIT_MS
    )


def settle(page: object) -> None:
    """Wait until the kernel has answered every message the panel has sent: the help key
    is one more message (shown, then hidden again), and the kernel answers in order."""
    for state in ("visible", "hidden"):
        wait_idle(page)
        page.keyboard.press("?")  # type: ignore[attr-defined]
        page.wait_for_selector(  # type: ignore[attr-defined]
            ".npc-review-panel .npc-help", state=state, timeout=WAIT_MS
        )
    wait_idle(page)


def test_review_with_single_keys_in_jupyterlab(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project), count=CANDIDATES)
    ARTIFACTS.mkdir(exist_ok=True)
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("review.ipynb", [setup, "%npc_review", "1 + 1"])
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 3)
            try:
                page.wait_for_selector(".npc-review-panel .npc-card-text", timeout=60_000)
                latencies = _review(page)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "review-panel-failed.png"))
                print(page.evaluate(DEBUG))
                raise
            _kernel_gone_shows_static_summary(page, lab)
        blocked = list(lab.blocked)

    nb = npc_nb.open(project)
    try:
        rows = nb.memories().set_index("final_text")
        status = rows["status"].to_dict()
        assert status["browser candidate number 00"] == "human-approved"
        assert status["browser candidate number 01"] == "human-rejected"
        assert status["edited in the browser"] == "human-edited"
        assert rows.loc["edited in the browser", "initial_text"] == "browser candidate number 02"
        assert status["browser candidate number 03"] == "pending_approval"  # deferred, undone
        assert status["browser candidate number 04"] == "pending_approval"  # skipped
        assert status["browser candidate number 06"] == "human-approved"  # the double click
        events = nb.decisions()
        decided = events[events["action"] != "propose"]
        assert set(decided["reviewer"]) == {"browser"}
        cards = decided[decided["action"] != "undo"]
        assert cards["time_spent_ms"].notna().all() and cards["review_session"].nunique() == 1
        actions = decided.sort_values("seq")["action"].tolist()
        assert actions[:9] == [
            "approve",
            "reject",
            "edit",
            "defer",
            "undo",
            "skip",
            "skip",
            "skip",
            "approve",
        ]
        # The double click was one decision: then only the measured presses followed.
        assert len(actions) == 9 + LATENCY_PRESSES
    finally:
        nb.close()
    assert not blocked, blocked
    p50 = statistics.median(latencies)
    print(
        f"\nkey -> next card in JupyterLab/Chromium: p50 {p50:.0f} ms, "
        f"p90 {statistics.quantiles(latencies, n=10)[-1]:.0f} ms, "
        f"max {max(latencies):.0f} ms over {len(latencies)} presses"
    )
    (ARTIFACTS / "review-latency.json").write_text(
        json.dumps({"p50_ms": p50, "samples_ms": latencies}, indent=1)
    )


def test_the_end_of_a_review_and_an_empty_one_in_jupyterlab(tmp_path: Path) -> None:
    """At the end only undo (and help) is left; a review with nothing to review says so
    and shows no decision button. Screenshot: review-end.png (docs/images holds a copy)."""
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(home=str(tmp_path / "home"), project=str(project), count=2)
    ARTIFACTS.mkdir(exist_ok=True)
    cells = [setup, "%npc_review", "%npc_review --category preference"]
    with jupyterlab(tmp_path / "lab", {}) as lab:
        url = lab.write_notebook("end.ipynb", cells)
        with browser_page(lab) as page:
            page.goto(url)
            run_all_cells(page, 3)
            try:
                _end_and_empty(page)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "review-end-failed.png"))
                print(page.evaluate(DEBUG))
                raise


def _end_and_empty(page: object) -> None:
    review, empty = (page.locator(".npc-review-panel").nth(n) for n in (0, 1))  # type: ignore[attr-defined]
    empty.get_by_text("Nothing to review: no candidate matching category=preference").wait_for(
        timeout=WAIT_MS
    )
    assert empty.locator("button:visible").all_inner_texts() == ["Help (?)"]
    wait_for_card(page, "browser candidate number 00")
    page.click(".npc-review-panel .npc-card-text")  # type: ignore[attr-defined]
    assert press_and_wait(page, "a") == "browser candidate number 01"
    page.keyboard.press("e")  # type: ignore[attr-defined]
    page.wait_for_selector(".npc-edit textarea:focus", timeout=WAIT_MS)  # type: ignore[attr-defined]
    page.keyboard.press("Control+a")  # type: ignore[attr-defined]
    page.keyboard.type("edited at the end")  # type: ignore[attr-defined]
    page.keyboard.press("Control+Enter")  # type: ignore[attr-defined]
    review.get_by_text("Review finished: 1 approved, 1 edited").wait_for(timeout=WAIT_MS)
    wait_idle(page)
    assert review.locator("button:visible").all_inner_texts() == ["Undo (u)", "Help (?)"]
    assert review.locator("li:has(del)").inner_text() == (
        "edited: edited at the end (was browser candidate number 01)"
    )
    page.screenshot(path=str(ARTIFACTS / "review-end.png"))  # type: ignore[attr-defined]
    page.keyboard.press("u")  # type: ignore[attr-defined]
    wait_for_card(page, "browser candidate number 01")
    assert "Approve (a)" in review.locator("button:visible").all_inner_texts()
    assert "undo: browser candidate number 01 (was edited to" in review.inner_text()


def _review(page: object) -> list[float]:
    cells_before = page.evaluate(CELLS)  # type: ignore[attr-defined]
    assert card_text(page) == "browser candidate number 00"
    page.click(".npc-review-panel .npc-card-text")  # type: ignore[attr-defined]
    focused = page.evaluate(  # type: ignore[attr-defined]
        "() => !!document.activeElement.closest('.npc-review-panel')"
    )
    assert focused, "clicking the panel should give it the keyboard"

    assert press_and_wait(page, "a") == "browser candidate number 01"
    assert press_and_wait(page, "r") == "browser candidate number 02"
    page.keyboard.press("e")  # type: ignore[attr-defined]
    box = page.wait_for_selector(".npc-edit textarea:focus", timeout=WAIT_MS)  # type: ignore[attr-defined]
    assert box.input_value() == "browser candidate number 02"
    page.keyboard.press("Control+a")  # type: ignore[attr-defined]
    page.keyboard.type("edited in the browser")  # type: ignore[attr-defined]  # a, r, e, s, d, u typed
    assert press_and_wait(page, "Control+Enter") == "browser candidate number 03"
    assert page.evaluate(  # type: ignore[attr-defined]
        "() => !!document.activeElement.closest('.npc-review-panel')"
    ), "after an edit the keyboard returns to the panel"
    assert press_and_wait(page, "d") == "browser candidate number 04"
    assert press_and_wait(page, "u") == "browser candidate number 03"
    # Keys the panel does not use are swallowed too: m / y would change a cell's type.
    for stray in ("m", "y", "b", "z"):
        page.keyboard.press(stray)  # type: ignore[attr-defined]
    wait_idle(page)
    assert press_and_wait(page, "s") == "browser candidate number 04"
    page.screenshot(path=str(ARTIFACTS / "review-panel.png"))  # type: ignore[attr-defined]
    # A click on a button keeps the keyboard in the panel: the next key still works.
    page.click(".npc-review-panel button:has-text('Skip (s)')")  # type: ignore[attr-defined]
    wait_for_card(page, "browser candidate number 05")
    page.keyboard.press("Enter")  # not a click on the button that was just clicked
    settle(page)  # had it sent a decision, the kernel would have answered it by now
    assert card_text(page) == "browser candidate number 05"
    assert press_and_wait(page, "s") == "browser candidate number 06"
    assert not page.is_visible(".npc-review-static-summary")  # type: ignore[attr-defined]

    page.dblclick(".npc-review-panel button:has-text('Approve (a)')")  # type: ignore[attr-defined]
    wait_for_card(page, "browser candidate number 07")
    settle(page)  # a second decision would have been answered by now
    assert card_text(page) == "browser candidate number 07"
    assert page.evaluate(CELLS) == cells_before, "a key reached the notebook"  # type: ignore[attr-defined]
    latencies = _measure(page)
    page.keyboard.press("Escape")  # back to the notebook
    assert not page.evaluate(  # type: ignore[attr-defined]
        "() => !!document.activeElement.closest('.npc-review-panel')"
    )
    return latencies


def _measure(page: object) -> list[float]:
    page.click(".npc-review-panel .npc-card-text")  # type: ignore[attr-defined]
    page.evaluate(WATCH)  # type: ignore[attr-defined]
    for n in range(LATENCY_PRESSES):
        press_and_wait(page, "s" if n % 2 else "a")
    keys = page.evaluate("() => window.npcKeys")  # type: ignore[attr-defined]
    cards = page.evaluate("() => window.npcCards")  # type: ignore[attr-defined]
    assert len(keys) == LATENCY_PRESSES and len(cards) >= LATENCY_PRESSES
    return [min(c for c in cards if c >= k) - k for k in keys]


def _kernel_gone_shows_static_summary(page: object, lab: object) -> None:
    """Save, shut the kernel down, reopen: the saved output shows the static summary."""
    page.click(".jp-Cell:last-child .jp-InputPrompt")  # type: ignore[attr-defined]

    def saving(response: object) -> bool:
        request = response.request  # type: ignore[attr-defined]
        return request.method == "PUT" and "/api/contents/review.ipynb" in request.url

    # Wait for the server's answer to the save (Playwright's own wait: the page's requests
    # pass through this process's route handler, which runs only inside Playwright calls).
    with page.expect_response(saving, timeout=WAIT_MS) as saved:  # type: ignore[attr-defined]
        page.keyboard.press("Control+s")  # type: ignore[attr-defined]
    assert saved.value.ok
    saved_file = (lab.root / "review.ipynb").read_text()  # type: ignore[attr-defined]
    assert "npc-review-static-summary" in saved_file
    base = f"{lab.url}/api/kernels?token={lab.token}"  # type: ignore[attr-defined]
    with urllib.request.urlopen(base) as response:
        kernels = json.load(response)
    for kernel in kernels:
        request = urllib.request.Request(
            f"{lab.url}/api/kernels/{kernel['id']}?token={lab.token}",  # type: ignore[attr-defined]
            method="DELETE",
        )
        urllib.request.urlopen(request).close()
    page.reload()  # type: ignore[attr-defined]
    summary = page.wait_for_selector(".npc-review-static-summary", timeout=60_000)  # type: ignore[attr-defined]
    assert summary.is_visible()
    # Only a live panel hides the summary (with a style it adds, which starts with the
    # summary's class); none is left to do so. (The summary's own style hides the dead
    # widget's output, not itself.)
    hiding = page.evaluate(  # type: ignore[attr-defined]
        "() => [...document.querySelectorAll('style')]"
        ".filter(s => s.textContent.startsWith('.npc-static-')).length"
    )
    assert hiding == 0
    text = summary.inner_text()
    assert "approved" in text and "Store:" in text and "browser candidate number" in text
    page.screenshot(path=str(ARTIFACTS / "review-panel-after-kernel.png"))  # type: ignore[attr-defined]
