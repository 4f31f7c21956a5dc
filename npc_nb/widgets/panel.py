"""The review panel: ipywidgets showing one card at a time, decisions on buttons and keys.

A thin view over ``ReviewSession``: every button, key and edit calls one session method,
which writes to the store at once; the panel then re-renders from the session. Keys come
from ``KeyBridge`` (anywidget) as messages, each naming the card it was pressed on, so a
key meant for a card that is already gone does nothing. While a decision is in flight
the buttons are disabled here and further clicks/keys are dropped in the browser. Errors
are rendered into the panel (``print`` from a callback is invisible in JupyterLab).
Beside the panel a static summary is displayed and kept current; the panel's CSS hides
it while the panel is live, so a saved notebook shows it once the kernel is gone.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from datetime import date, timedelta
from html import escape
from typing import Any

import ipywidgets as w
from IPython.display import DisplayHandle, display

from ..errors import NpcError
from ..review_session import ReviewSession
from .cards import (
    card_html,
    help_html,
    preview_html,
    static_summary_html,
    summary_html,
    tally_html,
)
from .keys import KeyBridge

__all__ = ["ReviewPanel"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# (key, decision button label); the key is shown on the button.
BUTTONS = (
    ("a", "Approve", "success"),
    ("r", "Reject", "danger"),
    ("e", "Edit", "info"),
    ("s", "Skip", ""),
    ("d", "Defer", "warning"),
    ("u", "Undo", ""),
    ("?", "Help", ""),
)
HINT = (
    "Click the panel, then keys: a approve · r reject · e edit · s skip · d defer · u undo · ? help"
)


class ReviewPanel:
    """The review panel over one ``ReviewSession``; display it in a notebook cell."""

    def __init__(self, session: ReviewSession) -> None:
        self.session = session
        self._busy = False
        self._preview: Any = None
        self._static: DisplayHandle | None = None
        self.keys = KeyBridge(hint=HINT)
        self.keys.on_msg(self._on_message)
        self._build()
        self._refresh()

    # -- building ------------------------------------------------------------------------

    def _build(self) -> None:
        self.position = w.HTML()
        self.progress = w.IntProgress(min=0, layout=w.Layout(width="100%"))
        self.tally = w.HTML()
        self.card = w.HTML()
        self.edit_box = w.Textarea(layout=w.Layout(width="100%", height="5em"))
        self.save_edit = self._button("Approve edit (Ctrl+Enter)", "success", self._submit_edit)
        self.cancel_edit = self._button("Cancel edit (Esc)", "", self._cancel_edit)
        self.editor = w.VBox(
            [self.edit_box, w.HBox([self.save_edit, self.cancel_edit])],
            layout=w.Layout(display="none"),
        )
        self.editor.add_class("npc-edit")
        self.reason = w.Text(placeholder="reason for rejecting (optional)")
        self.defer_until = w.DatePicker(
            value=date.today() + timedelta(days=1), description="defer until"
        )
        self.buttons = {
            key: self._button(f"{label} ({key})", style, self._key_action(key))
            for key, label, style in BUTTONS
        }
        self.approve_all = self._button("Approve all…", "", self._ask_approve_all)
        self.confirm_all = self._button("Confirm approve all", "success", self._confirm_all)
        self.cancel_all = self._button("Cancel", "", self._cancel_approve_all)
        self.preview = w.HTML()
        self.confirm_box = w.VBox(
            [self.preview, w.HBox([self.confirm_all, self.cancel_all])],
            layout=w.Layout(display="none"),
        )
        self.help = w.HTML(help_html(), layout=w.Layout(display="none"))
        self.status = w.HTML()
        self.widget = w.VBox(
            [
                self.keys,
                w.HBox([self.position, self.tally]),
                self.progress,
                self.card,
                self.editor,
                w.HBox([self.reason, self.defer_until]),
                w.HBox([*self.buttons.values(), self.approve_all]),
                self.confirm_box,
                self.help,
                self.status,
            ]
        )
        self.widget.add_class("npc-review-panel")

    def _button(self, description: str, style: str, action: Callable[[], str | None]) -> w.Button:
        button = w.Button(description=description, button_style=style)
        button.layout.width = "auto"
        button.add_class("npc-decision")
        button.on_click(lambda _: self._run(action))
        return button

    # -- display -------------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        summary = self.session.summary()
        display(
            {WIDGET_VIEW: _view(self.widget), "text/plain": f"npc_nb review panel: {summary}"},
            raw=True,
        )
        self._static = display(_static_bundle(summary), raw=True, display_id=True)

    # -- messages from the keyboard front end ----------------------------------------------

    def _on_message(self, _: Any, content: dict[str, Any], buffers: Any) -> None:
        kind = content.get("type")
        if kind == "submit_edit":
            self._run(lambda: self._submit_edit(content.get("text")))
        elif kind == "cancel_edit":
            self._run(self._cancel_edit)
        elif kind == "key":
            self._on_key(str(content.get("key", "")), content.get("card"))
        else:
            self._run(lambda: _raise(f"Unknown message from the panel's front end: {content!r}"))

    def _on_key(self, key: str, card: Any) -> None:
        if key not in self.buttons:
            self._run(lambda: _raise(f"Unknown key {key!r}. {HINT}"))
            return
        stale = card and card != (self.session.current or "") and key in "arsde"
        if stale:
            self._run(lambda: "That key was pressed on a card already decided; nothing done.")
            return
        self._run(self._key_action(key))

    # -- actions -------------------------------------------------------------------------

    def _key_action(self, key: str) -> Callable[[], str | None]:
        return {
            "a": lambda: self._decide("approve"),
            "r": self._reject,
            "e": self._start_edit,
            "s": lambda: self._decide("skip"),
            "d": self._defer,
            "u": self._undo,
            "?": self._toggle_help,
        }[key]

    def _run(self, action: Callable[[], str | None]) -> None:
        """Run one action with the buttons disabled; show its result or error in the panel."""
        if self._busy:
            return
        self._busy = True
        self._set_enabled(False)
        try:
            message = action()
            self.status.value = escape(message, quote=False) if message else ""
        except NpcError as exc:
            self.status.value = f'<div class="npc-error">{escape(str(exc), quote=False)}</div>'
        except Exception as exc:  # shown, not swallowed: the traceback goes into the panel
            self.status.value = (
                f'<div class="npc-error">Unexpected error: {escape(repr(exc))}'
                f"<details><summary>traceback</summary><pre>"
                f"{escape(traceback.format_exc())}</pre></details></div>"
            )
        finally:
            self._busy = False
            self._refresh()

    def _decide(self, decision: str, **extra: Any) -> str:
        text = self.session.card_text()
        self.session.decide(decision, **extra)
        return f"{decision}: {text}"

    def _reject(self) -> str:
        message = self._decide("reject", reason=self.reason.value.strip() or None)
        self.reason.value = ""
        return message

    def _defer(self) -> str:
        return self._decide("defer", until=self.defer_until.value)

    def _start_edit(self) -> str | None:
        if self.session.current is None:
            return "Nothing to edit: the review is finished."
        self.edit_box.value = self.session.card_text()
        self.editor.layout.display = "flex"
        self.keys.focus_edit += 1
        return "Editing: Ctrl/Cmd+Enter approves the new text, Esc cancels."

    def _submit_edit(self, text: Any = None) -> str:
        new_text = self.edit_box.value if text is None else str(text)
        message = self._decide("edit", text=new_text)
        self._close_editor()
        return message

    def _cancel_edit(self) -> str:
        self._close_editor()
        return "Edit cancelled; nothing changed."

    def _close_editor(self) -> None:
        self.editor.layout.display = "none"
        self.edit_box.value = ""
        self.keys.focus_panel += 1

    def _undo(self) -> str:
        self._close_editor()
        return str(self.session.undo())

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
        preview, self._preview = self._preview, None
        self.confirm_box.layout.display = "none"
        result = self.session.approve_previewed(preview)
        return f"Approved {len(result.memory_ids)} candidate(s) as one batch; u undoes it."

    def _cancel_approve_all(self) -> str:
        self._preview = None
        self.confirm_box.layout.display = "none"
        return "Approve all cancelled; nothing changed."

    # -- rendering -----------------------------------------------------------------------

    def _refresh(self) -> None:
        summary = self.session.summary()
        card = self.session.card()
        # The keyboard learns the new card (and stops being busy) before the card is
        # drawn, so a key pressed on the new card is never taken for the old one.
        with self.keys.hold_sync():
            self.keys.card_id = card.memory_id if card else ""
            self.keys.revision += 1
        self._set_enabled(True)
        total = summary.decided + summary.remaining
        self.progress.max = max(total, 1)
        self.progress.value = summary.decided
        self.tally.value = tally_html(summary)
        if card is None:
            self.position.value = "<b>Review finished</b>"
            self.card.value = summary_html(summary)
        else:
            self.position.value = f"<b>Card {card.position} of {card.total}</b>&nbsp;·&nbsp;"
            self.card.value = card_html(card)
        if self._static is not None:
            self._static.update(_static_bundle(summary), raw=True)

    def _set_enabled(self, enabled: bool) -> None:
        open_card = self.session.current is not None
        for key, button in self.buttons.items():
            button.disabled = not enabled or (key in "arsde" and not open_card)
        for button in (self.save_edit, self.cancel_edit, self.confirm_all, self.cancel_all):
            button.disabled = not enabled
        self.approve_all.disabled = not enabled or not open_card


def _view(widget: w.Widget) -> dict[str, Any]:
    return {"version_major": 2, "version_minor": 0, "model_id": widget.model_id}


def _static_bundle(summary: Any) -> dict[str, str]:
    return {"text/html": static_summary_html(summary), "text/plain": str(summary)}


def _raise(message: str) -> None:
    raise NpcError(message)
