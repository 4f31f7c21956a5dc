"""The notebooks npc_nb ships read as a researcher's session: their saved outputs show
what a cell is for, not a leftover repr of a call's return value (a decision's
``reject by root: <id>: ...`` line, a ``Npc(...)`` dataclass repr), and decisions in
them carry a reviewer's name, not a container's ``root``. A persona shown by itself in
a notebook reads as one line about it."""

from __future__ import annotations

import re

import nbformat
import pytest

import npc_nb
from tests.helpers import REPO

#: The notebooks ``make test`` runs (the Makefile's NOTEBOOKS line).
SHIPPED = re.search(r"^NOTEBOOKS := (.+)$", (REPO / "Makefile").read_text(), re.M)[1].split()
_DECISION_LINE = re.compile(r"^(approve|reject|edit|skip|defer|supersede|undo) by \S+: ", re.M)


def saved_texts(path: str) -> list[tuple[int, str]]:
    """(cell number, text) of every saved output of a notebook: its plain text and HTML."""
    notebook = nbformat.read(REPO / path, as_version=4)
    found = []
    for number, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for text in (output.get("text"), data.get("text/plain"), data.get("text/html")):
                if text:
                    found.append((number, "".join(text)))
    return found


@pytest.mark.parametrize("path", SHIPPED)
def test_saved_outputs_hold_no_leftover_return_values(path: str) -> None:
    leftovers = [
        (number, text[:120])
        for number, text in saved_texts(path)
        if _DECISION_LINE.search(text) or "Npc(" in text
    ]
    assert leftovers == [], leftovers


@pytest.mark.parametrize("path", SHIPPED)
def test_decisions_in_the_notebooks_carry_a_reviewers_name(path: str) -> None:
    shared = [
        (number, text[:120])
        for number, text in saved_texts(path)
        if re.search(r"\b(by|actor\W+) ?root\b|approved by root", text)
    ]
    assert shared == [], shared


def test_a_persona_shows_itself_as_one_readable_line(nb: npc_nb.Project) -> None:
    persona = nb.npc("analyst", directive="You <b>check</b> the ringing data.", model="gpt-4o")
    bundle = persona._repr_mimebundle_()
    assert bundle["text/plain"] == (
        "persona analyst (defined in Python, model gpt-4o): You <b>check</b> the ringing data."
    )
    assert "<b>check</b>" not in bundle["text/html"] and "&lt;b&gt;check" in bundle["text/html"]
    assert "Npc(" not in bundle["text/plain"]
    adhoc = nb.get_npc("stranger")._repr_mimebundle_()["text/plain"]
    assert adhoc.startswith("persona stranger (ad hoc): You are a careful research assistant")
