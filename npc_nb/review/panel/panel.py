"""The review panel: ipywidgets showing one card at a time, decisions on buttons and keys.

A thin view over ``ReviewSession``: every key, button and edit runs one session method,
which writes to the store at once; the panel then re-renders from the session. In the
browser every decision, by key or click, reaches Python through ``KeyBridge`` as one
message naming the card on screen, so a decision meant for a card that is already gone
does nothing; until Python answers, the front end drops further decisions (a double
click is one decision). The answer is one update that draws the next card and frees
the keyboard together. A card another kernel decides leaves the panel at once: the
session hears it on the store's listener thread and the panel redraws from there,
saying who decided it (ipykernel sends widget updates from any thread); the session's
lock keeps that redraw and a key press from interleaving. Errors are rendered into the
panel (``print`` from a callback is invisible in JupyterLab). Beside the panel a static
summary is displayed and kept current; hidden while the panel is live, it is what a
saved notebook shows once the kernel is gone, the one story the cell tells there: the
panel's own output carries nothing else, and the summary's style hides JupyterLab's
"model not found" in its place (``cards.static_summary_html``).
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as w
import traitlets
from IPython.display import DisplayHandle, display

from ...decisions import Approve, CardDecision, Defer, Edit, Reject, Skip
from ...errors import DecisionError, NpcError
from ...store import in_background
from .. import ReviewSession, Summary, card_name
from .cards import (
    automatic_html,
    card_html,
    error_html,
    help_html,
    preview_html,
    recording_html,
    reviewer_note_html,
    static_summary_html,
    static_summary_text,
    summary_html,
    tally_html,
)
from .keys import KeyBridge

__all__ = ["ReviewPanel"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# (key, label, button style): the key is shown on its button.
BUTTONS = (
    ("a", "Approve", "success"),
    ("r", "Reject", "danger"),
    ("e", "Edit", "info"),
    ("s", "Skip", ""),
    ("d", "Defer", "warning"),
    ("u", "Undo", ""),
    ("?", "Help", ""),
)
#: From this many memories in the stores, the panel opens without waiting for their
#: neighbour index (a few tenths of a second to load at 100,000) and loads it behind.
BACKGROUND_INDEX_AT = 20_000
#: A reviewer reading a card for this long (seconds) gets the next one read ahead.
LOOK_AHEAD_AFTER = 0.05
#: Keys that decide the card on screen (not undo or help).
CARD_KEYS = frozenset("arsde")
#: On a card: approve that wording (after x: split it off). At the end: put back that
#: automatic outcome as its own card.
NUMBER_KEYS = frozenset("123456789")
SPLIT_KEY = "x"
HINT = (
    "Click the panel, then keys: a approve · r reject · e edit · s skip · d defer · u undo"
    " · 1-9 wording · x split · ? help · Esc back to the notebook"
)


class ReviewPanel:
    """The review panel over one ``ReviewSession``; display it in a notebook cell."""

    def __init__(self, session: ReviewSession) -> None:
        self.session = session
        self._busy = False
        self._preview: Any = None
        self._editing: str | None = None  # the card the edit box was opened on
        self._shown: str | None = None  # the card drawn last
        self._hint = HINT  # the key line above the card
        self._splitting: str | None = None  # the card x was pressed on
        self._static: list[DisplayHandle] = []
        self._shared: tuple[w.ButtonStyle, w.Layout] | None = None  # see ``_button``
        self._ahead_lock = threading.Lock()  # see ``_look_ahead``
        self._ahead: str | None = None  # "running", or "again" when asked meanwhile
        # A large store's neighbour index loads behind the panel: the first cards come
        # without their nearest memories until it is in, then the card is redrawn.
        session.nearest_later = self._index_is_slow()
        # The first card is read before any widget exists: in a notebook every widget is
        # a message the browser starts drawing at once, which would slow the read.
        session.card()
        self.keys = KeyBridge(hint=HINT)
        self.keys.on_msg(self._on_message)
        self._build()
        self._render("")
        session.watch(self._decided_elsewhere)
        # Only now: a thread at work while a kernel sends the widgets' messages slows
        # every one of them (they take turns at Python's lock).
        self._index_loader = self._load_behind() if session.nearest_later else None

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        self.position = w.HTML()
        self.tally = w.HTML()
        self.progress = w.IntProgress(min=0, layout=w.Layout(width="auto"))  # see edit_box
        self._build_editor()
        self._build_controls()
        self.inputs = w.HBox([self.reason, self.defer_until])
        self._build_confirm()
        self.help = w.HTML(help_html(), layout=w.Layout(display="none"))
        self.status = w.HTML()
        note = reviewer_note_html(self.session.unnamed_reviewer)
        self.reviewer_note = w.HTML(note, layout=w.Layout(display=None if note else "none"))
        self.recording = w.HTML(recording_html(self.session.recording))
        self.widget = w.VBox(
            [
                self.reviewer_note,
                self.recording,
                w.HBox([self.position, self.tally]),
                self.progress,
                self.keys,
                self.editor,
                self.inputs,
                # Wrapped, never cut short, in a narrow notebook (both side bars open).
                w.HBox(
                    [*self.buttons.values(), self.approve_all],
                    layout=w.Layout(flex_flow="row wrap"),
                ),
                self.confirm_box,
                self.help,
                self.status,
            ]
        )
        self.widget.add_class("npc-review-panel")
        # The buttons the browser names in {"type": "button"} messages.
        self._by_name = {
            "approve_all": self.approve_all,
            "confirm_all": self.confirm_all,
            "cancel_all": self.cancel_all,
            "cancel_edit": self.cancel_edit,
        }

    def _build_editor(self) -> None:
        # "auto" in the flex column: the full width less its margins ("100%" plus the
        # margins overflowed the panel by 4px, a horizontal scrollbar).
        self.edit_box = w.Textarea(layout=w.Layout(width="auto", height="5em"))
        self.save_edit = self._button(
            "Approve edit (Ctrl+Enter)", "success", "npc-button-save_edit", self._submit_edit
        )
        self.cancel_edit = self._button(
            "Cancel edit (Esc)", "", "npc-button-cancel_edit", self._cancel_edit
        )
        self.editor = w.VBox(
            [self.edit_box, w.HBox([self.save_edit, self.cancel_edit])],
            layout=w.Layout(display="none"),
        )
        self.editor.add_class("npc-edit")

    def _build_controls(self) -> None:
        self.reason = w.Text(placeholder="reason for rejecting (optional)")
        # Typed, not picked: the same forms as the terminal's (session.defer_time).
        self.defer_until = _DeferBox(
            placeholder="tomorrow · next week · +3d · friday · YYYY-MM-DD",
            description="defer until",
        )
        # The deciding buttons are shown and hidden together: one layout for them all.
        deciding = w.Layout(width="auto")
        self.buttons = {
            key: self._button(
                f"{label} ({key})",
                style,
                f"npc-key-{key}",
                self._key_action(key),
                layout=deciding if key in CARD_KEYS else self._own_layout(key),
            )
            for key, label, style in BUTTONS
        }
        # Never shown in an audit's review: its rest is approved by audit.approve_rest().
        hidden = w.Layout(display="none") if self.session.audit is not None else deciding
        self.approve_all = self._button(
            "Approve all…", "", "npc-button-approve_all", self._ask_approve_all, layout=hidden
        )

    def _build_confirm(self) -> None:
        self.preview = w.HTML()
        self.confirm_all = self._button(
            "Confirm approve all", "success", "npc-button-confirm_all", self._confirm_all
        )
        self.cancel_all = self._button(
            "Cancel", "", "npc-button-cancel_all", self._cancel_approve_all
        )
        self.confirm_box = w.VBox(
            [self.preview, w.HBox([self.confirm_all, self.cancel_all])],
            layout=w.Layout(display="none"),
        )

    def _button(
        self,
        description: str,
        style: str,
        name: str,
        action: Callable[[], str | None],
        *,
        layout: w.Layout | None = None,
    ) -> w.Button:
        """A panel button: in the browser its click is sent by the keyboard front end
        (class ``npc-send`` plus its name); ``on_click`` serves clicks made from Python.

        Buttons share one style, and those shown and hidden together one ``layout``
        (the buttons never hidden share another): each widget is a comm a kernel opens,
        and fewer make the panel open faster."""
        if self._shared is None:
            self._shared = (w.ButtonStyle(), w.Layout(width="auto"))
        button = w.Button(
            description=description,
            button_style=style,
            style=self._shared[0],
            layout=layout or self._shared[1],
        )
        button.add_class("npc-send")
        button.add_class(name)
        button.on_click(lambda _: self._run(action))
        return button

    @staticmethod
    def _own_layout(key: str) -> w.Layout | None:
        """Undo is hidden on its own (at the end, with nothing to undo): its own layout."""
        return w.Layout(width="auto") if key == "u" else None

    def _index_is_slow(self) -> bool:
        """Whether the first card should not wait for the neighbour index: it is not
        loaded yet and the store is large enough for the load to be felt."""
        memory = self.session.memory
        if self.session.current is None or memory.neighbours_loaded():
            return False
        return memory.memories_inserted() >= BACKGROUND_INDEX_AT

    def _load_behind(self) -> threading.Thread:
        loader = threading.Thread(target=self._load_index, name="npc-review-index", daemon=True)
        loader.start()
        return loader

    def _load_index(self) -> None:
        """Load the neighbour index (on the loader thread), then redraw the card with its
        nearest memories. A failure is shown; the next card tries the load again."""
        error = ""
        try:
            self.session.memory.load_neighbours()
        except Exception as exc:  # shown in the panel: nothing else would report it
            error = error_html(
                f"Could not load the store's index of approved memories: {exc!r}",
                traceback.format_exc(),
            )
        with self.session.lock:
            self.session.nearest_later = False
            self._render(self.status.value + error)

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until the card shows its nearest memories: the neighbour index the panel
        loads behind a large store is in (True at once if it was never loading; False if
        ``timeout`` seconds passed first). For scripts and tests; a reviewer just sees
        the card redrawn."""
        if self._index_loader is not None:
            self._index_loader.join(timeout)
        return self._index_loader is None or not self._index_loader.is_alive()

    # -- display -------------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        # The widget, and for a viewer without it (untrusted, nbconvert) nothing: a text
        # of its own would be a second story, frozen when the cell ran. The static
        # output below tells the story, kept current.
        display({WIDGET_VIEW: _view(self.widget), "text/html": ""}, raw=True)
        summary = self.session.summary()
        self._static.append(display(self._static_bundle(summary), raw=True, display_id=True))

    def _static_bundle(self, summary: Summary) -> dict[str, str]:
        html = static_summary_html(summary, self.keys.panel_id)
        return {"text/html": html, "text/plain": static_summary_text(summary)}

    # -- messages from the browser --------------------------------------------------------

    def _on_message(self, _: Any, content: dict[str, Any], buffers: Any) -> None:
        # Checking which card is current and acting on it is one step: a decision heard
        # from another kernel cannot change the card in between.
        with self.session.lock:
            self._handle(content)

    def press(self, key: str) -> None:
        """Press ``key`` on the card on screen, as the panel's front end sends it (``a``,
        ``r``, ``e``, ``s``, ``d``, ``u``, ``?``, ``x``, ``1``-``9``): the panel driven as a
        person drives it where no browser draws it (a script, a notebook run headless)."""
        self._on_message(self.keys, {"type": "key", "key": key, "card": self.keys.card_id}, None)

    def refresh(self) -> None:
        """Re-read the queue and redraw the panel: cards that joined it since it opened
        appear (an audit's next look after ``audit.extend()``, candidates another kernel
        proposed), cards decided elsewhere drop out."""
        self._run(self.session.reload)

    def _handle(self, content: dict[str, Any]) -> None:
        # The card on screen when the reviewer acted ("" when none is shown).
        kind, card = content.get("type"), str(content.get("card") or "")
        if kind == "key":
            self._on_key(str(content.get("key", "")), card)
        elif kind == "button" and content.get("name") in self._by_name:
            self._by_name[content["name"]].click()
        elif kind == "submit_edit":
            self._run(lambda: self._submit_edit(content.get("text"), card))
        elif kind == "cancel_edit":
            self._run(self._cancel_edit)
        else:
            self._run(lambda: _refuse(f"Unknown message from the panel's front end: {content!r}"))

    def _on_key(self, key: str, card: str) -> None:
        if key not in self.buttons and key not in NUMBER_KEYS and key != SPLIT_KEY:
            self._run(lambda: _refuse(f"Unknown key {key!r}. {HINT}"))
        elif (key in CARD_KEYS | NUMBER_KEYS or key == SPLIT_KEY) and card != (
            self.session.current or ""
        ):
            self._run(
                lambda: (
                    "That key was pressed on a card that is no longer the current one; "
                    "nothing done. (Press ? to redraw if the card looks stale.)"
                )
            )
        elif key in NUMBER_KEYS:
            self._run(lambda: self._number(int(key)))
        elif key == SPLIT_KEY:
            self._run(self._toggle_split)
        else:
            self._run(self._key_action(key))

    # -- actions -------------------------------------------------------------------------

    def _key_action(self, key: str) -> Callable[[], str | None]:
        return {
            "a": lambda: self._decide(Approve),
            "r": self._reject,
            "e": self._start_edit,
            "s": lambda: self._decide(Skip),
            "d": self._defer,
            "u": self._undo,
            "?": self._toggle_help,
        }[key]

    def _number(self, number: int) -> str:
        """A number key: approve that wording, split it off (after x), or, when the
        review is finished, put that automatic outcome back as its own card."""
        if self.session.current is None:
            self.session.requeue(number)
            put_back = card_name(self.session.automatic()[number - 1]["proposed_text"])
            return f"Put back as its own card {put_back}: decide it now."
        if self.session.adjudicate:
            result = self.session.adjudicate_vote(number)
            return f"adjudicated as vote {number}: {result.changes[0][2]}"
        card = self.session.card()
        wordings = card.wordings if card is not None else ()
        if self._splitting == self.session.current:
            self._splitting = None
            self.session.split(number)
            split = card_name(wordings[number - 1])
            return f"Split wording {number} off as its own card {split} (later in this review)."
        result = self.session.approve_wording(number)
        which = f" as wording {number}" if number > 1 else ""
        return f"{result.decision}{which}: {wordings[number - 1]}"

    def _toggle_split(self) -> str:
        card = self.session.card()
        if card is None or not card.variants:
            self._splitting = None
            return "Nothing to split: this card has one wording."
        if self._splitting == card.memory_id:
            self._splitting = None
            return "Split cancelled."
        self._splitting = card.memory_id
        return (
            f"Split: press the number (2-{len(card.wordings)}) of the wording that is a "
            "different fact; x cancels."
        )

    def _run(self, action: Callable[[], str | None]) -> None:
        """Run one action, then render; its message or error is shown in the panel."""
        with self.session.lock:
            self._run_locked(action)

    def _run_locked(self, action: Callable[[], str | None]) -> None:
        if self._busy:  # a click from Python while a decision is being written
            self.keys.revision += 1  # still an answer: the browser must never wait forever
            return
        self._busy = True
        status = ""
        try:
            if action not in (self._ask_approve_all, self._confirm_all):
                self._close_preview()  # a preview is only confirmed right after it is shown
            status = escape(action() or "", quote=False)
        except NpcError as exc:
            status = error_html(str(exc))
        except Exception as exc:  # shown, not swallowed: the traceback goes into the panel
            status = error_html(f"Unexpected error: {exc!r}", traceback.format_exc())
        finally:
            self._busy = False
            self._render(status)
            self._look_ahead()

    def _look_ahead(self) -> None:
        """While the reviewer reads the card just drawn, read the next card's nearest
        memories behind the panel (``ReviewSession.look_ahead``), one thread at a time.
        It starts once no key came for ``LOOK_AHEAD_AFTER`` (keys pressed in a burst
        would only wait for it); asked again meanwhile, it waits again."""
        with self._ahead_lock:
            if self._ahead is not None:
                self._ahead = "again"
                return
            self._ahead = "running"
        threading.Thread(target=self._read_ahead, name="npc-review-ahead", daemon=True).start()

    def _read_ahead(self) -> None:
        while True:
            time.sleep(LOOK_AHEAD_AFTER)
            with self._ahead_lock:
                if self._ahead == "again":  # another key came: wait for the reviewer again
                    self._ahead = "running"
                    continue
            # Only a head start: the key that draws that card reads whatever it needs
            # itself, and shows the error if the store still fails then. Behind the
            # keys: a key's store work goes first whenever it waits for the file.
            with contextlib.suppress(Exception), in_background():
                self.session.look_ahead()
            with self._ahead_lock:
                if self._ahead != "again":
                    self._ahead = None
                    return
                self._ahead = "running"

    def _decided_elsewhere(self, message: str) -> None:
        """Another kernel's decision changed the queue: redraw, saying what happened.
        Called on the store's listener thread, holding the session's lock."""
        self._render(escape(message, quote=False))

    def _decide(self, kind: type[CardDecision], **fields: Any) -> str:
        """Apply a ``kind`` decision (with ``fields``) to the card on screen."""
        current = self.session.current
        if current is None:
            raise DecisionError("Nothing left to review: the queue is empty.")
        text = self.session.card_text()
        result = self.session.decide(kind(current, **fields))
        if result.decision in ("vote", "replace_vote"):  # the same whatever it completed
            return f"vote recorded ({kind.action}): {fields.get('text', text)}"
        return f"{result.decision}: {fields.get('text', text)}"

    def _reject(self) -> str:
        return self._decide(Reject, reason=self.reason.value.strip() or None)

    def _defer(self) -> str:
        """Defer to what the box says (empty: tomorrow); a value it cannot read is
        refused in the status line, and the card stays."""
        until = self.session.defer_time(self.defer_until.value)
        done = self._decide(Defer, until=until)
        return f"{done} (until {until.astimezone():%a %Y-%m-%d %H:%M})"

    def _start_edit(self) -> str:
        if self.session.current is None:
            return "Nothing to edit: the review is finished."
        if self._editing == self.session.current:  # already open: keep what was typed
            self.keys.focus_edit += 1
            return "Editing: Ctrl/Cmd+Enter approves the new text, Esc cancels."
        self._editing = self.session.current
        self.edit_box.value = self.session.card_text()
        self.editor.layout.display = "flex"
        self.keys.focus_edit += 1
        return "Editing: Ctrl/Cmd+Enter approves the new text, Esc cancels."

    def _submit_edit(self, text: Any = None, card: str | None = None) -> str:
        aimed_at = self._editing if card is None else card
        if self._editing is None or aimed_at != self.session.current:
            self._close_editor()
            return "The edit box was for a card that is no longer shown; nothing was saved."
        new_text = self.edit_box.value if text is None else str(text)
        message = self._decide(Edit, text=new_text)
        self._close_editor()
        return message

    def _cancel_edit(self) -> str:
        self._close_editor()
        return "Edit cancelled; nothing changed."

    def _close_editor(self) -> None:
        self._editing = None
        self.editor.layout.display = "none"
        self.edit_box.value = ""

    def _undo(self) -> str:
        self._close_editor()
        result = self.session.undo()
        undone = self.session.undone
        return undone.undo_line if undone is not None else str(result)

    def _toggle_help(self) -> None:
        shown = self.help.layout.display != "none"
        self.help.layout.display = "none" if shown else "block"

    def _ask_approve_all(self) -> str | None:
        self._preview = self.session.preview_all()
        self.preview.value = preview_html(self._preview)
        self.confirm_box.layout.display = "flex" if self._preview.count else "none"
        return None if self._preview.count else "Nothing to approve all: no unflagged candidate."

    def _confirm_all(self) -> str:
        if self._preview is None:
            return "Press Approve all first to see what it would approve."
        preview = self._preview
        self._close_preview()
        result = self.session.approve_previewed(preview)
        return f"Approved {len(result.memory_ids)} candidate(s) as one batch; u undoes it."

    def _cancel_approve_all(self) -> str:
        return "Approve all cancelled; nothing changed."

    def _close_preview(self) -> None:
        self._preview = None
        self.confirm_box.layout.display = "none"

    # -- rendering -----------------------------------------------------------------------

    def _render(self, status: str) -> None:
        """Redraw from the session. The card, its id and the new revision go to the
        browser in one update, after everything else, so the keyboard is freed exactly
        when the card it will act on is on screen."""
        # Until a card is drawn none is on screen, so no key can act on one unseen.
        html, card_id = "<i>The next card could not be drawn. Press ? to try again.</i>", ""
        try:
            html, card_id = self._redraw(), self.session.current or ""
        except Exception as exc:  # a failing store read must not leave the panel stuck
            status += error_html(f"Could not draw the next card: {exc!r}", traceback.format_exc())
        finally:
            self.status.value = status
            with self.keys.hold_sync():
                self.keys.hint = self._hint
                self.keys.card_html = html
                self.keys.card_id = card_id
                self.keys.revision += 1

    def _redraw(self) -> str:
        summary = self.session.summary()
        card = self.session.card()
        current = card.memory_id if card else None
        if current != self._shown:  # a new card: nothing typed for the last one carries over
            self._shown = current
            self._splitting = None
            self.reason.value = ""
            if self._editing is not None:
                self._close_editor()
        done, total = _progress(summary)
        self.progress.max = max(total, 1)
        self.progress.value = done
        self.progress.layout.display = "none" if summary.empty else None
        self.tally.value = "" if summary.empty else tally_html(summary)
        self._show_controls(card is not None)
        for handle in self._static:
            handle.update(self._static_bundle(summary), raw=True)
        self._hint = HINT if card is not None else self._end_hint()
        if card is None:
            listed = self.session.automatic()  # none in an audit's review: nothing said
            automatic = automatic_html(listed) if self.session.audit is None else ""
            if self.session.auto_only and not summary.decided:
                self.position.value = "<b>Decided without asking</b>"
                return automatic
            head = "Nothing to review" if summary.empty else "Review finished"
            self.position.value = f"<b>{head}</b>"
            return summary_html(summary) + automatic
        self.position.value = f"<b>Card {card.position} of {card.total}</b>&nbsp;·&nbsp;"
        return card_html(card, splitting=self._splitting == card.memory_id)

    def _end_hint(self) -> str:
        """The keys left when no card is shown ("" when none is)."""
        keys = ["u undo the last decision"] if self.session.undoable else []
        if self.session.automatic():
            keys.append("1-9 put that automatic outcome back as a card")
        if not keys:
            return ""
        return "Click the panel, then keys: " + " · ".join(
            [*keys, "? help", "Esc back to the notebook"]
        )

    def _show_controls(self, on_a_card: bool) -> None:
        """Decision controls only while a card is shown; at the end, undo only if this
        review has something to undo."""
        controls = [*(self.buttons[key] for key in CARD_KEYS), self.approve_all]
        for control in controls:
            control.disabled = not on_a_card
        # Approve-all is one reviewer's batch: none in independent review, nor in an
        # audit's (its rest is approved by audit.approve_rest()).
        batch = self.session.view is None and self.session.audit is None
        self.approve_all.disabled = not on_a_card or not batch
        shown = controls if self.session.audit is None else controls[:-1]
        for box in (*shown, self.inputs):  # the buttons' layout is one: set once
            box.layout.display = None if on_a_card else "none"
        undo = on_a_card or self.session.undoable
        self.buttons["u"].layout.display = None if undo else "none"


def _progress(summary: Summary) -> tuple[int, int]:
    """The progress bar's (value, max): the audit's sample, or this review's cards."""
    if summary.audit is not None:
        return summary.audit.decided, summary.audit.sample
    return summary.decided, summary.decided + summary.remaining


def _view(widget: w.Widget) -> dict[str, Any]:
    return {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}


class _DeferBox(w.Text):
    """The defer box: typed text, and still takes a ``date`` or ``datetime`` set from
    code (as the date picker it replaced did), kept as its ISO text."""

    value = traitlets.CUnicode(help="String value").tag(sync=True)


def _refuse(message: str) -> None:
    raise NpcError(message)
