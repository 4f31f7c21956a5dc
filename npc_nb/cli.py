"""``npc-nb``: the command line. ``npc-nb review`` reviews candidates from a terminal.

The same decisions and single keys as the review panel (a approve, r reject, e edit,
s skip, d defer, u undo, ? help, q quit), for people outside Jupyter. On a terminal a
key acts at once and an edit starts from the current text; from a pipe or a file each
line is one key (and the text an edit, reason or date asks for), so a review can be
scripted. After the last card the summary is shown and u can still undo; q quits. End
of input or Ctrl-C stops the review: nothing is decided that was not explicitly decided.

Everything printed passes through ``terminal_text``: a candidate's text comes from a
model, so an escape sequence or bidi override in it is shown, never obeyed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from ._markup import terminal_text
from .errors import NpcError

if TYPE_CHECKING:
    from .review.session import ReviewSession

__all__ = ["main"]

HELP = (
    "a approve · r reject · e edit then approve · s skip · d defer · u undo · 1-9 approve "
    "that wording · x split a wording off · ? help · q quit"
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
        self.write(text + "\n")

    def write(self, text: str) -> None:
        """Write ``text``; only its line breaks reach the terminal as controls."""
        self.stdout.write("\n".join(terminal_text(line) for line in text.split("\n")))
        self.stdout.flush()

    def key(self, prompt: str) -> str:
        if self.interactive:
            # Keys typed before the prompt is shown are dropped (entering cbreak mode
            # flushes them): a key acts only on what is on the screen when it is pressed.
            with _cbreak(self.stdin):
                self.write(prompt)
                char = self.stdin.read(1)
            self.say(char)
            if not char or char == "\x04":
                raise _Stop
            return char.lower()
        self.write(prompt)
        line = self.stdin.readline()
        if not line:
            raise _Stop
        self.say(line.strip())
        return line.strip()[:1].lower()

    def line(self, prompt: str) -> str:
        self.write(prompt)
        line = self.stdin.readline()
        if not line:
            raise _Stop
        if not self.interactive:
            self.say(line.rstrip("\n"))
        return line.rstrip("\n")

    def edited(self, text: str) -> str | None:
        """The reviewer's new version of ``text``; None cancels the edit.

        On a terminal the line starts with ``text`` to change in place (readline), and
        an emptied line cancels. Elsewhere (a pipe, or text a terminal could not show as
        typed) the text is shown, an empty line keeps it and ``-`` cancels.
        """
        if self._can_prefill(text):
            new = self._prefilled("  edit (Enter approves, an empty line cancels): ", text)
            return new if new.strip() else None
        self.say(f"  now: {terminal_text(text)}")  # a line break in it stays visible
        new = self.line("  new text (empty keeps it as it is, - cancels): ")
        if new.strip() == "-":
            return None
        return new if new.strip() else text

    def _can_prefill(self, text: str) -> bool:
        """Readline edits the line only on the process's own terminal, and only text
        with nothing a terminal would act on is put on the line."""
        if not (self.interactive and self.stdin is sys.stdin and self.stdout is sys.stdout):
            return False
        try:
            import readline  # noqa: F401  (absent on some platforms)
        except ImportError:
            return False
        return text.isprintable()

    def _prefilled(self, prompt: str, text: str) -> str:
        import readline

        def fill() -> None:
            readline.insert_text(text)
            readline.redisplay()

        readline.set_pre_input_hook(fill)
        try:
            return input(prompt)
        except EOFError:
            raise _Stop from None
        finally:
            readline.set_pre_input_hook()


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
    review.add_argument(
        "--store", help="a shared store, postgresql://user@host:port/db (default: the file)"
    )
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
    _add_migrate_store(commands)
    args = parser.parse_args(argv)
    console = Console(stdin or sys.stdin, stdout or sys.stdout)
    if args.command == "migrate-store":
        return migrate_store(args, console)
    try:
        from ._project import open_project

        shared = {"store": args.store} if args.store else {}
        project = open_project(args.project, **shared)
        session = project.review_session(
            npc=args.npc,
            category=args.category,
            conversation=args.conversation,
            by=args.by,
            auto=args.auto,
        )
        review_session(session, console)
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    return 0


def _add_migrate_store(commands: Any) -> None:
    move = commands.add_parser(
        "migrate-store",
        help="copy a store, every row of it, into another (a project folder or PostgreSQL)",
    )
    move.add_argument("source", metavar="FROM", help="a project folder or a PostgreSQL URL")
    move.add_argument("target", metavar="TO", help="a project folder or a PostgreSQL URL")
    move.add_argument("--project", help="the project's name, for an end that is a URL")
    move.add_argument(
        "--user",
        action="store_true",
        help="move the user's store of global memories: a folder end is a user folder "
        "such as ~/.npc_nb ($NPC_NB_HOME)",
    )
    move.add_argument(
        "--force", action="store_true", help="replace whatever the target already holds"
    )


def migrate_store(args: argparse.Namespace, console: Console) -> int:
    """``npc-nb migrate-store FROM TO``: the move, then its summary (rows per table)."""
    from .store.transfer import migrate_store as move

    try:
        moved = move(
            args.source, args.target, project=args.project, user=args.user, force=args.force
        )
    except NpcError as exc:
        console.say(f"npc-nb: {exc}")
        return 2
    console.say(str(moved))
    return 0


def review_session(session: ReviewSession, console: Console) -> None:
    """Show each waiting candidate and apply the key pressed. At the end, show the
    summary and wait: u undoes the last decision (its card comes back), q quits."""
    if session.remaining:
        console.say(f"{session.remaining} candidate(s) waiting. {HELP}")
    try:
        while True:
            while (card := session.card()) is not None:
                console.say("\n" + str(_for_terminal(card)))
                _decide(console, session, card.memory_id)
            if _put_back(console, session):
                continue
            console.say("\n" + str(_for_terminal(session.summary())))
            if not (session.undoable and _undo_at_the_end(console, session)):
                return
    except (_Stop, KeyboardInterrupt):
        console.say("\nStopped: nothing more was decided.")
        console.say(str(_for_terminal(session.summary())))


def _undo_at_the_end(console: Console, session: ReviewSession) -> bool:
    """The end screen's keys: True once u has brought a card back, False to quit."""
    while True:
        try:
            key = console.key("  [u undo / q quit] > ")
        except (_Stop, KeyboardInterrupt):
            return False  # the review is over: end of input just ends it
        if key == "q":
            return False
        if key != "u":
            console.say("  u undoes the last decision and shows its card again; q quits.")
        elif _undo(console, session):
            return True


def _undo(console: Console, session: ReviewSession) -> bool:
    try:
        session.undo()
    except NpcError as exc:
        console.say(f"  ! {exc}")
        return False
    if session.undone is not None:
        console.say(f"  {_for_terminal(session.undone).undo_line}")
    return True


def _put_back(console: Console, session: ReviewSession) -> bool:
    """List what was decided automatically; True if the reviewer put one back."""
    listed = session.automatic()
    if not listed:
        return False
    console.say("\nDecided automatically since the last review:")
    for number, entry in enumerate(listed, start=1):
        done = f" [put back as card {entry['requeued_as']}]" if entry.get("requeued_as") else ""
        line = (
            f"  {number}: {entry['proposed_text']} ({entry['outcome']}: "
            f"{entry['memory_text']!r}, {entry['matcher']}){done}"
        )
        console.say(str(_for_terminal(line)))
    choice = console.line("  number to put back as its own card (empty ends): ").strip()
    if not choice:
        return False
    try:
        session.requeue(_number(choice))
    except NpcError as exc:
        console.say(f"  ! {exc}")
    return True


def _number(text: str) -> int:
    if not text.isdigit():
        raise NpcError(f"{text!r} is not a number from the list.")
    return int(text)


def _decide(console: Console, session: ReviewSession, shown: str) -> None:
    """Read one key for the card ``shown`` and apply it, to that card only: on a shared
    store another kernel may decide it while the reviewer is still reading."""
    key = console.key("  [a/r/e/s/d/u/1-9/x/?/q] > ")
    try:
        if key == "q":
            raise _Stop
        if key == "?":
            console.say(f"  {HELP}")
        elif key == "u":
            _undo(console, session)
        elif key.isdigit():
            with session.lock:
                if _still_shown(console, session, shown):
                    session.approve_wording(int(key))
        elif key == "x":
            number = console.line("  split off which wording (number, empty cancels): ")
            with session.lock:
                if number.strip() and _still_shown(console, session, shown):
                    new_card = session.split(_number(number.strip()))
                    console.say(f"  split off as its own card {new_card}, later in this review")
        elif key not in _DECISIONS:
            console.say(f"  Unknown key {key!r}. {HELP}")
        elif (extra := _ask(console, _DECISIONS[key], session.card_text())) is not None:
            with session.lock:
                if _still_shown(console, session, shown):
                    session.decide(_DECISIONS[key], **extra)
    except NpcError as exc:
        console.say(f"  ! {exc}")


def _still_shown(console: Console, session: ReviewSession, shown: str) -> bool:
    """Whether ``shown`` is still the current card; if not, say why nothing was done."""
    if session.current == shown:
        return True
    why = session.elsewhere or "That card is no longer in the queue."
    console.say(str(_for_terminal(f"  ! {why} Nothing done; here is the next card.")))
    return False


def _ask(console: Console, decision: str, card_text: str) -> dict[str, Any] | None:
    """What a decision needs beyond the key; None cancels it."""
    if decision == "edit":
        text = console.edited(card_text)
        return {"text": text} if text is not None else None
    if decision == "reject":
        reason = console.line("  reason (optional): ").strip()
        return {"reason": reason or None}
    if decision == "defer":
        until = console.line("  until (YYYY-MM-DD, empty = tomorrow): ").strip()
        return {"until": until} if until else {}
    return {}


def _for_terminal(value: Any) -> Any:
    """A copy of a record (Card, Summary, DecisionResult) with every text in it escaped.

    Escaping each value before the record lays itself out keeps a newline inside a
    memory on that memory's line (shown as ``\\n``) instead of breaking the layout.
    """
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, tuple):
        return tuple(_for_terminal(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [field.name for field in dataclasses.fields(value) if field.init]
        return dataclasses.replace(
            value, **{name: _for_terminal(getattr(value, name)) for name in fields}
        )
    return value


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
