"""The terminal ``npc-nb`` talks to: single keys, lines of text, and output made safe.

Typed text never turns into keys, the rule the review's decisions rest on:

- A key is read from the terminal itself, in cbreak mode, which is entered anew for
  every key and flushes what was typed before the prompt was shown: a key acts only on
  what is on the screen when it is pressed. The key is read from the descriptor, not
  through the stream, whose buffer would keep the rest of a paste for the next key.
- A key prompt acts on exactly one key. What arrives at once as more than one (text
  typed on or pasted, an arrow key's escape sequence) is refused as a whole, and the
  prompt is shown again: nothing acts on any of its characters.
- A prompt for text (``answer``) asks again after refusing an answer, until one is
  accepted or cancelled; the terminal stays in line mode meanwhile, so whatever the
  user types next, even typed ahead of the new prompt, is still an answer.

From a pipe or a file each line is one key or one answer, so the same rules make a
scripted session stay in step. Everything written passes through ``terminal_text``:
text that came from a model shows an escape sequence or bidi override, never obeys it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, TypeVar

from .._foundations.markup import terminal_text
from ..errors import NpcError

__all__ = ["Console", "Stop"]

T = TypeVar("T")


class Stop(Exception):
    """End of input, Ctrl-C or q: stop."""


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
        """One key, in lower case ("" for an empty line from a pipe). More than one key
        at once (text typed on or pasted, an arrow key's escape sequence) acts on
        nothing: it is refused and the prompt is shown again."""
        while True:
            typed = self._pressed(prompt) if self.interactive else self._key_line(prompt)
            if len(typed) <= 1:
                return typed.lower()
            self.say(f"  ! {typed!r} is not one key: nothing done. Press a single key.")

    def _pressed(self, prompt: str) -> str:
        """What one key press sent, read from the terminal itself. Keys typed before the
        prompt is shown are dropped (entering cbreak mode flushes them): a key acts only
        on what is on the screen when it is pressed. Reading the descriptor, not the
        stream, leaves no rest of a paste in a buffer for the next key to find."""
        with _cbreak(self.stdin):
            self.write(prompt)
            sent = os.read(self.stdin.fileno(), 256)
        typed = sent.decode(getattr(self.stdin, "encoding", None) or "utf-8", "replace")
        self.say(typed)
        if not typed or typed == "\x04":
            raise Stop
        return typed

    def _key_line(self, prompt: str) -> str:
        self.write(prompt)
        line = self.stdin.readline()
        if not line:
            raise Stop
        self.say(line.strip())
        return line.strip()

    def line(self, prompt: str) -> str:
        """One line of text (without its line break); on a terminal, in its own line
        editing (canonical) mode, so lines typed ahead wait their turn."""
        self.write(prompt)
        line = self.stdin.readline()
        if not line:
            raise Stop
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
            raise Stop from None
        finally:
            readline.set_pre_input_hook()

    def answer(
        self, prompt: str, read: Callable[[str], T], *, cancel: tuple[str, ...] = ("-",)
    ) -> T | None:
        """Ask ``prompt`` until ``read`` accepts the answer (stripped), returning what
        ``read`` made of it; None when the answer is one of ``cancel``. A refusal
        (``read`` raising an ``NpcError``) is said and the same prompt comes again."""
        while True:
            typed = self.line(prompt).strip()
            if typed in cancel:
                return None
            try:
                return read(typed)
            except NpcError as exc:
                self.say(f"  ! {exc}")


@contextlib.contextmanager
def _cbreak(stream: IO[str]) -> Iterator[None]:
    """Single keys on ``stream``'s terminal while the block runs; entering flushes what
    was typed before (TCSAFLUSH), leaving keeps what is typed after (TCSADRAIN)."""
    import termios
    import tty

    descriptor = stream.fileno()
    saved = termios.tcgetattr(descriptor)
    try:
        tty.setcbreak(descriptor, termios.TCSAFLUSH)
        yield
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)
