"""The ``npc-nb`` command: its parser, and which subcommand runs.

``npc-nb review`` (``review``) reviews candidates with single keys, in a project opened
as it is (``opening``: nothing is created); ``npc-nb migrate-store`` (``migrate``)
copies a store into another; ``npc-nb grant`` and ``npc-nb revoke`` (``grants``) give a
database role access to a project on a shared store, or take it back; ``npc-nb policy``
(``policy``) shows or sets the lab's review policy; ``npc-nb import``
and ``npc-nb export`` (``transfer``) move memories in and out; ``npc-nb rerun``
(``rerun``) executes a saved notebook again, replayed, and compares it; ``npc-nb verify``
(``verify``) recomputes the history. All talk to the user
through ``console``. Errors the user can fix (``NpcError``) are printed on one line,
with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING

from ..errors import NpcError
from ..experiments.blind import check_experiment_review
from .console import Console
from .grants import add_grant_commands, grant_command
from .migrate import add_migrate_store, migrate_store
from .opening import open_to_review
from .options import add_project_options
from .policy import add_policy_command, policy_command
from .rerun import add_rerun, run_rerun
from .review import review_session
from .transfer import add_transfer, run_export, run_import
from .verify import add_verify, run_verify

if TYPE_CHECKING:
    from ..review import ReviewSession

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every subcommand and option (docs/cli.md is drawn from it)."""
    parser = argparse.ArgumentParser(prog="npc-nb", description="npc_nb from a terminal.")
    commands = parser.add_subparsers(dest="command", required=True)
    review = commands.add_parser("review", help="review memory candidates with single keys")
    add_project_options(review)
    review.add_argument("--npc", help="only this persona's candidates")
    review.add_argument("--category", help="only this category")
    review.add_argument("--conversation", help="only candidates from this conversation id")
    review.add_argument("--by", help="reviewer name recorded on decisions")
    review.add_argument(
        "--auto",
        action="store_true",
        help="only what was merged, suppressed or reinforced without asking since the last "
        "review: put any back as its own card and decide it",
    )
    review.add_argument(
        "--adjudicate",
        action="store_true",
        help="independent review: only the cards whose votes disagree, each vote shown; a "
        "number decides as that vote says, or decide anew",
    )
    review.add_argument(
        "--experiment",
        help="the blind review of this extraction experiment's cards (nb.experiment)",
    )
    review.add_argument(
        "--audit",
        metavar="NAME",
        help="the blind review of this audit's sampled cards (nb.audit): its progress is "
        "shown, never a tally or its errors",
    )
    add_migrate_store(commands)
    add_transfer(commands)
    add_grant_commands(commands)
    add_rerun(commands)
    add_policy_command(commands)
    add_verify(commands)
    return parser


def main(
    argv: list[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None
) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    console = Console(stdin or sys.stdin, stdout or sys.stdout)
    if args.command == "migrate-store":
        return migrate_store(args, console)
    if args.command == "import":
        return run_import(args, console)
    if args.command == "export":
        return run_export(args, console)
    if args.command == "verify":
        return run_verify(args, console)
    if args.command in ("grant", "revoke"):
        return grant_command(args, console)
    if args.command == "rerun":
        return run_rerun(args, console)
    if args.command == "policy":
        return policy_command(args, console)
    try:
        review_session(_session(args), console)
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    return 0


def _session(args: argparse.Namespace) -> ReviewSession:
    """The review ``npc-nb review``'s options ask for: an audit's or an experiment's
    blind review, or the queue's."""
    project = open_to_review(args)
    filters = {"npc": args.npc, "category": args.category, "conversation": args.conversation}
    if args.audit is not None:
        from ..review import check_audit_review  # the project is open: loaded by now

        others = {f"--{name}": value for name, value in filters.items()}
        others |= {"--auto": args.auto, "--adjudicate": args.adjudicate}
        check_audit_review(args.audit, **others, **{"--experiment": args.experiment})
        return project.review_session(audit=args.audit, by=args.by)
    if args.experiment is not None:
        check_experiment_review(args.experiment, *filters.values())
        return project.experiment(args.experiment).review_session(
            by=args.by, adjudicate=args.adjudicate
        )
    return project.review_session(**filters, by=args.by, auto=args.auto, adjudicate=args.adjudicate)
