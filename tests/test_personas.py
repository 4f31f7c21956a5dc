"""Personas: defined in Python or in ``npc_team/*.npc`` files, ad hoc when undefined, and
clear errors naming the file and key for a malformed definition."""

from __future__ import annotations

from pathlib import Path

import pytest

import npc_nb


def write_npc(project_dir: Path, name: str, text: str) -> Path:
    folder = project_dir / "npc_team"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.npc"
    path.write_text(text)
    return path


def test_personas_load_from_npc_team_files(nb: npc_nb.Project, project_dir: Path) -> None:
    write_npc(project_dir, "critic", "name: critic\nprimary_directive: You find flaws.\n"
              "model: gpt-4o-mini\nprovider: openai\n")  # fmt: skip
    persona = nb.get_npc("critic")
    assert (persona.directive, persona.model_name, persona.team) == (
        "You find flaws.", "openai/gpt-4o-mini", "project",
    )  # fmt: skip
    assert list(nb.npcs()["name"]) == ["critic"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("name: critic\n", "'primary_directive' is missing"),
        ("name: critic\nprimary_directive: x\ncolour: red\n", "unknown key 'colour'"),
        ("name: [critic\n", "not valid YAML"),
        ("- just a list\n", "must be a mapping"),
        ("name: critic\nprimary_directive: x\nmodel: 42\n", "'model' must be a string"),
        ("name: 'two words'\nprimary_directive: x\n", "key 'name'"),
    ],
)
def test_a_malformed_npc_file_names_file_and_key(
    nb: npc_nb.Project, project_dir: Path, content: str, message: str
) -> None:
    path = write_npc(project_dir, "critic", content)
    with pytest.raises(npc_nb.ConfigError, match=message) as caught:
        nb.chat("critic", "hello")
    assert str(path) in str(caught.value)


def test_an_undefined_persona_is_ad_hoc_and_said_once(nb: npc_nb.Project) -> None:
    first = nb.chat("stranger", "hello")
    second = nb.chat("stranger", "hello again")
    assert any("not defined" in n for n in first.notices)
    assert not any("not defined" in n for n in second.notices)
    assert "research assistant" in first.messages[0]["content"]


def test_an_ad_hoc_reply_says_so_first_and_names_the_persona_meant(nb: npc_nb.Project) -> None:
    nb.npc("critic", directive="You find flaws.")
    write_npc(nb.root, "ornithologist", "name: ornithologist\nprimary_directive: Birds.\n")
    reply = nb.chat("critc", "hello")
    assert reply.notices == [
        "critc is not defined (no npc_team/critc.npc, no nb.npc('critc', ...)): using a "
        "generic research-assistant persona. Did you mean critic?"
    ]
    assert reply._repr_mimebundle_()["text/plain"].startswith(f"Note: {reply.notices[0]}\n\n")
    assert reply.adhoc and not nb.chat("critic", "hello").adhoc
    stream = nb.chat("ornitologist", "hello", stream=True)
    assert stream.notices[0].endswith("Did you mean ornithologist?")  # before any chunk
    assert "".join(stream) and stream.reply.notices == stream.notices
    unlike = nb.chat("zebra", "hello").notices[0]
    assert "Did you mean" not in unlike


def test_persona_names_and_unreadable_files(nb: npc_nb.Project, project_dir: Path) -> None:
    with pytest.raises(npc_nb.ConfigError):
        nb.npc("analyst\n", directive="x")
    team = project_dir / "npc_team"
    team.mkdir()
    (team / "critic.npc").write_bytes(
        "name: critic\nprimary_directive: caf\xe9\n".encode("latin-1")
    )
    with pytest.raises(npc_nb.ConfigError, match="not UTF-8"):
        nb.get_npc("critic")
