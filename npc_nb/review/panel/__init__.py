"""The review panel: ipywidgets over ``ReviewSession``, with an anywidget keyboard.

The only package that imports ipywidgets or anywidget. ``Project.review()`` and
``%npc_review`` build a ``ReviewPanel``.
"""

from __future__ import annotations

from .panel import ReviewPanel

__all__ = ["ReviewPanel"]
