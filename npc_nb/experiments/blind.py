"""Blind review: the order the cards of every arm are shown in, and what is hidden.

The order is a seeded shuffle that depends on nothing but the seed and what each card
is (its arm's name, its exchange, its item in the arm's answer), never on when it was
extracted or its id: the same seed gives the same order, on a copy of the store too,
and the arms are interleaved. Each review records the order it opened with and what
it hid (``experiment_reviews``), so an analysis can show the reviewers could not see
the arm.
"""

from __future__ import annotations

import hashlib

from ..errors import ConfigError

__all__ = ["HIDDEN", "card_key", "check_experiment_review", "ordered"]

#: What a blind card never shows: each would tell the arm.
HIDDEN = (
    "arm name",
    "experiment name",
    "extractor model",
    "prompt version",
    "extraction time",
    "memory id",
)


def card_key(seed: int, arm: str, message_id: str, item: int) -> str:
    """A card's place in the blind order: a hash of the seed and what the card is."""
    return hashlib.sha256(f"{seed}\x1f{arm}\x1f{message_id}\x1f{item}".encode()).hexdigest()


def ordered(ids: list[str], keys: dict[str, str]) -> list[str]:
    """``ids`` in the blind order (``keys``: each card's ``card_key``); a card with no
    key yet (proposed after the keys were read) goes last, in the order given."""
    known = sorted((i for i in ids if i in keys), key=lambda i: keys[i])
    return known + [i for i in ids if i not in keys]


def check_experiment_review(experiment: str, *filters: object) -> None:
    """An experiment's blind review takes every card of its arms: no filter narrows it
    (``%npc_review --experiment``, ``npc-nb review --experiment``)."""
    if any(value is not None for value in filters):
        raise ConfigError(
            f"--experiment {experiment} reviews all of the experiment's cards, blind; "
            "leave out --npc, --category and --conversation."
        )
