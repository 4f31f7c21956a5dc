"""The keyboard bridge: a tiny anywidget whose front end owns the panel's keys.

Its JS (``widgets/review_keys.js``) sends ``{"type": "key", "key": "a", "card": id}``,
``{"type": "submit_edit", "text": ...}`` and ``{"type": "cancel_edit"}``; Python answers
by bumping ``revision`` once the message is handled, which ends the front end's busy
state. Its CSS styles the whole panel.
"""

from __future__ import annotations

import anywidget
import traitlets

from .assets import frontend_file

__all__ = ["KeyBridge"]


class KeyBridge(anywidget.AnyWidget):
    """Forwards single keys from the browser; focuses the edit box on request."""

    _esm = frontend_file("review_keys.js")
    _css = frontend_file("review_panel.css")

    card_id = traitlets.Unicode("").tag(sync=True)
    hint = traitlets.Unicode("").tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)
    focus_edit = traitlets.Int(0).tag(sync=True)
    focus_panel = traitlets.Int(0).tag(sync=True)
