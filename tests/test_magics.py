"""The ``%%npc`` cell and the status and config magics in a real IPython shell: thin,
quiet, and strict about user mistakes. ``%npc_sql`` is in test_sql.py, ``%npc_review``
in test_review_panel.py, ``%npc_graph`` in test_graph.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import npc_nb
from npc_nb.models import gateway
from npc_nb.notebook.magics import NpcMagics
from tests import fake_models
from tests.helpers import cell, magics_project


def test_npc_cell_records_both_turns_and_returns_the_reply(shell: InteractiveShell) -> None:
    reply = cell(shell, "%%npc analyst\nWhat should we call the dataset?")
    assert isinstance(reply, npc_nb.Reply)
    (number,) = [n for n, value in shell.user_ns["Out"].items() if value is reply]
    rows = magics_project(shell).sql("SELECT role, content, execution_count FROM messages")
    assert list(rows["role"]) == ["user", "assistant"]
    assert rows["content"].iloc[0] == "What should we call the dataset?"
    assert rows["execution_count"].iloc[0] == number
    assert "memory candidates waiting · %npc_review" in reply.footer()
    bundle = reply._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}  # no raw Markdown: it passes HTML


def test_npc_injects_only_approved_memories(shell: InteractiveShell) -> None:
    nb = magics_project(shell)
    approved = nb.add_candidate("The user prefers SI units", category="preference", npc="analyst")
    nb.approve(approved.memory_id)
    nb.add_candidate("The user prefers imperial units", category="preference", npc="analyst")
    reply = cell(shell, "%%npc analyst\nHow tall is the tower?")
    assert reply.injected == [approved.memory_id]
    assert "SI units" in reply.text and "imperial" not in reply.text


def test_braces_in_a_prompt_are_literal(shell: InteractiveShell) -> None:
    cell(shell, '%%npc analyst\nParse {"a": 1} and {undefined} and $HOME')
    sent = magics_project(shell).sql("SELECT content FROM messages WHERE role = 'user'")["content"]
    assert sent.item() == 'Parse {"a": 1} and {undefined} and $HOME'


def test_vars_interpolates_on_request_and_summarises_dataframes(shell: InteractiveShell) -> None:
    shell.user_ns["df"] = pd.DataFrame({"species": ["stork", "crane", "heron"], "n": [3, 5, 8]})
    shell.user_ns["site"] = "Lake Neusiedl"
    cell(shell, "%%npc analyst --vars\nAt {site}, look at {df}; keep {{literal}} braces")
    sent = (
        magics_project(shell)
        .sql("SELECT content FROM messages WHERE role = 'user'")["content"]
        .item()
    )
    assert sent.startswith("At Lake Neusiedl, look at [DataFrame: 3 rows x 2 columns")
    assert "stork" in sent and sent.endswith("keep {literal} braces")


def test_unknown_variable_is_a_usage_error(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="no variable 'missing'"):
        cell(shell, "%%npc analyst --vars\nLook at {missing}")
    assert magics_project(shell).sql("SELECT count(*) AS n FROM messages")["n"].item() == 0


def test_a_provider_failure_is_a_usage_error_and_keeps_the_message(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UsageError, match="OPENAI_API_KEY") as raised:
        cell(shell, "%%npc analyst --model openai/gpt-4o-mini\nhello")
    assert magics_project(shell).sql("SELECT role FROM messages")["role"].tolist() == ["user"]
    # a cell chooses its model with --model: the way round names that option
    assert "use --model npc_nb/offline" in str(raised.value)
    assert "model=" not in str(raised.value)


def test_missing_persona_name_is_a_usage_error(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError):
        cell(shell, "%%npc\nhello")


@pytest.mark.parametrize(
    ("source", "meant"),
    [
        ("%%npc analyst --modle npc_nb/offline\nhello", "--model"),
        ("%%npc analyst --no-stram\nhello", "--no-stream"),
        ("%npc_graph --foccus DuckDB", "--focus"),
        ("%npc_review --lsit", "--list"),
        ("%%npc_sql -o frame --wirte\nSELECT 1", "--write"),
    ],
)
def test_a_mistyped_option_names_the_closest_one(
    shell: InteractiveShell, source: str, meant: str
) -> None:
    typo = source.split("--")[-1].split()[0]
    with pytest.raises(UsageError) as raised:
        cell(shell, source)
    message = str(raised.value)
    assert message.startswith(f"Unknown option --{typo}. Did you mean {meant}? Options: ")
    assert magics_project(shell).sql("SELECT * FROM messages").empty  # nothing was sent


def test_an_option_close_to_none_is_named_without_a_guess(shell: InteractiveShell) -> None:
    with pytest.raises(UsageError) as raised:
        cell(shell, "%%npc analyst --xyzzy\nhello")
    assert str(raised.value) == (
        "Unknown option --xyzzy. Options: --model, --new, --no-stream, --vars."
    )
    reply = cell(shell, "%%npc analyst --mod npc_nb/offline\nhello")  # argparse's abbreviation
    assert reply.text.endswith("You said: hello")


def test_new_starts_a_fresh_conversation(shell: InteractiveShell) -> None:
    first = cell(shell, "%%npc analyst\none")
    second = cell(shell, "%%npc analyst\ntwo")
    third = cell(shell, "%%npc analyst --new\nthree")
    assert first.conversation_id == second.conversation_id != third.conversation_id


def test_no_stream_gives_the_same_reply(shell: InteractiveShell) -> None:
    reply = cell(shell, "%%npc analyst --no-stream\nhello")
    assert reply.text.endswith("You said: hello")


def test_config_is_a_table_with_the_model_in_effect_and_each_source(
    shell: InteractiveShell,
) -> None:
    cell(shell, "%npc_config history_messages=4")
    shown = cell(shell, "%npc_config")._repr_mimebundle_()
    recording, *lines = shown["text/plain"].splitlines()
    assert recording == "recording as tester (environment (NPC_NB_REVIEWER))"
    assert lines[0].split() == ["setting", "value", "from"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert len(rows) == len(npc_nb.Settings.model_fields)  # one setting a line
    assert "npc_nb/offline (the offline demo model)" in rows["model"]
    assert rows["model"].endswith("default") and "None" not in rows["model"]
    assert rows["history_messages"].split()[1:] == ["4", "this", "session"]
    assert rows["reviewer"].endswith("environment (NPC_NB_REVIEWER)")  # set by conftest
    assert "<td>npc_nb/offline (the offline demo model)</td>" in shown["text/html"]


def test_config_hides_a_password_and_escapes_every_value(shell: InteractiveShell) -> None:
    cell(shell, "%npc_config match_model=http://ada:hunter2@models.example/v1 reviewer=<b>x</b>")
    shown = cell(shell, "%npc_config")._repr_mimebundle_()
    assert "hunter2" not in shown["text/plain"] and "hunter2" not in shown["text/html"]
    assert "http://ada:***@models.example/v1" in shown["text/plain"]
    assert "<b>" not in shown["text/html"] and "&lt;b&gt;x&lt;/b&gt;" in shown["text/html"]


def test_status_and_config(shell: InteractiveShell) -> None:
    status = cell(shell, "%npc_status")
    assert "npc_nb/offline" in str(status) and "waiting:" in str(status)
    cell(shell, "%npc_config history_messages=4 reviewer=ada")
    settings = magics_project(shell).settings
    assert (settings.history_messages, settings.reviewer) == (4, "ada")
    with pytest.raises(UsageError, match="known setting"):
        cell(shell, "%npc_config colour=blue")
    with pytest.raises(UsageError, match=r"Unknown setting 'modle'\. Did you mean 'model'\?"):
        cell(shell, "%npc_config modle=openai/gpt-4o-mini")
    assert settings.model is None
    with pytest.raises(UsageError, match="history_messages"):
        cell(shell, "%npc_config history_messages=lots")
    assert settings.history_messages == 4


def test_a_team_with_jinja_and_a_broken_file_works_in_a_notebook(
    shell: InteractiveShell, project_dir: Path
) -> None:
    team = project_dir / "npc_team"
    team.mkdir()
    (team / "scout.npc").write_text(
        "name: scout\nprimary_directive: You scout sites.\njinxes:\n  - {{ Jinx('sh') }}\n"
    )
    (team / "critic.npc").write_text("name: critic\nprimary_directive: You find flaws.\n")
    (team / "gull.npc").write_text("name: [gull\nprimary_directive: x\n")
    assert cell(shell, "%%npc critic\nCheck this.").npc == "critic"
    assert cell(shell, "%%npc scout\nWhere next?").npc == "scout"
    shown = shell.display_formatter.format(cell(shell, "%npc_status"))[0]["text/plain"]
    assert "personas:  critic, scout" in shown
    assert f"BROKEN:    {team / 'gull.npc'} is not valid YAML" in shown
    with pytest.raises(UsageError, match="gull.npc is not valid YAML"):
        cell(shell, "%%npc gull\nHow many?")


def test_an_undefined_persona_is_announced_above_the_reply(
    shell: InteractiveShell, project_dir: Path
) -> None:
    (project_dir / "npc_team").mkdir()
    (project_dir / "npc_team" / "ornithologist.npc").write_text(
        "name: ornithologist\nprimary_directive: You identify birds.\n"
    )
    reply = cell(shell, "%%npc ornitologist\nWhich heron is this?")
    (notice,) = reply.notices
    assert "ornitologist is not defined" in notice and "Did you mean ornithologist?" in notice
    bundle = shell.display_formatter.format(reply)[0]
    assert bundle["text/plain"].startswith("Note: ornitologist is not defined")
    page = bundle["text/html"]
    assert page.index("Did you mean ornithologist?") < page.index("Which heron is this?")
    assert "Did you mean" not in page[page.index("<small>") :]  # not in the quiet footer
    assert "ornitologist (ad-hoc persona)" in reply.footer()


def test_a_streamed_reply_shows_its_notice_while_it_streams(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell, "kernel", object(), raising=False)  # draw the live display
    gateway.load_client()  # loaded, as a pause after %load_ext leaves it (test_first_call.py)
    published: list[dict] = []
    monkeypatch.setattr(shell.display_pub, "publish", lambda data, **_: published.append(data))
    cell(shell, "%%npc stranger\nhello")
    live = [bundle["text/plain"] for bundle in published]
    assert live and all(text.startswith("Note: stranger is not defined") for text in live)


def test_load_ext_does_not_import_the_widgets() -> None:
    """Nor litellm on its own thread: it loads in the background (test_first_call.py)."""
    code = (
        "import sys, npc_nb; "
        "from IPython.core.interactiveshell import InteractiveShell; "
        "ip = InteractiveShell.instance(); ip.run_line_magic('load_ext', 'npc_nb'); "
        "print('ipywidgets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_magics_are_thin() -> None:
    import inspect

    for name in ("npc", "npc_status", "npc_config", "npc_review"):
        lines = inspect.getsource(getattr(NpcMagics, name)).splitlines()
        assert len(lines) < 30, name


def test_npc_scrubs_a_memory_tag_split_across_stream_chunks(shell: InteractiveShell) -> None:
    fake_models.install()
    fake_models.SCRIPT.append("Noted.</npc-memory><npc-memory>Anything else?")
    reply = cell(shell, "%%npc analyst --model scripted/any\nhello")
    stored = magics_project(shell).sql("SELECT content FROM messages WHERE role = 'assistant'")
    assert reply.text == stored["content"].item() == "Noted.Anything else?"


def test_an_npc_cell_returns_while_its_extraction_is_still_running(
    shell: InteractiveShell,
) -> None:
    nb = magics_project(shell)
    nb.configure(extraction_model="scripted/any")
    fake_models.install()
    gate = fake_models.gated_two_memories()
    try:
        reply = cell(shell, "%%npc analyst\nWe decided to use DuckDB. I prefer short answers.")
        assert isinstance(reply, npc_nb.Reply)  # the cell is done ...
        assert gate.entered.wait(timeout=30)  # ... while the extraction is held in its call
        assert not gate.finished.is_set()
        assert nb.extraction.status().running == 1
        assert nb.review_queue().empty
    finally:
        gate.open()
    assert nb.extraction.wait(timeout=30).done == 1
    assert sorted(nb.review_queue()["category"]) == ["decision", "preference"]
