"""Team files are data: bounded in size, in what they expand to and in the time they take,
and never read outside the project.

A shared team folder (a repository, a synced folder) can hold a hostile file, so each
case below checks that the team still loads: the bad file is listed broken with an
error naming it and quoting little of it, and the other personas work. Files that
used to exhaust memory, hang or take minutes are read in a child process with an
address-space limit and a deadline, so the old behaviour fails the test instead of
the machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import npc_nb
from npc_nb.chat import npcpy_yaml
from tests import fake_models
from tests.helpers import PATIENCE, run_python

CRITIC = "name: critic\nprimary_directive: You look for flaws in the analysis.\n"
SECRET = "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"
#: More than the ~80 characters an error may quote of a value, with room for the path.
MESSAGE_BOUND = 600


def write_team(project_dir: Path, files: dict[str, str]) -> Path:
    folder = project_dir / "npc_team"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def errors_by_name(nb: npc_nb.Project) -> dict[str, str | None]:
    frame = nb.npcs()
    return {
        row.name: row.error if isinstance(row.error, str) else None for row in frame.itertuples()
    }


@pytest.fixture
def scripted(project_dir: Path) -> Iterator[npc_nb.Project]:
    fake_models.install()
    project = npc_nb.open(project_dir, extract_in_background=False)
    yield project
    project.close()


# -- bounded: files that exhausted memory, hung or took minutes -------------------------

#: The child opens the project, then caps its address space at what it already holds
#: plus 1 GB (an absolute cap would depend on the machine's thread count), lists the
#: personas, and talks to the good one.
LIST_UNDER_A_MEMORY_CAP = """
import json, resource
import npc_nb
nb = npc_nb.open(PROJECT, extract_in_background=False)
with open("/proc/self/status") as status:
    held = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (held + 2**30, resource.RLIM_INFINITY))
frame = nb.npcs()
reply = nb.chat("critic", "Check my counts.")
print(json.dumps({
    "errors": {r.name: r.error if isinstance(r.error, str) else None for r in frame.itertuples()},
    "prompt": json.dumps(reply.messages),
}))
nb.close()
"""


def _alias_bomb() -> str:
    """600 bytes of YAML whose ``name`` is 9**9 short strings once its aliases expand."""
    lines = ["jinxes:", "  - &a [" + ",".join(['"lolololol"'] * 9) + "]"]
    for previous, anchor in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"  - &{anchor} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join([*lines, "name: *i", "primary_directive: x", ""])


#: Each hostile file, and what its error says. Before these were refused, the alias bomb
#: raised MemoryError quoting a 5 GB value, /dev/zero was read until memory ran out, the
#: FIFO blocked for ever, and the other two took minutes (quadratic scans).
HOSTILE = {
    "bomb": "uses the YAML alias '*a' on line 3",
    "zero": "is a link to something outside the project",
    "pipe": "is not a regular file",
    "braces": "nests values deeper than 32 levels",
    "marker": "must be a mapping",
}


def test_hostile_team_files_are_listed_broken_promptly_within_memory(
    project_dir: Path, tmp_path: Path
) -> None:
    folder = write_team(
        project_dir,
        {
            "critic.npc": CRITIC,
            "bomb.npc": _alias_bomb(),
            "braces.npc": "{{" * 200_000,  # unclosed Jinja, 400 kB
            "marker.npc": "npcnbjinja" + "q" * 900_000,  # the Jinja placeholder's prefix
        },
    )
    (folder / "zero.npc").symlink_to("/dev/zero")
    os.mkfifo(folder / "pipe.npc")  # opening it for reading waits for a writer
    code = LIST_UNDER_A_MEMORY_CAP.replace("PROJECT", repr(str(project_dir)))
    child = run_python(code, env_home=tmp_path / "home", wait=False)
    assert isinstance(child, subprocess.Popen)
    try:
        out, err = child.communicate(timeout=2 * PATIENCE)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise
    assert child.returncode == 0, err[-2000:]
    seen = json.loads(out)
    assert seen["errors"].pop("critic") is None
    assert set(seen["errors"]) == set(HOSTILE)
    for name, error in seen["errors"].items():
        assert error.startswith(f"{folder / name}.npc ")
        assert HOSTILE[name] in error
        assert len(error) < MESSAGE_BOUND
    assert "lolololol" not in seen["prompt"]


def test_a_team_file_over_the_size_limit_is_broken(nb: npc_nb.Project, project_dir: Path) -> None:
    directive = "You count every bird. " * 50_000  # 1.1 MB
    folder = write_team(
        project_dir, {"critic.npc": CRITIC, "birder.npc": f"primary_directive: {directive}\n"}
    )
    errors = errors_by_name(nb)
    assert errors["critic"] is None
    assert errors["birder"] == (
        f"{folder / 'birder.npc'} is larger than 1 MB, the limit for a team file; "
        "a persona's directive or a team's context should be far shorter."
    )
    with pytest.raises(npc_nb.ConfigError, match="larger than 1 MB"):
        nb.chat("birder", "How many?")


def test_a_file_of_too_many_values_is_broken(nb: npc_nb.Project, project_dir: Path) -> None:
    jinxes = "".join(f"  - jinx{n}\n" for n in range(20_000))
    write_team(project_dir, {"critic.npc": CRITIC + "jinxes:\n" + jinxes})
    (error,) = nb.npcs()["error"]
    assert "holds more than 10,000 values" in error


@pytest.mark.parametrize(
    "number", ["1" * 5_000, "0x" + "f" * 5_000, "1:" * 2_000 + "1"], ids=["decimal", "hex", "60"]
)
def test_a_huge_number_breaks_only_its_file(
    nb: npc_nb.Project, project_dir: Path, number: str
) -> None:
    write_team(
        project_dir,
        {"critic.npc": CRITIC, "counter.npc": f"name: {number}\nprimary_directive: x\n"},
    )
    errors = errors_by_name(nb)
    assert errors["critic"] is None
    assert "characters long on line 1; quote it if it is text" in str(errors["counter"])
    assert len(str(errors["counter"])) < MESSAGE_BOUND


def test_errors_quote_at_most_80_characters_of_a_value(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    long_list = "[" + ", ".join(f"item{n}" for n in range(2_000)) + "]"
    folder = write_team(
        project_dir,
        {
            "critic.npc": CRITIC,
            "listed.npc": f"name: {long_list}\nprimary_directive: x\n",
            "typo.npc": f"{'k' * 1_000}: 1\nprimary_directive: x\n",
            "tagged.npc": f"name: !{'t' * 3_000} x\nprimary_directive: x\n",
            "team.ctx": f"context: {long_list}\n",
        },
    )
    errors = errors_by_name(nb)
    assert errors["listed"] == (
        f"{folder / 'listed.npc'}: key 'name' must be a string, not "
        "['item0', 'item1', 'item2', 'item3', ...]."
    )
    assert f"unknown key '{'k' * 37}...{'k' * 38}'. npc_nb reads" in str(errors["typo"])
    assert "could not determine a constructor for the tag" in str(errors["tagged"])
    context_error = nb.status().broken[0]
    assert context_error == (
        f"{folder / 'team.ctx'}: key 'context' must be text, not "
        "['item0', 'item1', 'item2', 'item3', ...]."
    )
    for error in [*errors.values(), context_error]:
        assert error is None or len(error) < MESSAGE_BOUND


# -- never outside the project -------------------------------------------------------


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the project holding what must never reach a prompt or a message."""
    folder = tmp_path / "home" / ".aws"
    folder.mkdir(parents=True)
    (folder / "credentials").write_text(f"[default]\n{SECRET}\n", encoding="utf-8")
    (folder / "spy.npc").write_text(
        f"name: spy\nprimary_directive: 'Repeat this: {SECRET}'\n", encoding="utf-8"
    )
    (folder / "team.ctx").write_text(f"context: '{SECRET}'\n", encoding="utf-8")
    return folder


def test_a_link_out_of_the_project_is_broken_and_its_text_reaches_nothing(
    scripted: npc_nb.Project, project_dir: Path, outside: Path
) -> None:
    folder = write_team(project_dir, {"critic.npc": CRITIC + "model: scripted/any\n"})
    for link, target in [("creds.npc", "credentials"), ("spy.npc", "spy.npc")]:
        (folder / link).symlink_to(outside / target)
    (folder / "team.ctx").symlink_to(outside / "team.ctx")
    errors = errors_by_name(scripted)
    for link in ("creds", "spy"):
        assert errors[link] == (
            f"{folder / link}.npc is a link to something outside the project {project_dir}; "
            "npc_nb reads team files only inside the project. Copy the file into npc_team/ "
            "instead."
        )
    status = scripted.status()
    assert [error.split(" is a link")[0] for error in status.broken] == [
        str(folder / "team.ctx"),
        str(folder / "creds.npc"),
        str(folder / "spy.npc"),
    ]
    with pytest.raises(npc_nb.ConfigError) as caught:
        scripted.chat("spy", "Go on.")
    reply = scripted.chat("critic", "Check my counts.")
    seen = [str(caught.value), str(status), *map(str, errors.values()), json.dumps(reply.messages)]
    seen += [json.dumps(messages) for messages in fake_models.RECEIVED]
    assert len(fake_models.RECEIVED) == 1
    for text in seen:
        assert "AKIA" not in text and ".aws" not in text


def test_a_team_folder_linked_out_of_the_project_is_one_broken_entry(
    nb: npc_nb.Project, project_dir: Path, outside: Path
) -> None:
    (project_dir / "npc_team").symlink_to(outside)
    assert nb.npcs().empty
    (error,) = nb.status().broken
    assert error.startswith(f"{project_dir / 'npc_team'} is a link to something outside")
    assert "AKIA" not in str(nb.status()) and "credentials" not in str(nb.status())
    assert nb.get_npc("spy").adhoc


def test_links_and_entries_inside_the_project_are_read_or_listed(
    nb: npc_nb.Project, project_dir: Path
) -> None:
    shared = project_dir / "shared"
    shared.mkdir()
    (shared / "critic.npc").write_text(CRITIC, encoding="utf-8")
    folder = write_team(project_dir, {})
    (folder / "critic.npc").symlink_to(Path("..") / "shared" / "critic.npc")
    (folder / "folder.npc").mkdir()
    (folder / "loop.npc").symlink_to(folder / "loop.npc")
    (folder / "gone.npc").symlink_to(shared / "gone.npc")
    errors = errors_by_name(nb)
    assert errors["critic"] is None
    assert nb.get_npc("critic").directive == "You look for flaws in the analysis."
    assert errors["folder"] == (
        f"{folder / 'folder.npc'} is not a regular file; a team file is a text file in npc_team/."
    )
    for name in ("loop", "gone"):
        assert errors[name] == (
            f"{folder / name}.npc is a link to nothing (a missing file or a loop of links); "
            "remove it or point it at a file in the project."
        )


# -- the one-pass Jinja scan finds what the regex it replaced found -------------------

_OLD_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


@given(st.text(alphabet="{}%#a\n ", max_size=60))
def test_the_jinja_scan_finds_the_spans_the_lazy_regex_found(text: str) -> None:
    found: list[str] = []

    def keep(span: str) -> str:
        found.append(span)
        return "@"

    assert npcpy_yaml._swap_jinja(text, keep) == _OLD_JINJA.sub("@", text)
    assert found == _OLD_JINJA.findall(text)


@pytest.mark.parametrize("replacement", ["a link out", "a FIFO", "over the size limit"])
def test_a_team_file_that_turns_unreadable_is_refused_on_the_next_turn(
    scripted: npc_nb.Project, project_dir: Path, outside: Path, replacement: str
) -> None:
    """What was read once is not trusted to stay in its place: every turn looks again."""
    folder = write_team(project_dir, {"critic.npc": CRITIC + "model: scripted/any\n"})
    hour_ago = (folder / "critic.npc").stat().st_mtime_ns - 3600 * 10**9
    os.utime(folder / "critic.npc", ns=(hour_ago, hour_ago))
    scripted.chat("critic", "Check my counts.")
    (folder / "critic.npc").unlink()
    if replacement == "a link out":
        (folder / "critic.npc").symlink_to(outside / "spy.npc")
        expected = "is a link to something outside the project"
    elif replacement == "a FIFO":
        os.mkfifo(folder / "critic.npc")
        expected = "is not a regular file"
    else:
        (folder / "critic.npc").write_text(CRITIC + "#" * 1_000_000, encoding="utf-8")
        expected = "larger than 1 MB"
    with pytest.raises(npc_nb.ConfigError, match=expected) as caught:
        scripted.chat("critic", "Again.")
    assert str(caught.value).startswith(str(folder / "critic.npc"))
    assert errors_by_name(scripted)["critic"] == str(caught.value)
    assert len(fake_models.RECEIVED) == 1
    assert "AKIA" not in json.dumps(fake_models.RECEIVED) + str(caught.value)
