"""One evidence matcher: storing a candidate, drawing its card and choosing its source
message agree on where (and whether) the evidence quote occurs.

A quote written in plain ASCII against a source typed in full-width letters, with other
spacing and case, is the case that once made the three disagree (stored as verified,
shown on the card as "not found", judged absent by extraction).
"""

from __future__ import annotations

from pathlib import Path

import npc_nb
from npc_nb._foundations.text import find_evidence
from tests import fake_models

SOURCE = "Okay. We   decided to use ＤｕｃｋＤＢ\nfor the store."
QUOTE = "we decided to use DuckDB for the store"


def test_the_matcher_finds_the_span_in_the_sources_own_characters() -> None:
    span = find_evidence(QUOTE, SOURCE)
    assert span is not None
    assert SOURCE[span[0] : span[1]] == "We   decided to use ＤｕｃｋＤＢ\nfor the store"
    assert find_evidence("we chose SQLite", SOURCE) is None
    assert find_evidence("", SOURCE) is None and find_evidence(QUOTE, None) is None


def test_storing_the_card_and_extraction_agree_on_a_full_width_source(
    project_dir: Path,
) -> None:
    fake_models.install()
    nb = npc_nb.open(project_dir, extract_in_background=False)
    fake_models.SCRIPT.append("Noted.")  # the reply, which does not contain the quote
    fake_models.SCRIPT.append(
        '{"memories": [{"statement": "We use DuckDB for the store.", "category": "decision",'
        f' "evidence_quote": "{QUOTE}", "confidence": 0.9}}]}}'
    )
    reply = nb.chat("analyst", SOURCE, model="scripted/any")
    nb.extraction.wait()
    row = nb.memories().iloc[0]
    assert bool(row["evidence_verified"]) is True
    assert row["source_message_id"] == reply.user_message_id  # extraction found it there
    assert "evidence-not-in-source" not in list(row["flags"])
    card = nb.review_session().card()
    assert card is not None and card.evidence_at is not None
    start, end = card.evidence_at
    assert card.source is not None and card.source[start:end].endswith("for the store")
    nb.close()
