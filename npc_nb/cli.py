"""``npc-nb``: the command line. ``npc-nb review`` reviews candidates from a terminal.

The same decisions and single keys as the review panel (a approve, r reject, e edit,
s skip, d defer, u undo, ? help, q quit), for people outside Jupyter. On a terminal a
key acts at once; from a pipe or a file each line is one key (and the text an edit,
reason or date asks for), so a review can be scripted. End of input or Ctrl-C stops the
review: nothing is decided that was not explicitly decided.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Iterator
from typing import IO, Any

from .errors import NpcError

__all__ = ["main"]

HELP = (
    """a approve · r reject · e edit then approve · s skip · d defer · u undo · ? help · q quit"""
)
_DECISIONS = {"a": "approve", "r": "reject", "e": "edit", "s": "skip", "d": "defer"}


class _Stop(Exception):
    """End of input, Ctrl-C or q: stop reviewing."""


class Console:
    """Reads keys and lines from the user, writes cards; single keys on a real terminal."""

    def __init__(self, stdin: IO[str], stdout: IO[str]) -> None:
        self.stdin, self.stdout = stdin, stdout
        self.interactive = stdin.isatty()

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def key(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        if self.interactive:
            with _cbreak(self.stdin):
                char = self.stdin.read(1)
            self.say(char)
            if not char or char == "\x04":
                raise _Stop
            return char.lower()
        line = self.stdin.readline()
        if not line:
            raise _Stop
        self.say(line.strip())
        return line.strip()[:1].lower()

    def line(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise _Stop
        if not self.interactive:
            self.say(line.rstrip("\n"))
        return line.rstrip("\n")


@contextlib.contextmanager
def _cbreak(stream: IO[str]) -> Iterator[None]:
    import termios
    import tty

    descriptor = stream.fileno()
    saved = termios.tcgetattr(descriptor)
    try:
        tty.setcbreak(descriptor)
        yield
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)


def main(
    argv: list[str] | None = None, stdin: IO[str] | None = None, stdout: IO[str] | None = None
) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="npc-nb", description="npc_nb from a terminal.")
    commands = parser.add_subparsers(dest="command", required=True)
    review = commands.add_parser("review", help="review memory candidates with single keys")
    review.add_argument("--project", help="project folder (default: found from here)")
    review.add_argument("--npc", help="only this persona's candidates")
    review.add_argument("--category", help="only this category")
    review.add_argument("--by", help="reviewer name recorded on decisions")
    args = parser.parse_args(argv)
    console = Console(stdin or sys.stdin, stdout or sys.stdout)
    try:
        from .project import open_project

        project = open_project(args.project)
        tally = review_session(project, console, npc=args.npc, category=args.category, by=args.by)
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    done = ", ".join(f"{n} {kind}" for kind, n in tally.items() if n)
    console.say(f"Reviewed: {done or 'nothing'}")
    return 0


def review_session(
    project: Any,
    console: Console,
    *,
    npc: str | None = None,
    category: str | None = None,
    by: str | None = None,
) -> dict[str, int]:
    """Show each waiting candidate and apply the key pressed; return the tally."""
    from .stamps import new_id

    queue = list(project.review_queue(npc=npc, category=category)["id"])
    tally = dict.fromkeys(["approved", "edited", "rejected", "skipped", "deferred", "undone"], 0)
    session, total, done = new_id(), len(queue), 0
    console.say(f"{total} candidate(s) waiting in {project.name}. {HELP}")
    try:
        while queue:
            memory_id = queue[0]
            _show(console, project, memory_id, done + 1, total)
            shown = time.monotonic()
            outcome = _decide(
                console,
                project,
                memory_id,
                by=by,
                session=session,
                shown_at=shown,
            )
            if outcome is None:
                continue
            tally[outcome] += 1
            if outcome == "undone":
                queue = list(project.review_queue(npc=npc, category=category)["id"])
                done = max(done - 1, 0)
                continue
            queue.pop(0)
            if outcome == "skipped":
                queue.append(memory_id)
            else:
                done += 1
    except (_Stop, KeyboardInterrupt):
        console.say("\nStopped: nothing more was decided.")
    return tally


def _show(console: Console, project: Any, memory_id: str, position: int, total: int) -> None:
    memory = project.memories().set_index("id").loc[memory_id]
    about = [
        memory["category"],
        memory["npc"] if isinstance(memory["npc"], str) else memory["scope"],
    ]
    if memory["confidence"] == memory["confidence"]:  # not NaN
        about.append(f"confidence {memory['confidence']:.2f}")
    console.say(f"\n[{position}/{total}] " + " · ".join(about))
    console.say(f"  {memory['final_text']}")
    if len(memory["flags"]):
        console.say(f"  ! warning: {', '.join(memory['flags'])} (check before approving)")
    if isinstance(memory["evidence"], str):
        console.say(f"  evidence: \u201c{memory['evidence']}\u201d")


def _decide(
    console: Console, project: Any, memory_id: str, *, by: str | None, session: str, shown_at: float
) -> str | None:
    key = console.key("  [a/r/e/s/d/u/?/q] > ")
    try:
        if key == "q":
            raise _Stop
        if key == "?":
            console.say(f"  {HELP}")
            return None
        if key == "u":
            console.say(f"  {project.undo(by=by)}")
            return "undone"
        decision = _DECISIONS.get(key)
        if decision is None:
            console.say(f"  Unknown key {key!r}. {HELP}")
            return None
        extra = _ask(console, decision)
        if extra is None:
            return None
        spent = time.monotonic() - shown_at
        project.decide(memory_id, decision, by=by, time_spent=spent, session=session, **extra)
    except NpcError as exc:
        console.say(f"  ! {exc}")
        return None
    return {
        "approve": "approved",
        "reject": "rejected",
        "edit": "edited",
        "skip": "skipped",
        "defer": "deferred",
    }[decision]


def _ask(console: Console, decision: str) -> dict[str, Any] | None:
    """What a decision needs beyond the key; None cancels it."""
    if decision == "edit":
        text = console.line("  new text (empty cancels): ")
        return {"text": text} if text.strip() else None
    if decision == "reject":
        reason = console.line("  reason (optional): ").strip()
        return {"reason": reason or None}
    if decision == "defer":
        until = console.line("  until (YYYY-MM-DD, empty = tomorrow): ").strip()
        return {"until": until} if until else {}
    return {}


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
