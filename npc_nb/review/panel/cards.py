"""HTML for the review panel: the card, the tally, the help, the approve-all preview and
the summary. Pure functions of the session's records; every value is escaped.

The static summary is also the panel's saved fallback: it must read well without the
panel's CSS, in JupyterLab after the kernel is gone, in nbconvert and on GitHub.
"""

from __future__ import annotations

from html import escape

from ..._foundations.results import ApproveAllPreview
from ..._foundations.settings.reviewer import how_to_name_yourself
from .. import TALLY_KINDS, Card, Decided, Summary, automatic_target

__all__ = [
    "KEY_HELP",
    "NEEDS_KERNEL",
    "automatic_html",
    "card_html",
    "error_html",
    "help_html",
    "preview_html",
    "recording_html",
    "reviewer_note_html",
    "static_summary_html",
    "static_summary_text",
    "summary_html",
    "tally_html",
]

KEY_HELP = (
    ("a", "approve"),
    ("r", "reject (reason optional, typed in the box first)"),
    ("e", "edit, then Ctrl/Cmd+Enter approves the edit, Esc cancels"),
    ("s", "skip: stays pending, back of this review"),
    (
        "d",
        "defer until the time typed in the box: empty or tomorrow, next week, +3d, friday, "
        "an ISO date such as 2026-12-31 (refused if it cannot be read or has passed)",
    ),
    ("u", "undo the last decision or approve-all batch"),
    ("1-9", "approve the card with that wording (the model's wording: not an edit)"),
    ("1-9 when adjudicating", "decide as that vote says (final, audited as an adjudication)"),
    ("x", "then 1-9: split that wording off as a card of its own"),
    ("1-9 at the end", "put that automatic outcome back in the queue as its own card"),
    ("?", "show or hide this help"),
)


def card_html(card: Card, *, splitting: bool = False) -> str:
    """One candidate: text, warning, its other wordings, a proposed update beside the
    memory it replaces, facts, evidence in its source, nearest approved."""
    parts = []
    if card.flags:
        parts.append(
            '<div class="npc-card-warning"><b>Warning:</b> flagged '
            f"{escape(', '.join(card.flags))}. Read it as data, not an instruction, "
            "before approving; approve-all never includes it.</div>"
        )
    parts.append(f'<div class="npc-card-text">{escape(card.text)}</div>')
    if card.review_note:
        parts.append(f'<div class="npc-card-votes-note">{escape(card.review_note)}</div>')
    if card.votes:
        parts.append(_votes_html(card))
    if card.variants:
        parts.append(_wordings_html(card, splitting))
    if card.updates:
        parts.append(
            '<div class="npc-card-update"><b>Proposed update:</b> approving it replaces '
            f"{escape(card.replaces)}; undo restores both." + _side_by_side(card) + "</div>"
        )
    if card.differs:
        parts.append(f'<div class="npc-card-differs">{escape(card.differs)}</div>')
    facts = [
        ("category", card.category),
        ("persona", card.who),
        ("scope", card.scope),
        ("confidence", f"{card.confidence:.2f}" if card.confidence is not None else "n/a"),
        ("conversation", card.conversation_name(card.conversation_id)),
        (
            "extracted by",
            "hidden (blind review)" if card.blind else card.extractor_model or "unknown",
        ),
    ]
    parts.append(
        '<div class="npc-card-meta">'
        + " · ".join(f"{name}: <b>{escape(str(value))}</b>" for name, value in facts)
        + "</div>"
    )
    parts.append(_source_html(card))
    parts.append(_nearest_html(card))
    return "".join(parts)


def _wordings_html(card: Card, splitting: bool) -> str:
    """The card's wordings, numbered as their keys."""
    rows = [f"<li><kbd>1</kbd> {escape(card.text)} <small>(shown above)</small></li>"]
    for number, variant in enumerate(card.variants, start=2):
        flagged = f" <b>flagged {escape(', '.join(variant.flags))}</b>" if variant.flags else ""
        rows.append(
            f"<li><kbd>{number}</kbd> {escape(variant.text)} <small>"
            f"({escape(card.proposed(variant))}){flagged}</small></li>"
        )
    how = (
        "<b>Split:</b> press the number of the wording that is a different fact (x cancels)."
        if splitting
        else "Press a number to approve that wording; x then a number splits a wording "
        "that is a different fact into a card of its own."
    )
    return (
        f'<div class="npc-card-wordings">{len(card.wordings)} wordings of this fact, one '
        f'question:<ol style="list-style: none; padding-left: 0.5em">{"".join(rows)}</ol>'
        f"{how}</div>"
    )


def _votes_html(card: Card) -> str:
    """An adjudicator's card: the votes side by side, numbered as their keys."""
    head = "".join(f"<th>{name}</th>" for name in ("key", "reviewer", "vote", "text", "reason"))
    rows = "".join(
        f"<tr><td><kbd>{vote.number}</kbd></td><td>{escape(vote.reviewer)}</td>"
        f"<td><b>{escape(vote.decision)}</b></td><td>{escape(vote.text or '')}</td>"
        f"<td>{escape(vote.reason or '')}</td></tr>"
        for vote in card.votes
    )
    return (
        f'<div class="npc-card-adjudication"><table class="npc-card-compare"><tr>{head}</tr>'
        f"{rows}</table>Press a vote's number to decide as it says, or decide anew "
        "(a, r, e, d): your decision is final.</div>"
    )


def _side_by_side(card: Card) -> str:
    if card.updates_text is None:
        return ""
    return (
        '<table class="npc-card-compare"><tr><th>now</th><th>proposed</th></tr>'
        f"<tr><td>{escape(card.updates_text)}</td><td>{escape(card.text)}</td></tr></table>"
    )


def automatic_html(listed: list[dict]) -> str:
    """What the matcher decided without asking since the last review, numbered as the
    keys that put each back as its own card."""
    if not listed:
        return "<div>Nothing was decided automatically since the last review.</div>"
    rows = []
    for number, entry in enumerate(listed, start=1):
        done = " <b>put back as its own card</b>" if entry.get("requeued_as") else ""
        key = f"<kbd>{number}</kbd> " if number <= 9 else ""
        rows.append(
            f"<li>{key}{escape(str(entry['proposed_text']))} <small>("
            f"{escape(automatic_target(entry))}; {escape(str(entry['matcher']))}, "
            f"score {entry['similarity']:.0f})</small>{done}</li>"
        )
    return (
        '<div class="npc-automatic"><b>Decided automatically since the last review</b> '
        f"({len(listed)}); press its number to put one back in the queue as its own card:"
        f'<ol style="list-style: none; padding-left: 0.5em">{"".join(rows)}</ol></div>'
    )


def _source_html(card: Card) -> str:
    if card.source is None:
        quote = f"\u201c{escape(card.evidence)}\u201d" if card.evidence else "none"
        return f'<div class="npc-card-source">evidence: {quote} (no source message)</div>'
    if card.evidence_at is None:
        note = " (evidence not found in it)" if card.evidence else ""
        body = escape(card.source)
    else:
        start, end = card.evidence_at
        note = ""
        body = (
            escape(card.source[:start])
            + f"<mark>{escape(card.source[start:end])}</mark>"
            + escape(card.source[end:])
        )
    return (
        f'<details class="npc-card-source" open><summary>source message{note}</summary>'
        f'<div style="white-space: pre-wrap">{body}</div></details>'
    )


def _nearest_html(card: Card) -> str:
    if card.nearest_pending:
        return (
            '<div class="npc-card-nearest npc-card-nearest-pending">Looking for similar '
            "approved memories (the store's index is loading)…</div>"
        )
    if not card.nearest:
        return '<div class="npc-card-nearest">No similar approved memory.</div>'
    items = "".join(
        f"<li>{escape(n.text)} <small>({n.similarity:.0f}% similar)</small></li>"
        for n in card.nearest
    )
    return (
        '<div class="npc-card-nearest">Nearest approved memories '
        f"(duplicates? conflicts?):<ul>{items}</ul></div>"
    )


def tally_html(summary: Summary) -> str:
    """The live tally: each kind of decision, and how many cards are left. An audit's
    review shows the sample's progress instead (blind: no count of any kind)."""
    if summary.audit is not None:
        said = escape(str(summary.audit), quote=False)
        return f'<div class="npc-tally npc-audit-progress">{said} · {summary.remaining} to go</div>'
    shown = [kind for kind in TALLY_KINDS if kind != "votes" or summary.tally[kind]]
    counts = " · ".join(summary.counted(kind) for kind in shown)
    return f'<div class="npc-tally">{counts} · {summary.remaining} to go</div>'


def help_html() -> str:
    """The key list the ? key shows."""
    rows = "".join(f"<li><kbd>{escape(key)}</kbd> {escape(what)}</li>" for key, what in KEY_HELP)
    return (
        '<div class="npc-help"><b>Keys</b> (click the panel first so it has focus; '
        f"they never reach the notebook):<ul>{rows}</ul></div>"
    )


def recording_html(recording: str) -> str:
    """The line that says who the panel's decisions are recorded for, and how that was
    determined ("recording as ada (the OS user)"), as data."""
    return f'<div class="npc-review-recording">{escape(recording)}</div>'


def reviewer_note_html(account: str | None) -> str:
    """Above the card when decisions would be recorded under a shared account (root in
    a container): whose name they carry, and how to record yours; "" otherwise."""
    if account is None:
        return ""
    return (
        f'<div class="npc-review-note">Decisions are recorded as <b>{escape(account)}</b>, '
        "a shared account that names nobody. To record your name: "
        f"{escape(how_to_name_yourself())}, or <code>%npc_review --by ada</code> for "
        "this review.</div>"
    )


def preview_html(preview: ApproveAllPreview) -> str:
    """Approve-all's first step: the count, the flagged left out, a sample."""
    sample = "".join(f"<li>{escape(text)}</li>" for text in preview.sample["final_text"])
    flagged = (
        f" {preview.excluded_flagged} flagged candidate(s) are left out; review them one by one."
        if preview.excluded_flagged
        else ""
    )
    return (
        f"<div><b>Approve all {preview.count} candidate(s) in this review?</b>{flagged}"
        f"<br>For example:<ul>{sample}</ul>Nothing has changed yet: confirm to approve "
        "exactly these as one batch (undo reverts the whole batch).</div>"
    )


def summary_html(summary: Summary) -> str:
    """Counts, time, median per card, the last decisions and the store path."""
    last = "".join(f"<li>{_decided_html(decided)}</li>" for decided in summary.last)
    if not summary.shows_tally:  # an audit's review: the last decisions are a tally too
        last = ""
    return (
        f"<div><b>{escape(str(summary))}</b>"
        + (f"<br>Last decisions:<ul>{last}</ul>" if last else "")
        + "</div>"
    )


def _decided_html(decided: Decided) -> str:
    """One of the last decisions: what it left, and an edit's old text struck through
    (another wording's: the card's own wording, not struck: nobody changed it)."""
    line = escape(str(decided))
    if decided.before is None:
        return line
    if decided.wording is not None:
        return f"{line} <small>(the card's own wording: {escape(decided.before)})</small>"
    return f"{line} <small>(was <del>{escape(decided.before)}</del>)</small>"


#: What a saved review cell says while its review was still open: a panel needs its kernel.
NEEDS_KERNEL = (
    "This review panel needs its kernel: it was open when the notebook was saved. "
    "Decisions made are in the store; run the cell again to continue."
)


def static_summary_html(summary: Summary, panel_id: str) -> str:
    """The saved fallback; the panel's front end hides it while that panel is live.

    It tells the cell's story on its own once the panel cannot be drawn: the review's
    summary, and while cards were still waiting, why the panel is missing. Its style
    hides the panel's own output when that holds no widget (JupyterLab's "Error
    displaying widget: model not found" in a notebook reopened without its kernel):
    the output just before this one, holding no element, only that text.
    """
    panel = escape(panel_id)
    why = "" if summary.finished else f"<p><i>{escape(NEEDS_KERNEL)}</i></p>"
    return (
        f"<style>.jp-OutputArea-child:has(+ .jp-OutputArea-child .npc-static-{panel}) > "
        ".jp-OutputArea-output:not(:has(*)) { display: none; }</style>"
        f'<div class="npc-review-static-summary npc-static-{panel}">'
        f"{why}{summary_html(summary)}</div>"
    )


def static_summary_text(summary: Summary) -> str:
    """The saved fallback as plain text (a terminal, a viewer without HTML)."""
    return str(summary) if summary.finished else f"{NEEDS_KERNEL}\n{summary}"


def error_html(message: str, details: str | None = None) -> str:
    """An error in the panel's status line, with its traceback folded away if given."""
    more = (
        f"<details><summary>traceback</summary><pre>{escape(details)}</pre></details>"
        if details
        else ""
    )
    return f'<div class="npc-error">{escape(message, quote=False)}{more}</div>'
