"""The review speaks the reviewer's language: cards and status lines name a card by its
text and a conversation by its persona and start, never by id; the line of what a card
differs in names that memory's status as it is now, in the words the texts use; and the
list of automatic outcomes never names a card by the wording it was approved as."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import npc_nb
from npc_nb.review.panel import ReviewPanel
from tests.helpers import propose

#: The start of a UUID: what a reviewer should never have to read.
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}")
FACT = "We store the ringing data in DuckDB."
WORDINGS = (
    "Note: we store the ringing data in DuckDB, as discussed.",
    "As discussed, we store the ringing data in DuckDB.",
)
STARTS = {"c-first": datetime(2025, 12, 3, 10, 31), "c-later": datetime(2025, 12, 9, 18, 5)}


def conversations(nb: npc_nb.Project) -> None:
    """Two conversations with the analyst, started at ``STARTS`` (UTC)."""
    for conversation, started in STARTS.items():
        nb.sql(
            "INSERT INTO conversations (id, npc, started_at) VALUES (?, 'analyst', ?)",
            [conversation, started],
            allow_write=True,
        )


def local(started: datetime) -> str:
    """How a card shows a conversation's start (UTC): local day, month, year if not this
    one, and time."""
    at = started.replace(tzinfo=UTC).astimezone()
    year = "" if at.year == datetime.now().year else f" {at.year}"
    return f"{at.day} {at:%b}{year} {at:%H:%M}"


def shown(panel: ReviewPanel) -> str:
    """Everything the panel shows in words: the card, the tally, the status line."""
    return " ".join([panel.keys.card_html, panel.tally.value, panel.status.value])


def test_cards_and_status_lines_name_cards_and_conversations_never_by_id(
    nb: npc_nb.Project,
) -> None:
    conversations(nb)
    card = nb.add_candidate(FACT, category="fact", npc="analyst", conversation_id="c-first")
    for text in WORDINGS:
        merged = nb.add_candidate(text, category="fact", npc="analyst", conversation_id="c-later")
        assert merged.action == "merged"
    nb.approve(propose(nb, "The batch size is 32."))
    update = nb.add_candidate("The batch size is 64.", category="fact", npc="analyst")
    assert update.updates is not None  # a proposed update of the approved memory
    panel = nb.review(by="ada")
    html = panel.keys.card_html
    first, later = (local(started) for started in STARTS.values())
    assert f"conversation: <b>analyst, {first}</b>" in html
    assert html.count(f"analyst, {later})") == 2  # each merged wording's conversation
    assert not UUID.search(shown(panel)), shown(panel)

    panel._on_key("x", card.memory_id)
    panel._on_key("3", card.memory_id)
    assert panel.status.value == (
        "Split wording 3 off as its own card \u2018As discussed, we store the ringing data in"
        "\u2026\u2019 (later in this review)."
    )
    panel._on_key("a", card.memory_id)
    assert panel.keys.card_id == update.memory_id
    assert "replaces the approved memory \u201cThe batch size is 32.\u201d" in panel.keys.card_html
    assert not UUID.search(shown(panel)), shown(panel)
    panel._on_key("a", update.memory_id)
    panel._on_key("a", panel.keys.card_id)  # the wording split off
    assert panel.session.current is None
    panel._on_key("1", "")  # put the first automatic outcome back as its own card
    assert panel.status.value == (
        "Put back as its own card \u2018Note: we store the ringing data in DuckDB, as\u2026\u2019: "
        "decide it now."
    )
    panel._on_key("r", panel.keys.card_id)
    assert "put back as its own card" in panel.keys.card_html
    assert not UUID.search(shown(panel)), shown(panel)


def test_what_a_card_differs_in_names_the_memory_as_it_is_now_in_its_words(
    nb: npc_nb.Project,
) -> None:
    first = propose(nb, "We store the ringing data in DuckDB.")
    later = nb.add_candidate(
        "We store the ringing data in DuckDB for the analysis.", category="fact", npc="analyst"
    )
    assert later.queued and later.verdict == "update", later
    assert "pending memory" in later.differs and "analysis" in later.differs  # as written
    nb.approve(first)  # decided after the candidate was proposed
    session = nb.review_session()
    card = session.card()
    assert card is not None and card.memory_id == later.memory_id
    assert card.differs == (
        "Differs from the approved memory \u201cWe store the ringing data in DuckDB.\u201d: "
        "adds analysis"
    )
    # A note an earlier npc_nb stored, with the status then and the matcher's stems.
    old_note = f"differs from pending memory {first} ({FACT!r}): adds analysi, store"
    nb.sql("UPDATE memories SET differs = ? WHERE id = ?", [old_note, later.memory_id],
           allow_write=True)  # fmt: skip
    card = nb.review_session().card()
    assert card is not None
    assert card.differs is not None and card.differs.endswith(": adds analysis, store")
    assert "the approved memory" in card.differs and first not in card.differs
    assert "Differs from the approved memory" in str(card)  # the terminal's card too


def test_the_automatic_list_names_the_card_by_its_own_wording_not_as_approved(
    nb: npc_nb.Project,
) -> None:
    card = propose(nb, FACT)
    assert nb.add_candidate(WORDINGS[0], category="fact", npc="analyst").action == "merged"
    panel = nb.review()
    panel._on_key("2", card)  # approved as the merged wording
    listed = panel.keys.card_html
    assert "Decided automatically since the last review" in listed
    assert f"merged into the card \u201c{FACT}\u201d, approved as this wording" in listed
    assert f"merged into the card \u201c{WORDINGS[0]}\u201d" not in listed
