"""Flags and tombstones see through disguise: invisible characters, Braille blanks,
lookalike letters from another script, full-width forms, casing and simple markup.

Each disguised repeat of a rejected memory is caught by the exact (hash) tombstone, not
by fuzzy similarity, so no threshold can let it through.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from npc_nb._foundations.text import _visible, content_hash, normalise, unmask

REJECTED = "The batch size is 32."
DISGUISES = {
    "zero-width space": "The bat\u200bch size is 32.",
    "word joiner": "The batch\u2060 size is 32.",
    "combining grapheme joiner": "The ba\u034ftch size is 32.",
    "variation selector": "The batch\ufe0f size is 32.",
    "soft hyphen": "The bat\u00adch size is 32.",
    "Braille blank": "The\u2800batch size is 32.",
    "Cyrillic a": "The b\u0430tch size is 32.",
    "Cyrillic e": "Th\u0435 batch size is 32.",
    "full-width": "\uff34\uff48\uff45 batch size is \uff13\uff12.",
    "casing": "THE BATCH SIZE IS 32",
    "bold tag": "<b>The batch size is 32.</b>",
    "markdown emphasis": "The **batch size** is 32.",
    "numbered list": "1. The batch size is 32.",
    "bullet and quote": "- \u201cThe batch size is 32.\u201d",
}


@given(st.text(alphabet=st.characters(max_codepoint=0x7F)))
def test_ascii_text_hides_nothing_that_unmask_skips(text: str) -> None:
    # unmask leaves ASCII text out of NFKC and the invisible-character pass (the
    # matcher normalises every neighbour's text): sound only if that pass keeps it.
    assert _visible(text) == text
    assert unmask(text) == unmask(text + "\u200b")  # the slow path agrees


def test_every_ascii_character_survives_the_invisible_character_pass() -> None:
    every = "".join(map(chr, range(0x80)))
    assert _visible(every) == every


def test_real_words_that_only_look_alike_stay_different() -> None:
    assert content_hash("Use the modem") != content_hash("Use the modern")
    assert content_hash("rn") != content_hash("m")
    assert content_hash("version 0.1") != content_hash("version O.1")
    assert normalise("\u041c\u043e\u0441\u043a\u0432\u0430 is the capital") == (
        "\u043c\u043e\u0441\u043a\u0432\u0430 is the capital"  # a Russian word stays Russian
    )


# -- normalisation never changes a value (issue 34) ------------------------------------

#: Texts that state different values: never one hash, so a correction of a rejected
#: value is never suppressed as an exact repeat of it.
VALUES_APART = {
    "superscript exponent": ("We need 10⁵ samples.", "We need 105 samples."),
    "sup markup": ("The grid has 10<sup>3</sup> cells.", "The grid has 103 cells."),
    "power operator": ("The hash table holds 2**16 entries.", "The hash table holds 216 entries."),
    "leading minus": ("-20 °C is the storage temperature.", "20 °C is the storage temperature."),
    "minus after a word": ("Store the samples at -20 °C.", "Store the samples at 20 °C."),
    "unit prefix case": ("The laser power is 5 mW.", "The laser power is 5 MW."),
    "subscript": ("The sample holds CO₂.", "The sample holds CO2."),
    "mixed number": ("Add 1½ cups.", "Add 11/2 cups."),
}
#: Texts that state the same value: one hash.
VALUES_ALIKE = {
    "exponent forms": ("We need 10⁵ samples.", "We need 10^5 samples."),
    "sup and superscript": ("The grid has 10<sup>3</sup> cells.", "The grid has 10³ cells."),
    "power operators": (
        "The hash table holds 2**16 entries.",
        "The hash table holds 2^16 entries.",
    ),
    "Unicode minus": ("The correlation is \u22120.4.", "The correlation is -0.4."),
    "shouted unit": ("THE LASER POWER IS 5 MW!", "the laser power is 5 mw"),
}


@pytest.mark.parametrize(("one", "other"), VALUES_APART.values(), ids=VALUES_APART.keys())
def test_normalisation_never_makes_two_values_one_text(one: str, other: str) -> None:
    assert content_hash(one) != content_hash(other)


@pytest.mark.parametrize(("one", "other"), VALUES_ALIKE.values(), ids=VALUES_ALIKE.keys())
def test_one_value_written_two_ways_is_one_text(one: str, other: str) -> None:
    assert content_hash(one) == content_hash(other)


#: A rejected memory and the same text with a disguise that used to slip past it.
EVASIONS = {
    "combining acute on a Latin letter": (
        "The lab meets on Friday.",
        "The lab meets on Fri\u0301day.",
    ),
    "precomposed accent": ("The lab meets on Friday.", "The lab meets on Fríday."),
    "lone Greek capital rho": ("P ≤ 0.05", "\u03a1 ≤ 0.05"),
    "lone Cyrillic capital er": ("P ≤ 0.05", "\u0420 ≤ 0.05"),
}


def test_text_in_another_script_keeps_its_letters_and_accents() -> None:
    assert normalise("Η Ρ είναι μεγάλη") == "η ρ είναι μεγάλη"  # Greek stays Greek
    assert normalise("Ελλάδα") == "ελλάδα"
