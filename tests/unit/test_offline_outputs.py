"""A saved notebook fetches nothing when it is opened: no output of a shipped notebook,
and no page ``nb.graph.pyvis()`` (or ``%npc_graph --pyvis``) makes, names a remote
resource in a ``<script src>``, a ``<link href>`` or a CSS ``@import``, however pyvis is
set (its menus on, its ``cdn_resources`` changed); what the page needs is inline."""

from __future__ import annotations

import html
import re

import nbformat
import pytest
from pyvis.network import Network

from tests.helpers import REPO
from tests.test_shipped_notebooks import SHIPPED

_REMOTE = re.compile(
    r"""<(?:script|link)\b[^>]*?\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//"""
    r"""|@import\s+(?:url\(\s*)?["']?\s*(?:https?:)?//""",
    re.IGNORECASE,
)


def remote_resources(text: str) -> list[str]:
    """Every remote resource a page (or a page escaped into an attribute, such as an
    iframe's ``srcdoc``, at any depth) would fetch."""
    found = []
    while True:
        found += [text[m.start() : m.start() + 120] for m in _REMOTE.finditer(text)]
        unescaped = html.unescape(text)
        if unescaped == text:
            return found
        text = unescaped


def _outputs(path: str) -> list[tuple[int, str]]:
    """(cell number, text) of every saved output of a notebook, in every MIME type."""
    notebook = nbformat.read(REPO / path, as_version=4)
    found = []
    for number, saved in enumerate(notebook.cells):
        for output in saved.get("outputs", []):
            texts = [output.get("text"), *output.get("data", {}).values()]
            found += [(number, "".join(t) if isinstance(t, list) else t) for t in texts]
    return [(number, text) for number, text in found if isinstance(text, str)]


def test_the_scan_finds_the_cdn_links_of_pyvis_own_page() -> None:
    page = Network(notebook=True, cdn_resources="in_line").generate_html(notebook=True)
    assert any("bootstrap" in hit for hit in remote_resources(page))
    escaped = f'<iframe srcdoc="{html.escape(page, quote=True)}"></iframe>'
    assert len(remote_resources(escaped)) >= 2
    assert remote_resources("<style>@import url('https://fonts.example/x.css');</style>")


@pytest.mark.parametrize("path", SHIPPED)
def test_no_saved_output_of_a_shipped_notebook_names_a_remote_resource(path: str) -> None:
    outputs = _outputs(path)
    assert outputs, f"{path} has no saved outputs to check"
    fetched = [(number, hit) for number, text in outputs for hit in remote_resources(text)]
    assert fetched == []


def _settings(net: Network, setting: str) -> None:
    if setting == "menus":
        net.select_menu = True
        net.filter_menu = True
    elif setting == "remote":
        net.cdn_resources = "remote"
    elif setting == "local":
        net.cdn_resources = "local"
