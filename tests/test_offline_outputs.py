"""A saved notebook fetches nothing when it is opened: no output of a shipped notebook,
and no page ``nb.graph.pyvis()`` (or ``%npc_graph --pyvis``) makes, names a remote
resource in a ``<script src>``, a ``<link href>`` or a CSS ``@import``, however pyvis is
set (its menus on, its ``cdn_resources`` changed); what the page needs is inline.

Here, the tests that open a project or a store; the pure ones are in
tests/unit/test_offline_outputs.py (the fast tier).
"""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from tests.helpers import cell, magics_project
from tests.test_pyvis_network import approve_some, page_of
from tests.unit.test_offline_outputs import _settings, remote_resources


@pytest.mark.parametrize("setting", ["as made", "menus", "remote", "local"])
def test_the_pyvis_page_names_no_remote_resource_and_carries_its_libraries(
    nb: npc_nb.Project, setting: str
) -> None:
    approve_some(nb)
    net = nb.graph.pyvis()
    _settings(net, setting)
    for page in (page_of(net), net.offline_html()):
        assert remote_resources(page) == []
        assert "@version 9.1.2" in page  # vis-network itself, inline
        assert "<script src=" not in page and "<link href=" not in page  # nothing local either
    if setting == "menus":
        assert "Tom Select v2" in page  # the menus' library, inline too
    assert remote_resources(nb.graph.show().page) == []


def test_npc_graph_pyvis_output_names_no_remote_resource(shell: InteractiveShell) -> None:
    approve_some(magics_project(shell))
    shown = cell(shell, "%npc_graph --pyvis")
    bundle, _ = shell.display_formatter.format(shown)
    assert bundle["text/html"] and all(remote_resources(text) == [] for text in bundle.values())
