"""The keyboard bridge: a small anywidget that draws the card and owns keys and clicks.

Its JS (``widgets/review_keys.js``) sends one message per decision, each naming the
card on screen: ``{"type": "key", "key": "a", "card": id}``, ``{"type": "button",
"name": "confirm_all", ...}``, ``{"type": "submit_edit", "text": ...}`` and
``{"type": "cancel_edit"}``. Python answers with one update of ``card_html``,
``card_id`` and ``revision``, which draws the next card and ends the front end's busy
state in the same step. The CSS (``widgets/review_panel.css``) styles the panel.
"""

from __future__ import annotations

import uuid

import anywidget
import traitlets

from .assets import frontend_file

__all__ = ["KeyBridge"]


class KeyBridge(anywidget.AnyWidget):
    """Draws the current card and forwards keys and clicks from the browser."""

    _esm = frontend_file("review_keys.js")
    _css = frontend_file("review_panel.css")

    panel_id = traitlets.Unicode().tag(sync=True)
    card_id = traitlets.Unicode("").tag(sync=True)
    card_html = traitlets.Unicode("").tag(sync=True)
    hint = traitlets.Unicode("").tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)
    focus_edit = traitlets.Int(0).tag(sync=True)

    @traitlets.default("panel_id")
    def _new_panel_id(self) -> str:
        return uuid.uuid4().hex
