"""``npc-nb review``: reviewing candidates from a terminal.

The same decisions and single keys as the review panel (a approve, r reject, e edit,
s skip, d defer, u undo, ? help, q quit), for people outside Jupyter. With
``--adjudicate`` it reviews the disagreements of independent review, each card's votes
listed side by side: a number decides as that vote says. With ``--audit NAME`` it
reviews that audit's sampled cards, blind: the sample's progress is said, never a tally
or the errors, and once the sample is complete the reviewer is sent to audit.result().
On a terminal a key acts at once and an edit starts from the current text; from a pipe
or a file each line is one key (and the text an edit, reason or date asks for), so a review can be
scripted. After the last card the summary is shown and u can still undo; q quits. End
of input or Ctrl-C stops the review: nothing is decided that was not explicitly decided.

Typed text never turns into keys (``console``): a prompt for a date, an edit or a
wording's number asks again after a refused answer, and a key prompt acts on one key
only, never on the characters of text typed or pasted there.

Everything printed passes through ``terminal_text``: a candidate's text comes from a
model, so an escape sequence or bidi override in it is shown, never obeyed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._foundations.markup import terminal_text
from ..decisions import Approve, CardDecision, Defer, Edit, Reject, Skip
from ..errors import DecisionError, NpcError
from .console import Console, Stop

if TYPE_CHECKING:
    from ..review import Card, ReviewSession

__all__ = ["ADJUDICATION_HELP", "HELP", "review_session"]

HELP = (
    "a approve · r reject · e edit then approve · s skip · d defer · u undo · 1-9 approve "
    "that wording · x split a wording off · ? help · q quit"
)
ADJUDICATION_HELP = (
    "1-9 decide as that vote says · a approve · r reject · e edit then approve · d defer "
    "(each final) · s skip · u undo · ? help · q quit"
)
_DECISIONS: dict[str, type[CardDecision]] = {
    "a": Approve,
    "r": Reject,
    "e": Edit,
    "s": Skip,
    "d": Defer,
}
DEFER_PROMPT = "  until (empty = tomorrow; next week, +3d, +12h, friday, YYYY-MM-DD; - cancels) > "


def review_session(session: ReviewSession, console: Console) -> None:
    """Show each waiting candidate and apply the key pressed. At the end, show the
    summary and wait: u undoes the last decision (its card comes back), q quits."""
    audit = session.audit_progress() if session.remaining else None
    if audit is not None:  # blind: the sample's progress, never a tally
        console.say(str(_for_terminal(f"{audit} {session.remaining} waiting for you. {HELP}")))
    elif session.remaining and session.adjudicate:
        console.say(f"{session.remaining} card(s) waiting for adjudication. {ADJUDICATION_HELP}")
    elif session.remaining:
        console.say(f"{session.remaining} candidate(s) waiting. {HELP}")
    if session.remaining:
        console.say(session.recording)
    if account := session.unnamed_reviewer:
        console.say(
            f"Decisions are recorded as {account}, a shared account that names nobody: "
            "pass --by NAME, or set NPC_NB_REVIEWER=NAME."
        )
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
    except (Stop, KeyboardInterrupt):
        console.say("\nStopped: nothing more was decided.")
        console.say(str(_for_terminal(session.summary())))


def _undo_at_the_end(console: Console, session: ReviewSession) -> bool:
    """The end screen's keys: True once u has brought a card back, False to quit."""
    while True:
        try:
            key = console.key("  [u undo / q quit] > ")
        except (Stop, KeyboardInterrupt):
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
    from ..review import automatic_target  # the review is loaded by now

    console.say("\nDecided automatically since the last review:")
    for number, entry in enumerate(listed, start=1):
        done = " [put back as its own card]" if entry.get("requeued_as") else ""
        line = (
            f"  {number}: {entry['proposed_text']} ({automatic_target(entry)}; "
            f"{entry['matcher']}){done}"
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
    if not text.isdecimal():  # int() reads every decimal digit, not every digit
        raise DecisionError(f"{text!r} is not a number from the list.")
    return int(text)


def _decide(console: Console, session: ReviewSession, shown: str) -> None:
    """Read one key for the card ``shown`` and apply it, to that card only: on a shared
    store another kernel may decide it while the reviewer is still reading."""
    key = console.key("  [a/r/e/s/d/u/1-9/x/?/q] > ")
    try:
        if key == "q":
            raise Stop
        if key == "?":
            console.say(f"  {ADJUDICATION_HELP if session.adjudicate else HELP}")
        elif key == "u":
            _undo(console, session)
        elif key.isdecimal() and session.adjudicate:
            _on_card(console, session, shown, lambda: session.adjudicate_vote(int(key)))
        elif key.isdecimal():
            _on_card(console, session, shown, lambda: session.approve_wording(int(key)))
        elif key == "x":
            _split(console, session, shown)
        elif key not in _DECISIONS:
            console.say(f"  Unknown key {key!r}. {HELP}")
        else:
            _decide_card(console, session, shown, _DECISIONS[key])
    except NpcError as exc:
        console.say(f"  ! {exc}")


def _decide_card(
    console: Console, session: ReviewSession, shown: str, kind: type[CardDecision]
) -> None:
    """Ask what a ``kind`` decision needs (a date, a text, a reason), then decide the card."""
    extra = _ask(console, session, kind)
    if extra is None:
        return  # cancelled: nothing decided
    decision = kind(shown, **extra)
    decided = _on_card(console, session, shown, lambda: session.decide(decision))
    if decided and "until" in extra:  # say the day a relative date ("friday") came to
        console.say(f"  deferred until {extra['until'].astimezone():%a %Y-%m-%d %H:%M}")


def _on_card(console: Console, session: ReviewSession, shown: str, act: Callable[[], Any]) -> bool:
    """Run ``act`` if ``shown`` is still the current card (True), else say why not."""
    with session.lock:
        if not _still_shown(console, session, shown):
            return False
        act()
        return True


def _split(console: Console, session: ReviewSession, shown: str) -> None:
    """x: ask which wording to split off (again while the answer is refused), then do it."""
    card = session.card()
    if card is None or not card.variants:
        console.say("  Nothing to split: this card has one wording.")
        return
    prompt = f"  split off which wording (2-{len(card.wordings)}, empty cancels) > "
    number = console.answer(prompt, lambda typed: _wording(typed, card), cancel=("", "-"))
    if number is None:
        return
    from ..review import card_name  # the review is loaded by now

    with session.lock:
        if _still_shown(console, session, shown):
            session.split(number)
            split = card_name(card.wordings[number - 1])
            console.say(f"  split off as its own card {split}, later in this review")


def _wording(typed: str, card: Card) -> int:
    """The number of a wording that can be split off ``card``: 2 and up."""
    last = len(card.wordings)
    if not typed.isdecimal() or not 2 <= int(typed) <= last:
        raise DecisionError(
            f"{typed!r} is not a wording to split off: type a number from 2 to {last} "
            "(1 is the card's own wording), or an empty line to cancel."
        )
    return int(typed)


def _still_shown(console: Console, session: ReviewSession, shown: str) -> bool:
    """Whether ``shown`` is still the current card; if not, say why nothing was done."""
    if session.current == shown:
        return True
    why = session.elsewhere or "That card is no longer in the queue."
    console.say(str(_for_terminal(f"  ! {why} Nothing done; here is the next card.")))
    return False


def _ask(
    console: Console, session: ReviewSession, kind: type[CardDecision]
) -> dict[str, Any] | None:
    """What a decision needs beyond the key; None cancels it. A refused answer is asked
    for again at the same prompt (``Console.answer``)."""
    if kind is Edit:
        text = _edited(console, session)
        return {"text": text} if text is not None else None
    if kind is Reject:
        reason = console.line("  reason (optional): ").strip()
        return {"reason": reason or None}
    if kind is Defer:
        until = console.answer(DEFER_PROMPT, session.defer_time)
        return {"until": until} if until is not None else None
    return {}


def _edited(console: Console, session: ReviewSession) -> str | None:
    """The edit's new text; a refused one is offered again to fix (None cancels)."""
    text = session.card_text()
    while (new := console.edited(text)) is not None:
        try:
            return session.edit_text(new)
        except NpcError as exc:
            console.say(f"  ! {exc}")
            text = new
    return None


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
