"""A card as shown: everything a reviewer needs to decide one candidate, as the panel
(``panel.cards``) and the terminal (``npc-nb review``) render it.

``Card`` is a frozen snapshot made from the candidate's row when it comes to the front
of a review (``card_from_row``); its ``__str__`` is the terminal's layout. The session
(``session``) decides which card is current; this module only says what one shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._foundations.text import find_evidence
from ..memory.variants import Variant
from .names import conversation_name, shortened

__all__ = [
    "Card",
    "Nearest",
    "VoteShown",
    "card_from_row",
    "conversation_ids",
    "evidence_span",
    "text_or_none",
]


@dataclass(frozen=True)
class Nearest:
    """An approved memory close to the candidate: a possible duplicate or conflict."""

    memory_id: str
    text: str
    similarity: float  # 0-100, rapidfuzz token-set ratio


@dataclass(frozen=True)
class VoteShown:
    """One vote as an adjudicator sees it, beside the others (never in a reviewer's
    own queue: there a card shows only how many votes it has)."""

    number: int  # what the number key (and ``nb.adjudicate(vote=...)``) picks
    reviewer: str
    decision: str
    text: str | None  # what an approve or edit vote approves
    reason: str | None

    def __str__(self) -> str:
        text = f": {self.text}" if self.text is not None else ""
        reason = f" (reason: {self.reason})" if self.reason else ""
        return f"{self.number}: {self.reviewer} {self.decision}{text}{reason}"


@dataclass(frozen=True)
class Card:
    """Everything a reviewer needs to decide one candidate."""

    memory_id: str
    text: str
    category: str
    npc: str | None
    scope: str
    team: str | None
    confidence: float | None
    flags: tuple[str, ...]
    evidence: str | None
    source: str | None  # the message the candidate was extracted from
    evidence_at: tuple[int, int] | None  # where the evidence sits in ``source``
    conversation_id: str | None
    extractor_model: str | None
    position: int
    total: int
    nearest: tuple[Nearest, ...]
    updates: str | None = None  # the approved memory this candidate would replace
    #: What it asserts differently from its nearest memory: that memory's status now,
    #: its text, the words as written (``names.differs_line``).
    differs: str | None = None
    updates_text: str | None = None  # that memory's text, to show beside the candidate
    variants: tuple[Variant, ...] = ()  # other wordings merged into this card
    #: The nearest memories are still being looked for (the neighbour index is loading
    #: behind a panel that opened without waiting for it): ``nearest`` is empty for now.
    nearest_pending: bool = False
    #: (conversation id, how a reviewer knows it: persona and start) of the card's
    #: conversation and its wordings' (``names.conversation_name``).
    conversation_names: tuple[tuple[str, str], ...] = ()
    #: Independent review: where the card stands ("independent review: 1 of 2 votes"),
    #: never whose votes or which.
    review_note: str | None = None
    #: For an adjudicator only: the votes that disagree, numbered as their keys.
    votes: tuple[VoteShown, ...] = ()
    #: A card of an experiment's blind review: what would tell its arm is not shown
    #: (the extractor model, when each wording was proposed).
    blind: bool = False

    def blinded(self) -> Card:
        """This card as a blind review shows it (``blind``): no extractor model, and no
        time a wording was proposed (arms may run at different times)."""
        return replace(self, extractor_model=None, blind=True)

    def conversation_name(self, conversation_id: str | None) -> str:
        """A conversation of this card as a reviewer knows it ("none" for none)."""
        if conversation_id is None:
            return "none"
        named = dict(self.conversation_names)
        return named.get(conversation_id) or conversation_name(None)

    @property
    def wordings(self) -> tuple[str, ...]:
        """Every wording on the card, numbered from 1 by the keys: its own, then the
        merged variants."""
        return (self.text, *(v.text for v in self.variants))

    @property
    def who(self) -> str:
        """The persona, or the wider scope the memory would be shared in."""
        if self.scope == "npc" and self.npc:
            return self.npc
        return f"{self.scope} ({self.team})" if self.team else self.scope

    def __str__(self) -> str:
        about = [self.category, self.who]
        if self.confidence is not None:
            about.append(f"confidence {self.confidence:.2f}")
        lines = [f"[{self.position}/{self.total}] " + " · ".join(about), f"  {self.text}"]
        if self.review_note:
            lines.append(f"  {self.review_note}")
        if self.votes:
            lines.append("  votes (a number picks one, or decide anew):")
            lines += [f"    {vote}" for vote in self.votes]
        if self.flags:
            lines.append(f"  ! warning: {', '.join(self.flags)} (check before approving)")
        if len(self.wordings) > 1:
            lines.append(f"  {len(self.wordings)} wordings of this fact (1 is shown above):")
            lines += [
                f"    {n}: {v.text}  ({self.proposed(v)})"
                for n, v in enumerate(self.variants, start=2)
            ]
        if self.updates:
            lines.append(f"  proposed update: approving it replaces {self.replaces}")
            if self.updates_text:
                lines.append(f"    now: {self.updates_text}")
                lines.append(f"    new: {self.text}")
        if self.differs:
            lines.append(f"  {self.differs}")
        if self.evidence:
            lines.append(f"  evidence: \u201c{self.evidence}\u201d")
        lines += [f"  ~ approved ({n.similarity:.0f}%): {n.text}" for n in self.nearest]
        if self.nearest_pending:
            lines.append("  ~ still looking for similar approved memories")
        return "\n".join(lines)

    @property
    def replaces(self) -> str:
        """The memory a proposed update replaces, by its text."""
        if self.updates_text is None:
            return "an approved memory (no longer in the store)"
        return f"the approved memory \u201c{shortened(self.updates_text)}\u201d"

    def proposed(self, variant: Variant) -> str:
        """When and in which conversation a wording was proposed."""
        where = variant.conversation_id
        named = f", {self.conversation_name(where)}" if where else ""
        if self.blind:
            return f"proposed in {self.conversation_name(where)}" if where else "proposed"
        return f"proposed {variant.recorded_at:%Y-%m-%d %H:%M}{named}"


def card_from_row(
    row: dict[str, Any],
    *,
    source: str | None,
    position: int,
    total: int,
    nearest: tuple[Nearest, ...],
    nearest_pending: bool,
    updates_text: str | None,
    differs: str | None = None,
    conversations: Mapping[str, Mapping[str, Any]] | None = None,
    votes: tuple[VoteShown, ...] = (),
) -> Card:
    """The card of a queue row (``MemoryCore.queue_rows``), with what the session read
    beside it: the source message, the nearest approved memories, the updated memory's
    text, the line of what differs, the conversations (``conversation_ids``: their
    ``npc`` and ``started_at``), and where the card stands in the review."""
    confidence = row["confidence"]
    return Card(
        memory_id=row["id"],
        text=row["final_text"],
        category=row["category"],
        npc=text_or_none(row["npc"]),
        scope=row["scope"],
        team=text_or_none(row["team"]),
        confidence=None if confidence is None or confidence != confidence else confidence,
        flags=tuple(row["flags"]),
        evidence=text_or_none(row["evidence"]),
        source=source,
        evidence_at=evidence_span(text_or_none(row["evidence"]), source),
        conversation_id=text_or_none(row["conversation_id"]),
        extractor_model=text_or_none(row["extractor_model"]),
        position=position,
        total=total,
        nearest=nearest,
        nearest_pending=nearest_pending,
        updates=text_or_none(row.get("updates")),
        differs=differs,
        updates_text=updates_text,
        variants=row["wordings"],  # read with the row
        conversation_names=tuple(
            (found, conversation_name((conversations or {}).get(found)))
            for found in conversation_ids(row)
        ),
        review_note=_review_note(row, votes),
        votes=votes,
    )


def _review_note(row: dict[str, Any], votes: tuple[VoteShown, ...]) -> str | None:
    """Where a card of independent review stands, in words: its count only."""
    if votes:
        return f"adjudication: {len(votes)} votes disagree"
    if "votes_needed" not in row:
        return None
    return f"independent review: {row['votes']} of {row['votes_needed']} votes"


def conversation_ids(row: dict[str, Any]) -> list[str]:
    """The conversations a queue row's card names: its own and its wordings'."""
    found = [text_or_none(row["conversation_id"])]
    found += [variant.conversation_id for variant in row["wordings"]]
    return list(dict.fromkeys(c for c in found if c))


def evidence_span(evidence: str | None, source: str | None) -> tuple[int, int] | None:
    """Where ``evidence`` sits in ``source`` (the one evidence matcher, ``find_evidence``)."""
    return find_evidence(evidence, source)


def text_or_none(value: Any) -> str | None:
    """A row's text value, or None for a missing one (NULL, NaN)."""
    return value if isinstance(value, str) else None
