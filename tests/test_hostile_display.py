"""Text from a model, a memory or a candidate is shown as data, never obeyed as markup.

Replies (final and streamed), the graph page, the review panel, the result objects and
``npc-nb review`` each get hostile text: HTML that would run in JupyterLab (which trusts
the outputs of the running session) and escape sequences a terminal would obey. Every
output is parsed and checked for anything executable, and for the text still being
visible. Only the model is scripted (tests/fake_models.py); the rest is real.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from npc_nb._foundations.markup import markdown_html, terminal_text
from npc_nb.cli import main
from npc_nb.graph.view import MIME_TYPE
from tests import fake_models
from tests.helpers import cell, propose

# Elements that run code, load something or take input: none may come out of our HTML.
FORBIDDEN_ELEMENTS = frozenset(
    "script iframe frame frameset img style object embed svg math link meta base form "
    "input button textarea video audio source picture template".split()
)
URL_ATTRIBUTES = frozenset(
    "href src srcset srcdoc action formaction poster background data xlink:href".split()
)
SAFE_URL = re.compile(r"(https?|mailto):", re.IGNORECASE)
CODE = "a < b && c"

# (what the model says, text that must still be visible in the rendered reply)
HOSTILE = [
    ("<script>window.npcPwned = 1</script>", "<script>window.npcPwned = 1</script>"),
    ('<img src=x onerror="window.npcPwned = 2">', '<img src=x onerror="window.npcPwned = 2">'),
    ('<a href="javascript:alert(1)">click</a>', '<a href="javascript:alert(1)">click</a>'),
    ("[click](javascript:alert(1))", "[click](javascript:alert(1))"),
    ("[click](JavaScript:alert(1))", "[click](JavaScript:alert(1))"),
    ("[v](vbscript:msgbox(1))", "[v](vbscript:msgbox(1))"),
    ("[d](data:text/html;base64,PHNjcmlwdD4=)", "[d](data:text/html;base64,PHNjcmlwdD4=)"),
    ("<javascript:alert(1)>", "<javascript:alert(1)>"),
    ("![a chart](http://example.com/p.png)", "a chart"),
    ("<style>body { display: none }</style>", "<style>body { display: none }</style>"),
    ('<iframe src="https://example.com"></iframe>', '<iframe src="https://example.com">'),
    ("<svg onload=alert(1)>", "<svg onload=alert(1)>"),
    ('```x" onmouseover="alert(1)\nfenced\n```', "fenced"),
]
READABLE = f"""# Findings

- *first* point
- **second** point

Compare with `{CODE}` inline, or see [the docs](https://example.com/docs).

```python
{CODE}
```

| a | b |
|---|---|
| 1 | 2 |
"""


class Inspected(HTMLParser):
    """An HTML fragment taken apart: its tags, attributes, text, and each element's text."""

    VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.text = ""
        self.elements: list[tuple[str, tuple[str, ...], str]] = []  # tag, ancestors, text
        self._open: list[tuple[str, list[str]]] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]
        if tag not in self.VOID:
            self._open.append((tag, []))

    def handle_endtag(self, tag: str) -> None:
        if tag not in (name for name, _ in self._open):
            return  # a stray end tag closes nothing
        while self._open:
            name, parts = self._open.pop()
            ancestors = tuple(open_tag for open_tag, _ in self._open)
            self.elements.append((name, ancestors, "".join(parts)))
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text += data
        for _, parts in self._open:
            parts.append(data)

    def texts(self, tag: str) -> list[str]:
        """The text of each ``tag`` element, in the order they close."""
        return [text for name, _, text in self.elements if name == tag]


def assert_inert(markup: str, allow: frozenset[str] = frozenset()) -> Inspected:
    """``markup`` can neither run code nor load anything; returns it parsed.

    ``allow``: forbidden elements the producer adds itself (pandas' ``<style>``).
    """
    page = Inspected(markup)
    assert not (FORBIDDEN_ELEMENTS - allow) & set(page.tags), page.tags
    for name, value in page.attributes:
        assert not name.startswith("on"), (name, value)
        if name in URL_ATTRIBUTES:
            assert SAFE_URL.match(value.strip()), (name, value)
        if name == "style":
            assert "url(" not in value and "expression" not in value, value
    return page


@pytest.fixture
def scripted() -> Iterator[list[Any]]:
    fake_models.install()
    yield fake_models.SCRIPT
    fake_models.SCRIPT.clear()


def scripted_reply(nb: npc_nb.Project, script: list[Any], text: str) -> npc_nb.Reply:
    nb.npc("analyst", directive="You analyse field data.")  # defined: no ad-hoc notice
    script.append(text)
    reply = nb.chat("analyst", "hello", model="scripted/any")
    assert isinstance(reply, npc_nb.Reply)
    return reply


# -- replies ------------------------------------------------------------------------------


@pytest.mark.parametrize(("said", "visible"), HOSTILE)
def test_a_hostile_reply_renders_inert_and_readable(
    nb: npc_nb.Project, scripted: list[Any], said: str, visible: str
) -> None:
    bundle = scripted_reply(nb, scripted, f"Here you are: {said}")._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    page = assert_inert(bundle["text/html"])
    assert visible in page.text
    assert said in bundle["text/plain"]


def test_an_image_becomes_a_link_and_loads_nothing() -> None:
    page = assert_inert(markdown_html("![a chart](http://example.com/p.png)"))
    assert "img" not in page.tags
    assert ("href", "http://example.com/p.png") in page.attributes
    assert page.texts("a") == ["a chart"]


def test_markdown_still_renders_and_code_keeps_its_exact_text(
    nb: npc_nb.Project, scripted: list[Any]
) -> None:
    page = assert_inert(scripted_reply(nb, scripted, READABLE)._repr_mimebundle_()["text/html"])
    assert {"h1", "ul", "li", "em", "strong", "code", "pre", "table", "a"} <= set(page.tags)
    assert page.texts("em") == ["first"] and page.texts("strong") == ["second"]
    inline = [text for tag, outer, text in page.elements if tag == "code" and "pre" not in outer]
    assert inline == [CODE]
    assert page.texts("pre") == [CODE + "\n"]
    assert ("href", "https://example.com/docs") in page.attributes
    assert "&lt;" not in page.text and "&amp;" not in page.text


def test_the_footer_and_notices_stay_escaped(nb: npc_nb.Project, scripted: list[Any]) -> None:
    reply = scripted_reply(nb, scripted, "fine")
    reply.footnotes.append("<img src=x onerror=alert(1)>")
    reply.notices.append("<script>alert(2)</script>")
    page = assert_inert(reply._repr_mimebundle_()["text/html"])
    assert page.texts("small") == [reply.footer()]
    assert "<script>alert(2)</script>" in page.text


def test_a_failed_extraction_notice_stays_escaped(nb: npc_nb.Project, scripted: list[Any]) -> None:
    reply = scripted_reply(nb, scripted, "fine")
    reply.failed_extraction = "failed: <img src=x onerror=alert(1)>\x1b[2J"
    bundle = reply._repr_mimebundle_()
    page = assert_inert(bundle["text/html"])
    assert "<img src=x onerror=alert(1)>" in page.text  # shown as text
    assert "\x1b" not in bundle["text/plain"]  # the terminal sees the escape, not ESC


# -- the %%npc magic ---------------------------------------------------------------------

ALL_HOSTILE = "\n\n".join(said for said, _ in HOSTILE) + f"\n\n`{CODE}`"


class RecordingPublisher(DisplayPublisher):
    """IPython's display publisher, also keeping every bundle published."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bundles: list[dict[str, Any]] = []

    def publish(self, data: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        self.bundles.append(data)


def test_an_npc_cell_result_is_inert(shell: InteractiveShell, scripted: list[Any]) -> None:
    scripted.append(ALL_HOSTILE)
    reply = cell(shell, "%%npc analyst --model scripted/any\nhello")
    bundle, _ = shell.display_formatter.format(reply)
    assert "text/markdown" not in bundle
    page = assert_inert(bundle["text/html"])
    assert "<script>window.npcPwned = 1</script>" in page.text and CODE in page.text


def test_every_streamed_update_is_inert(
    shell: InteractiveShell, scripted: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The live display is drawn only under a kernel; a plain shell needs just the flag.
    monkeypatch.setattr(shell, "kernel", object(), raising=False)
    publisher = RecordingPublisher(shell=shell)
    monkeypatch.setattr(shell, "display_pub", publisher)
    scripted.append(ALL_HOSTILE)  # streamed in 3-character chunks: tags are cut apart
    cell(shell, "%%npc analyst --model scripted/any\nhello")
    updates = [bundle for bundle in publisher.bundles if "text/html" in bundle]
    assert len(updates) >= 2  # the placeholder, then at least one update
    for bundle in updates:
        assert "text/markdown" not in bundle
        assert_inert(bundle["text/html"])
    # The first chunk is drawn at once: a cut-off tag shows as text.
    assert "<sc" in Inspected(updates[1]["text/html"]).text


# -- the graph ----------------------------------------------------------------------------

HOSTILE_MEMORY = (
    "We store <img src=x onerror=alert(1)> href in DuckDB </script><script>alert(2)</script> "
    "\"double\" and 'single' quotes"
)


def test_graph_labels_and_tooltips_are_text(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, HOSTILE_MEMORY))
    view = nb.graph.show()
    page = view.page
    assert_inert_page(page)
    # pyvis shows tooltips as HTML (popup.innerHTML) once a title contains "href".
    assert "popup.innerHTML" not in page and "div.popup" not in page
    data = data_script(page)
    nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", data).group(1))
    (memory,) = [node for node in nodes if node["id"].startswith("memory:")]
    assert memory["title"].startswith(HOSTILE_MEMORY)
    assert memory["label"].startswith("We store <img src=x")  # its first words, as text
    # Inline, the output is data for the graph renderer (which draws every string as
    # text) and a picture: no HTML at all.
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {MIME_TYPE, "image/png", "text/plain"}
    drawn = json.loads(json.dumps(bundle[MIME_TYPE]))  # as saved in the notebook
    (inline,) = [node for node in drawn["nodes"] if node["id"].startswith("memory:")]
    assert inline["title"].startswith(HOSTILE_MEMORY)
    assert inline["label"].startswith("We store <img src=x")  # its first words, as text


def assert_inert_page(page: str) -> None:
    """The graph page's markup (outside its scripts) has no handler and loads nothing."""
    parsed = Inspected(page)
    assert "img" not in parsed.tags and "iframe" not in parsed.tags
    for name, value in parsed.attributes:
        assert not name.startswith("on"), (name, value)
        assert name not in ("src", "href"), (name, value)
    assert "onerror=" not in re.sub(r"<script\b.*?</script>", "", page, flags=re.S)


def data_script(page: str) -> str:
    """The whole script holding the node data: it must end where the page's code ends."""
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, flags=re.S)
    (data,) = [script for script in scripts if "new vis.DataSet(" in script]
    assert "network = new vis.Network(" in data, "the data ended the script early"
    assert "</script" not in data.lower() and "<script" not in data.lower()
    return data


# -- the terminal -------------------------------------------------------------------------

CANDIDATE = "Clear \x1b[2J bell \x07 flip \u202e kcab \r cr\nsecond line"
TERMINAL_VISIBLE = "Clear \\x1b[2J bell \\x07 flip \\u202e kcab \\r cr\\nsecond line"


def raw_controls(text: str) -> list[str]:
    """Characters a terminal would act on, other than the line breaks the CLI writes."""
    categories = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    return [c for c in text if c != "\n" and unicodedata.category(c) in categories]


def test_review_in_a_terminal_shows_escapes_never_sends_them(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    # New candidates refuse control characters, but a store written before that rule (or
    # by --write SQL) may hold them: put them in through SQL, as such a store would.
    # (placeholders worded alike, so the neighbour index finds the one for the other)
    approved = propose(nb, "Clear bell flip kcab approved")
    nb.approve(approved)
    pending = propose(nb, "Clear bell flip kcab pending", evidence="flip \u202e kcab")
    for memory, text in (
        (approved, "Clear \x1b[2J bell \x07 flip \u202e kcab approved \x9b31m"),
        (pending, CANDIDATE),
    ):
        nb.sql(
            "UPDATE memories SET initial_text = ?, final_text = ? WHERE id = ?",
            [text, text, memory],
            allow_write=True,
        )
    out = io.StringIO()
    keys = "u\ne\nedited \u2067 red\n"  # nothing to undo, then an edit
    assert (
        main(["review", "--project", str(project_dir), "--by", "ada"], io.StringIO(keys), out) == 0
    )
    output = out.getvalue()
    assert raw_controls(output) == []
    lines = output.split("\n")
    assert f"  {TERMINAL_VISIBLE}" in lines  # the candidate's newline stays on its line
    assert "  evidence: \u201cflip \\u202e kcab\u201d" in lines
    assert any("approved \\x9b31m" in line and line.startswith("  ~ approved") for line in lines)
    assert "edited \\u2067 red" in output  # the echo of the typed edit
    assert "Review finished: 1 edited" in output
    edited = nb.memories().set_index("status").loc["human-edited", "final_text"]
    assert edited == "edited \u2067 red"  # stored as typed; only display escapes


def test_terminal_text_escapes_every_control_and_format_character() -> None:
    hostile = "".join(chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)])
    hostile += "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\ufeff\u2028"
    shown = terminal_text(hostile)
    assert raw_controls(shown) == [] and "\n" not in shown
    assert "\\x1b" in shown and "\\u202e" in shown and "\\u2069" in shown and "\\n" in shown
    assert terminal_text("plain, accented é, 中文, emoji 🦉") == "plain, accented é, 中文, emoji 🦉"


# -- the review panel, result objects, frames ---------------------------------------------

PANEL_HOSTILE = '<img src=x onerror="window.npcPwned=3"><script>alert(4)</script>'


def test_panel_card_and_status_lines_escape_candidate_text(nb: npc_nb.Project) -> None:
    nb.approve(propose(nb, f"approved {PANEL_HOSTILE} earlier"))
    propose(nb, f"candidate {PANEL_HOSTILE} now", evidence=PANEL_HOSTILE)
    panel = nb.review(by="ada")
    card = assert_inert(panel.keys.card_html)
    assert f"candidate {PANEL_HOSTILE} now" in card.texts("div")
    assert f"approved {PANEL_HOSTILE} earlier" in card.text  # the nearest approved memory
    panel.keys._handle_custom_msg({"type": "key", "key": "a", "card": panel.keys.card_id}, [])
    status = assert_inert(panel.status.value)
    assert status.text == f"approve: candidate {PANEL_HOSTILE} now"
    summary = assert_inert(panel.keys.card_html)  # the review is finished: the summary
    assert f"candidate {PANEL_HOSTILE} now" in summary.text


def test_result_objects_escape_memory_text(nb: npc_nb.Project) -> None:
    propose(nb, PANEL_HOSTILE)
    preview = nb.preview_approve_all()
    page = assert_inert(preview._repr_mimebundle_()["text/html"])
    assert PANEL_HOSTILE in page.text
    outcome = nb.add_candidate(PANEL_HOSTILE, category="fact", npc="analyst")
    assert_inert(outcome._repr_mimebundle_()["text/html"])
    result = nb.approve_all(preview)
    assert_inert(result._repr_mimebundle_()["text/html"])
    assert_inert(nb.status()._repr_mimebundle_()["text/html"])


def test_memories_frame_html_escapes_cell_text(nb: npc_nb.Project) -> None:
    propose(nb, PANEL_HOSTILE)
    frame = nb.memories()
    with pd.option_context("display.max_colwidth", None):  # the whole text, not "..."
        page = assert_inert(frame[["final_text"]]._repr_html_(), allow=frozenset({"style"}))
    assert PANEL_HOSTILE in page.texts("td")
    assert all("npcPwned" not in style for style in page.texts("style"))  # pandas' own CSS
