"""``npc-nb policy [--set KEY=VALUE ...]``: the lab's review policy, shown or set.

The same as ``nb.access.policy()`` and ``nb.access.set_policy(...)``: the project's store keeps it
(``memory.voting.lab_policy``) and only its owner may set it; this module only parses,
opens the project (``options``) and prints the policy in force.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import ConfigError, NpcError
from .console import Console
from .options import add_project_options, open_from

__all__ = ["add_policy_command", "policy_command"]


def add_policy_command(commands: Any) -> None:
    policy = commands.add_parser(
        "policy",
        help="show the project's review policy, or set it (as the project's owner)",
        description="Show the review policy every kernel of this project follows "
        "(review_mode, reviewers_per_card, allow_self_adjudication), or, as the "
        "project's owner, store new values: each change is kept with who made it.",
    )
    policy.add_argument(
        "--set",
        dest="values",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="store KEY=VALUE in the policy (repeat for several keys)",
    )
    add_project_options(policy)


def policy_command(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb policy``: the policy in force after any ``--set``, or the error."""
    try:
        values = _assignments(args.values)
        project = open_from(args)
        try:
            policy = project.access.set_policy(**values) if values else project.access.policy()
        finally:
            project.close()
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(policy))
    return 0


def _assignments(raw: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for assignment in raw:
        key, sep, value = assignment.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--set takes KEY=VALUE (e.g. --set review_mode=independent), not {assignment!r}."
            )
        values[key.strip()] = _typed(key.strip(), value.strip())
    return values


def _typed(key: str, value: str) -> Any:
    """A value typed on the command line as ``set_policy`` takes it."""
    if key == "reviewers_per_card" and value.isdigit():
        return int(value)
    if key == "allow_self_adjudication" and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value
