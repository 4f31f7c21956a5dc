"""Who a decision is recorded for when nobody said: a name that names a person.

The default is the OS account's name (``ada``): on a personal account it is the person,
and it is what earlier releases recorded, so a reviewer's history and ``undo()`` carry
on. But in a container, and on Jupyter's own Docker images, the account is ``root`` or
``jovyan``, which names nobody; there git's ``user.name`` is used when one is set (read
from the global git config files, never by running git), and otherwise the account's
name stays and the review panel says how to set a name. Found once per process, so a
decision pays nothing for it.

Every name is normalised before it is compared or stored (``reviewer_name``): NFKC,
format characters such as U+200B removed, whitespace collapsed, so "alice" followed by U+200B is
alice and cannot count as a second reviewer. ``Identity`` is who is recording: the name
recorded as the display name, the role recorded beside it (``reviewer_role``: the
connected role on PostgreSQL, the name itself on a file) and how it was determined.
"""

from __future__ import annotations

import functools
import getpass
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "SHARED_ACCOUNTS",
    "DefaultReviewer",
    "Identity",
    "default_reviewer",
    "how_to_name_yourself",
    "reviewer_name",
]

#: Accounts that name no person: a container's root, Jupyter's Docker images' jovyan.
SHARED_ACCOUNTS = frozenset({"root", "jovyan"})


@dataclass(frozen=True)
class DefaultReviewer:
    """The name decisions are recorded under by default, where it came from ("the OS
    user", "git user.name"), and whether it is a shared account that names nobody."""

    name: str
    source: str
    shared_account: bool


@dataclass(frozen=True)
class Identity:
    """Who is recording: ``name`` (the display name decisions carry), ``role`` (what
    counts as the same reviewer: the connected database role on PostgreSQL, the name on
    a file) and ``how`` the name was determined."""

    name: str
    role: str
    how: str

    def __str__(self) -> str:
        return f"recording as {self.name} ({self.how})"

    def names(self) -> frozenset[str]:
        """The names that name this reviewer (``by=`` may use either)."""
        return frozenset({self.name, self.role})


def reviewer_name(value: str) -> str:
    """A reviewer's name as compared and stored: NFKC, no format characters (zero-width
    spaces, direction marks), whitespace collapsed; "" if nothing is left."""
    text = unicodedata.normalize("NFKC", value)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split())


@functools.cache
def default_reviewer() -> DefaultReviewer:
    """The default reviewer of this process (see the module's docstring)."""
    account = _os_user()
    if account not in SHARED_ACCOUNTS:
        return DefaultReviewer(account, "the OS user", False)
    named = _git_user_name()
    if named:
        return DefaultReviewer(named, "git user.name", False)
    return DefaultReviewer(account, "the OS user", True)


def how_to_name_yourself(example: str = "ada") -> str:
    """The ways to set the reviewer's name, in one sentence."""
    return (
        f'npc_nb.open(reviewer="{example}"), NPC_NB_REVIEWER={example} in the environment '
        f"or .env, or %npc_config reviewer={example} for this session"
    )


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def _git_user_name() -> str | None:
    """``user.name`` from git's global config files, the last one that sets it (as git
    reads them); None if none does or none can be read."""
    found = None
    for path in _git_config_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found = _user_name(text) or found
    return found


def _git_config_files() -> list[Path]:
    explicit = os.environ.get("GIT_CONFIG_GLOBAL")
    if explicit:
        return [Path(explicit).expanduser()]
    home = Path.home()
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return [Path(xdg) / "git" / "config", home / ".gitconfig"]


def _user_name(text: str) -> str | None:
    """The last ``name = ...`` of a ``[user]`` section of a git config file's text."""
    section, found = "", None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
            continue
        key, sep, value = line.partition("=")
        if sep and section == "user" and key.strip().lower() == "name":
            found = value.split(" #")[0].split(" ;")[0].strip().strip('"').strip() or found
    return found
