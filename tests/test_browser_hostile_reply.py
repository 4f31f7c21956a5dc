"""A hostile model reply in a real JupyterLab, in headless Chromium: nothing in it runs.

JupyterLab trusts the outputs of the running session, so HTML in a reply would run in
the page, where it could reach the kernel (and approve memories). The reply below
carries a script, an image with an error handler and a remote image; the test checks
that none of them ran or loaded, that the page sent the kernel nothing but the
notebook's own cells, and that the reply still reads well (code shown exactly).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jupyterlab import ARTIFACTS, browser_page, jupyterlab, run_all_cells

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CODE = "a < b && c"
HOSTILE = f"""## Findings

<script>window.npcPwned = 1</script>

<img src=x onerror="window.npcPwned = 2">

- the comparison is `{CODE}`
- *emphasis* and [a link](https://example.com/docs)
- ![remote picture](http://example.com/p.png)

```python
{CODE}
```
"""

SETUP = """
import os, sys
os.environ["NPC_NB_HOME"] = {home!r}
sys.path.insert(0, {repo!r})  # the kernel runs in the lab root: make tests importable
import npc_nb
from tests import fake_models
nb = npc_nb.open({project!r})
nb.npc("analyst", directive="You help analyse field data.")
fake_models.install()
fake_models.SCRIPT.append({hostile!r})
%load_ext npc_nb
"""
ASK = "%%npc analyst --model scripted/any\nShow me what you found."

# Records the type (and, for execute_request, the code) of every message the page sends
# on a WebSocket. JupyterLab 4 sends kernel messages as binary frames (the v1 protocol)
# in which the header's JSON comes first, so the first "msg_type" is the message's own.
RECORD_SENT = r"""
window.npcSent = [];
const originalSend = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
    let text = "";
    try {
        text = typeof data === "string" ? data : new TextDecoder().decode(data);
    } catch (error) {
        text = "";
    }
    const type = /"msg_type"\s*:\s*"([^"]+)"/.exec(text);
    const code = /"code"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(text);
    window.npcSent.push({
        type: type ? type[1] : "unknown", code: code ? JSON.parse(code[1]) : null,
    });
    return originalSend.call(this, data);
};
"""

# Requests JupyterLab sends on its own that neither run code nor talk to a comm.
QUIET_REQUESTS = frozenset(
    "kernel_info_request debug_request comm_info_request history_request complete_request "
    "inspect_request is_complete_request create_subshell_request delete_subshell_request "
    "list_subshell_request".split()
)

OUTPUT_FACTS = """() => {
    const area = [...document.querySelectorAll(".jp-OutputArea-output")]
        .find(output => output.querySelector(".npc-nb-reply"));
    const reply = area.querySelector(".npc-nb-reply");
    return {
        pwned: typeof window.npcPwned,
        images: document.querySelectorAll(".jp-OutputArea img").length,
        handlers: document.querySelectorAll("[onerror], [onload], [onclick]").length,
        scripts: area.querySelectorAll("script, iframe, style").length,
        inline: [...reply.querySelectorAll("li code")].map(code => code.textContent),
        fenced: [...reply.querySelectorAll("pre code")].map(code => code.textContent),
        links: [...reply.querySelectorAll("a")].map(a => a.getAttribute("href")),
        text: reply.innerText,
    };
}"""


def test_a_hostile_reply_runs_nothing_in_jupyterlab(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    setup = SETUP.format(
        home=str(tmp_path / "home"), repo=str(REPO), project=str(project), hostile=HOSTILE
    )
    facts, sent, requested, blocked = run_notebook(tmp_path / "lab", [setup, ASK])

    assert facts["pwned"] == "undefined"
    assert facts["images"] == 0 and facts["handlers"] == 0 and facts["scripts"] == 0
    assert facts["inline"] == [CODE] and facts["fenced"] == [CODE + "\n"]
    assert facts["links"] == ["https://example.com/docs", "http://example.com/p.png"]
    assert "<script>window.npcPwned = 1</script>" in facts["text"]
    assert '<img src=x onerror="window.npcPwned = 2">' in facts["text"]
    executed = [message["code"] for message in sent if message["type"] == "execute_request"]
    assert ASK in executed and set(executed) == {setup, ASK}, executed
    # JupyterLab opens its own comms when it connects to the kernel; once the cells
    # run, the page may only send requests that cannot run code or reach a comm.
    first_run = [message["type"] for message in sent].index("execute_request")
    later = {message["type"] for message in sent[first_run:]}
    assert later <= {"execute_request", *QUIET_REQUESTS}, sent[first_run:]
    assert blocked == [], blocked
    assert not [u for u in requested if u.endswith("/x") or "example.com" in u], requested


def run_notebook(base: Path, cells: list[str]) -> tuple[dict, list, list[str], list]:
    """Run ``cells`` in JupyterLab; what the reply's output shows, the messages the page
    sent, every URL it requested and the requests blocked (not for the lab)."""
    ARTIFACTS.mkdir(exist_ok=True)
    requested: list[str] = []
    with jupyterlab(base, {}) as lab:
        url = lab.write_notebook("hostile.ipynb", cells)
        with browser_page(lab) as page:
            page.on("request", lambda request: requested.append(request.url))
            page.add_init_script(RECORD_SENT)
            page.goto(url)
            try:
                run_all_cells(page, len(cells))
                page.wait_for_selector(".jp-OutputArea-output .npc-nb-reply pre", timeout=60_000)
                # Two animation frames: the page has rendered all it received. Nothing can
                # run later: the checks below find no script, image or handler in it.
                page.evaluate(
                    "() => new Promise(done => requestAnimationFrame("
                    "() => requestAnimationFrame(done)))"
                )
                facts = page.evaluate(OUTPUT_FACTS)
                sent = page.evaluate("() => window.npcSent")
            except Exception:
                print("sent:", page.evaluate("() => window.npcSent.map(m => m.type)"))
                raise
            finally:
                page.screenshot(path=str(ARTIFACTS / "hostile-reply.png"))
        return facts, sent, requested, list(lab.blocked)
