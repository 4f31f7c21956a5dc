"""Reviewing: one reviewer working through the queue, in a notebook or a terminal.

The one surface the front ends import (the panel, ``npc-nb review``, the facade):
``ReviewSession`` (``session``: the state of one review, its decisions and undo,
composed of ``card_queue``, ``card_reading``, ``deciding``, ``steps``, ``adjudication``
and ``wordings``),
``Card`` and ``Nearest`` (``card``: a card as shown), ``Summary``, ``Decided`` and
``TALLY_KINDS`` (``summary``: the tally and the end screen), ``card_name`` and
``automatic_target`` (``names``: how a review names things, by text and time, never by
id), ``AuditProgress`` and ``check_audit_review`` (``audited``: an audit's sample as a
blind review). Beside them: ``dates`` (the one reader of a typed defer date), ``queue_table``
(``%npc_review --list``) and ``panel/`` (the ipywidgets view, the only importer of
ipywidgets and anywidget, loaded on first use).

A service beside chat, graph and analytics: it may import the memory core, the store's
seam and its notices, and the foundations; never the facade or a front end.
"""

from .audited import AUDIT_COMPLETE, AuditProgress, check_audit_review
from .card import Card, Nearest
from .names import automatic_target, card_name
from .session import ReviewSession
from .summary import TALLY_KINDS, Decided, Summary

__all__ = [
    "AUDIT_COMPLETE",
    "TALLY_KINDS",
    "AuditProgress",
    "Card",
    "Decided",
    "Nearest",
    "ReviewSession",
    "Summary",
    "automatic_target",
    "card_name",
    "check_audit_review",
]
