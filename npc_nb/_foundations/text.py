"""Pure text functions: normalising, hashing, instruction-like detection, evidence checks.

Normalisation decides what counts as "the same content" for tombstones and merges, so
it is deliberately conservative: Unicode NFKC, casefold, collapsed whitespace, and no
trailing punctuation. Anything looser is the matcher's job.

Before hashing and before the instruction-like checks, disguises are folded away
(``unmask``): invisible characters (Unicode's default-ignorable code points: zero-width
spaces, joiners, bidi controls, variation selectors, U+034F), Braille blanks, simple
markup (``<b>``, ``**``, list markers), combining marks on Latin letters in Latin text
("Fri\u0301day" is "Friday") and lookalike letters from another script mixed into Latin
text (Cyrillic "а" in "аpple", or a Greek "Ρ" standing alone among digits and Latin
words). Lookalikes come from the Unicode consortium's confusables data (the
``confusable-homoglyphs`` package), restricted to single Cyrillic or Greek letters whose
prototype is one ASCII letter: the full TR39 skeleton would also equate real words
("modem" and "modern"), which a tombstone must never do.

**Normalisation never changes a value.** A fold that makes two different values one
text would let a tombstone swallow a correction, so it keeps: a sign (a leading "-20"
is not a list marker; the Unicode minus U+2212 is the ASCII one), an exponent
(superscript digits, ``<sup>``, and ``**`` between numbers all become ``^``: "10⁵",
"10<sup>5</sup>" and "10**5" are one text, "105" another), subscript digits (as ``_``),
a mixed number ("1½" is "1 1/2", not "11/2"), and the case of a unit symbol after a
number ("5 mW" is not "5 MW"; ``values.units``), except in a text without lowercase
letters, which says nothing by its case.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

__all__ = [
    "clean_text",
    "content_hash",
    "evidence_occurs_in",
    "find_evidence",
    "instruction_flags",
    "normalise",
    "unmask",
]

_WHITESPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): rendered
#: as nothing, so they can hide inside a word without changing how it looks.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_BRAILLE_BLANK = "\u2800"
_TAGS = re.compile(
    r"</?(a|b|i|u|s|em|strong|strike|del|ins|mark|small|sub|sup|span|font|code|kbd|p|br|div)"
    r"\b[^<>]*/?>",
    re.IGNORECASE,
)
_EMPHASIS = re.compile(r"(\*\*|__|~~|`+)")
_LIST_MARKER = re.compile(r"^\s*(#{1,6}\s+|>\s*|[-*+•·]\s+|\(?\d{1,3}[.)]\s+)")
_LETTERS = re.compile(r"[^\W\d_]+")
_FOREIGN_SCRIPTS = (range(0x0370, 0x0400), range(0x0400, 0x0530))
_TRAILING_PUNCTUATION = " .,;:!?…。、\"'”’)]»"
_LEADING_MARKERS = " -*•·>\"'“‘([«"
_SIGNED = re.compile(r"[-+]\.?\d")  # a sign, not a list marker
_SUPERSCRIPT = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-", strict=True))
_SUBSCRIPT = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋", "0123456789+-", strict=True))
_SCRIPTED = re.compile("([⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+)|([₀₁₂₃₄₅₆₇₈₉₊₋]+)")
_MIXED_FRACTION = re.compile("(?<=\\d)(?=[¼½¾⅐-⅞])")
_SUP_SUB = re.compile(r"<(sup|sub)\b[^<>]*>\s*([^<>]*?)\s*</\1\s*>", re.IGNORECASE)
_POWER = re.compile(r"(?<=[\w)])\s*\*\*\s*(?=[-+]?\.?\d)")
_MINUS = "\u2212"

_INSTRUCTION_PATTERNS = {
    "instruction-like": re.compile(
        r"\b(from now on|going forward,? (you|always)|ignore (all |any |the |your )*"
        r"(previous|prior|above|earlier|instructions|rules)|disregard (all |any |the )*"
        r"(previous|prior|above|earlier|instructions|everything|rules)|forget (all |your )*"
        r"(previous|instructions|rules)"
        r"|you (must|should|will) (always|never)|always (respond|reply|answer|say)"
        r"|never (respond|reply|answer|mention|reveal)|system prompt|new instructions?"
        r"|act as|pretend (to be|you are))\b",
        re.IGNORECASE,
    ),
    "contains-url": re.compile(
        r"(https?://|www\.)\S+|\b[\w-]+(\.[\w-]+)*\.(com|org|net|io|ai|dev|app|co|xyz|info)"
        r"(/\S*)?\b",
        re.IGNORECASE,
    ),
    "tool-directive": re.compile(
        r"(\b(call|invoke|run|execute|use) (the )?(tool|function|command|shell)\b"
        r"|<\s*/?\s*(tool|function|npc-memory|system)\b|\bapprove_all\b)",
        re.IGNORECASE,
    ),
}


@functools.lru_cache(maxsize=8_192)
def normalise(text: str) -> str:
    """The canonical form two statements share when they say the same thing.

    Disguises are folded (``unmask``), then case and spacing; list markers and quotes
    around the statement are removed.
    """
    folded = _casefold(unmask(text))
    collapsed = _WHITESPACE.sub(" ", folded).strip()
    return _strip_leading(collapsed).rstrip(_TRAILING_PUNCTUATION).strip()


def _casefold(text: str) -> str:
    """Casefolded, but for the unit symbols after numbers ("5 mW" is not "5 MW"), unless
    the text has no lowercase letter (shouted: its case says nothing)."""
    if not any(c.islower() for c in text):
        return text.casefold()
    parts, start = [], 0
    for unit in _cased_unit().finditer(text):
        parts += [text[start : unit.start(2)].casefold(), unit.group(2)]
        start = unit.end(2)
    return "".join([*parts, text[start:].casefold()])


@functools.cache
def _cased_unit() -> re.Pattern[str]:
    """A unit symbol right after a number: its case is kept (``values.units``)."""
    from .values.units import SYMBOL  # the values room imports this module

    return re.compile(rf"(?<=\d)(\s?)({SYMBOL})(?![^\W\d_])")


def _strip_leading(text: str) -> str:
    """Without the list markers and quotes in front, but with a sign ("-20 °C")."""
    for index, char in enumerate(text):
        if char not in _LEADING_MARKERS or _SIGNED.match(text, index):
            return text[index:]
    return ""


def unmask(text: str) -> str:
    """The text as a reader sees it: NFKC, no invisible characters, Braille blanks as
    spaces, no simple markup, lookalike letters in Latin words folded to Latin."""
    visible = text if text.isascii() else _visible(text)
    powered = _POWER.sub("^", _SUP_SUB.sub(_scripted_markup, visible))
    plain = _EMPHASIS.sub("", _TAGS.sub("", powered))
    lines = [_LIST_MARKER.sub("", line, count=1) for line in plain.split("\n")]
    return _fold_lookalikes("\n".join(lines))


def _visible(text: str) -> str:
    """NFKC (keeping superscript and subscript digits, a mixed number and the minus
    sign as values), without invisible characters, Braille blanks as spaces, combining
    marks on Latin letters folded in Latin text. ASCII text is left as it is (``unmask``
    skips this): NFKC keeps every ASCII character, and none is ignorable, a format
    character (Cf) or a Braille blank."""
    kept = _SCRIPTED.sub(_scripted, _MIXED_FRACTION.sub(" ", text)).replace(_MINUS, "-")
    visible = _IGNORABLE.sub("", unicodedata.normalize("NFKC", kept))
    visible = "".join(c for c in visible if unicodedata.category(c) != "Cf")
    return _fold_marks(visible.replace(_BRAILLE_BLANK, " "))


def _scripted(match: re.Match[str]) -> str:
    """Superscript digits as an exponent (``^``), subscript digits after ``_``."""
    if match.group(1):
        return "^" + "".join(_SUPERSCRIPT[c] for c in match.group(1))
    return "_" + "".join(_SUBSCRIPT[c] for c in match.group(2))


def _scripted_markup(match: re.Match[str]) -> str:
    return ("^" if match.group(1).lower() == "sup" else "_") + match.group(2)


def _fold_marks(text: str) -> str:
    """Combining marks on ASCII letters dropped, when most letters are ASCII: an accent
    added to a word of a Latin text ("Fri\u0301day") does not make another word."""
    decomposed = unicodedata.normalize("NFD", text)
    if decomposed == text and text.isascii():
        return text
    letters = [c for c in decomposed if c.isalpha()]
    if not letters or sum(c.isascii() for c in letters) * 2 <= len(letters):
        return text
    kept: list[str] = []
    for char in decomposed:
        if unicodedata.category(char) == "Mn" and kept and _marks_ascii(kept):
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def _marks_ascii(kept: list[str]) -> bool:
    """Whether the base letter of the marks at the end of ``kept`` is an ASCII letter."""
    for char in reversed(kept):
        if unicodedata.category(char) != "Mn":
            return char.isascii() and char.isalpha()
    return False


def _fold_lookalikes(text: str) -> str:
    """Cyrillic or Greek lookalikes inside Latin text become their Latin letter.

    A foreign letter is folded when its word also holds Latin letters, when the whole
    word is lookalikes and the text is mostly Latin ("рау" in an English sentence), or
    when it is a lookalike standing alone and the other words are not mostly of its
    script ("Ρ < 0.05" is "P < 0.05").
    """
    if text.isascii():
        return text
    words = _LETTERS.findall(text)
    latin = sum(1 for word in words for c in word if c.isascii())
    mostly_latin = latin * 2 > sum(len(word) for word in words)
    longer = [word for word in words if len(word) > 1]
    foreign = sum(1 for word in longer for c in word if not c.isascii())
    lone_fold = foreign <= sum(1 for word in longer for c in word if c.isascii())
    return _LETTERS.sub(lambda m: _fold_word(m.group(0), mostly_latin, lone_fold), text)


def _fold_word(word: str, mostly_latin: bool, lone_fold: bool) -> str:
    if word.isascii():
        return word
    table = _lookalikes()
    has_latin = any(c.isascii() for c in word)
    every = all(c in table for c in word)
    if has_latin or (every and (mostly_latin or (len(word) == 1 and lone_fold))):
        return "".join(table.get(c, c) for c in word)
    return word


@functools.cache
def _lookalikes() -> dict[str, str]:
    """Cyrillic and Greek letters whose one confusable prototype is an ASCII letter."""
    from confusable_homoglyphs import confusables

    table = {}
    for char in (chr(cp) for block in _FOREIGN_SCRIPTS for cp in block):
        found = confusables.is_confusable(char, preferred_aliases=["latin"])
        glyphs = found[0]["homoglyphs"] if char.isalpha() and isinstance(found, list) else []
        prototypes = {
            h["c"] for h in glyphs if len(h["c"]) == 1 and h["c"].isascii() and h["c"].isalpha()
        }
        if len(prototypes) == 1:
            (latin,) = prototypes
            # TR39 maps capital I-lookalikes to "l"; in text they read as "I".
            table[char] = "I" if char.isupper() and latin == "l" else latin
    return table


def content_hash(text: str) -> str:
    """A stable hash of the normalised text (hex, 32 characters)."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:32]


def instruction_flags(text: str) -> list[str]:
    """Flags for text that reads like an instruction to the model rather than a memory."""
    flat = _WHITESPACE.sub(" ", unmask(text))
    return [flag for flag, pattern in _INSTRUCTION_PATTERNS.items() if pattern.search(flat)]


def find_evidence(evidence: str | None, source: str | None) -> tuple[int, int] | None:
    """Where the evidence quote sits in ``source`` (start, end in ``source``'s own
    characters), ignoring case, Unicode width forms (NFKC) and runs of spacing; None if
    it is not there. The one evidence matcher: storing a candidate, drawing its card and
    choosing its source message all use it, so they never disagree."""
    if not evidence or not source:
        return None
    needle, _ = _comparable(evidence)
    needle = needle.strip()
    haystack, origin = _comparable(source)
    start = haystack.find(needle) if needle else -1
    if start < 0:
        return None
    end = start + len(needle) - 1
    return origin[start], origin[end] + 1


def _comparable(text: str) -> tuple[str, list[int]]:
    """``text`` folded for comparison, and for each folded character the index of the
    original character it came from (so a match maps back to the original span)."""
    folded: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for piece in unicodedata.normalize("NFKC", char).casefold():
            if piece.isspace():
                if folded and folded[-1] == " ":
                    continue
                piece = " "
            folded.append(piece)
            origin.append(index)
    return "".join(folded), origin


def evidence_occurs_in(evidence: str, source: str) -> bool:
    """Whether the evidence quote occurs in the source (see ``find_evidence``)."""
    return find_evidence(evidence, source) is not None


def clean_text(text: str) -> str:
    """Text that can be stored: lone surrogates (invalid Unicode, as some model APIs
    and copy-pastes produce) become U+FFFD instead of failing the write."""
    return _SURROGATE.sub("\ufffd", text) if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
