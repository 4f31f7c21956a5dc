"""Reading typed values out of a statement, left to right: the rules are in ``values.compare``.

Each span a value takes is marked taken, so no character is read twice ("March 15" is a
date, not a date and a number), and the order of the passes is the precedence: dates,
times, versions, numbers (with their comparator, currency, magnitude and unit), ordinals,
then words (number words, ordinal words, names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..terms import DATE_WORDS, FILLER, FUNCTION_WORDS, NUMBER_WORDS, WORD
from .calendar import DATES, TIMES, date_fields, minutes
from .labels import is_numeral
from .units import SYMBOL, WORDS, canonical_unit

__all__ = ["DATES", "NAME_WORD", "Value", "ValueReader"]


@dataclass(frozen=True)
class Value:
    """One value: its family and kind, what is compared (``amount``), as written."""

    family: str  # number (numbers, ranges, versions), ordinal, date, time
    kind: str  # number, range, version, ordinal, date, relative (a date), time
    amount: Any
    text: str
    comparator: str | None = None
    unit: str | None = None
    caseless: bool = False  # the unit's case is unknown (a text without lowercase)


_CMP_SYMBOLS = {"<": "<", "<=": "≤", "=<": "≤", "≤": "≤", "≦": "≤", "⩽": "≤", ">": ">"}
_CMP_SYMBOLS |= {">=": "≥", "=>": "≥", "≥": "≥", "≧": "≥", "⩾": "≥", "≈": "≈", "~": "≈"}
_CMP_SYMBOLS |= {"≠": "≠", "!=": "≠", "=": "="}
_CMP_WORDS = {
    **dict.fromkeys("less than|fewer than|lower than|smaller than|below|under".split("|"), "<"),
    **dict.fromkeys(
        "at most|no more than|not more than|up to|a maximum of|maximum of|no greater than"
        "|not above|not over|max".split("|"),
        "≤",
    ),
    **dict.fromkeys(
        "more than|greater than|higher than|larger than|above|over|exceeding|in excess of"
        "|longer than".split("|"),
        ">",
    ),
    **dict.fromkeys(
        "at least|no less than|not less than|no fewer than|a minimum of|minimum of|not below"
        "|not under|min".split("|"),
        "≥",
    ),
    **dict.fromkeys(
        "about|around|approximately|approx|roughly|circa|nearly|almost".split("|"), "≈"
    ),
    **dict.fromkeys(["exactly", "precisely"], "="),
}
_AFTER_CMP = {"more": "≥", "higher": "≥", "above": "≥", "greater": "≥", "up": "≥", "over": "≥"}
_AFTER_CMP |= {"less": "≤", "fewer": "≤", "lower": "≤", "below": "≤"}


def _alternation(words: Any) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_BEFORE = re.compile(
    rf"(?:(?P<sym>{_alternation(_CMP_SYMBOLS)})|\b(?P<word>{_alternation(_CMP_WORDS)}))\s*"
    r"(?P<cur>[$€£¥]\s?)?$",
    re.IGNORECASE,
)
_CURRENCY = re.compile(r"(?P<cur>[$€£¥])\s?$")
_MAGNITUDES = {"thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_MAGNITUDES |= {"k": 1000, "K": 1000, "M": 10**6, "mn": 10**6, "bn": 10**9}
_AFTER = re.compile(
    r"(?P<plus>\+(?![\w+]))?"
    r"(?:\s?(?P<magword>thousand|million|billion|trillion|bn|mn)\b|(?P<mag>[kKM])(?![^\W\d_]))?"
    rf"(?:\s?(?P<uword>{_alternation(WORDS)})\b|\s?(?P<unit>{SYMBOL})(?![^\W\d_]))?"
    r"(?:\s+(?:or|and)\s+(?P<after>more|higher|above|greater|up|over|less|fewer|lower|below)\b)?"
)
_NUMBER = re.compile(
    r"(?<![\w.,^])(?P<sign>[-+])?(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?P<frac>\.\d+)?"
    r"(?:[eE](?P<e>[-+]?\d+)(?!\w))?(?:\s?\^\s?(?P<pow>[-+]?\d+))?"
    r"(?:\s?[×x*·]\s?10\s?\^\s?(?P<pow10>[-+]?\d+))?"
)
_RANGE_BETWEEN = re.compile(r"\s?[-–—]\s?|\s+to\s+|\s+and\s+")
_VERSION = re.compile(r"\b[vV](\d+(?:\.\d+)*)\b|(?<![\w.])(\d+(?:\.\d+){2,})(?![\w]|\.\d)")
_VERSION_WORDS = frozenset(["version", "release", "ver", "v"])
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b", re.IGNORECASE)
_ORDINAL_WORDS = {
    w: n
    for n, w in enumerate(
        "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split(),
        1,
    )
}
NAME_WORD = re.compile(r"[^\W\d_][\w'’]*(?:-[^\W\d_][\w'’]*)*")
_ONES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}  # fmt: skip
_TENS = {
    w: 10 * i
    for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "dozen": 12}
_NOT_ONE = frozenset("no any every some each this that which the someone".split())
_NOT_NAMES = (
    FUNCTION_WORDS | FILLER | NUMBER_WORDS | DATE_WORDS | frozenset(_ORDINAL_WORDS)
    | frozenset(w.casefold() for w in WORDS) | frozenset(_CMP_WORDS) | frozenset(_ONES)
    | frozenset(_TENS) | frozenset("not no never none nobody nothing without".split())
)  # fmt: skip
#: The words that may start a number or an ordinal ("a" as in "a hundred").
_NUMBERISH = frozenset(_ONES) | frozenset(_TENS) | frozenset(_SCALES) | frozenset(_ORDINAL_WORDS)
_NUMBERISH |= {"a"}
_MAX_POWER = 400  # larger exponents are compared as written, not computed
_OPENERS = " \t\"'“‘([«*•·-"
_DEICTIC = re.compile(r"\b(?:last|next|this|coming|past)\s+$", re.IGNORECASE)


class ValueReader:
    """Reads one text's values left to right, marking what each takes so that no
    character is read twice ("March 15" is a date, not a date and a number)."""

    def __init__(self, plain: str, caseless: bool) -> None:
        self.plain, self.caseless = plain, caseless
        self.taken = bytearray(len(plain))
        self.found: list[tuple[int, Value]] = []
        self.names: list[str] = []
        self.placed: list[str] = []  # names inside a sentence, not at its start
        self.value_words: list[str] = []

    def free(self, start: int, end: int) -> bool:
        return self.taken.find(1, start, end) < 0

    def take(self, start: int, end: int, value: Value | None) -> None:
        self.taken[start:end] = b"\x01" * (end - start)
        if value is not None:
            self.found.append((start, value))
        self.value_words += WORD.findall(self.plain[start:end].casefold())

    # -- dates and times -------------------------------------------------------------

    def dates(self) -> None:
        for match in DATES.finditer(self.plain):
            fields = date_fields(match, self.caseless)
            if fields and self.free(*match.span()):
                kind = "relative" if self._deictic(match, fields) else "date"
                self.take(*match.span(), Value("date", kind, fields, match.group(0)))

    def _deictic(self, match: re.Match[str], fields: frozenset[tuple[str, int | str]]) -> bool:
        """A date that means something only where it was said: "tomorrow", "last
        Friday", "next Monday" (``compare``: no value of the fact to add or leave out)."""
        if any(part == "r" for part, _ in fields):
            return True
        return bool(_DEICTIC.search(self.plain, max(0, match.start() - 12), match.start()))

    def times(self) -> None:
        for match in TIMES.finditer(self.plain):
            if self.free(*match.span()):
                at = minutes(match)
                self.take(*match.span(), Value("time", "time", at, match.group(0)))

    # -- numbers ---------------------------------------------------------------------

    def versions(self) -> None:
        for match in _VERSION.finditer(self.plain):
            if self.free(*match.span()):
                parts = tuple(str(int(p)) for p in (match.group(1) or match.group(2)).split("."))
                self.take(*match.span(), Value("number", "version", parts, match.group(0)))

    def numbers(self) -> None:
        read: list[tuple[int, int, Value]] = []
        for match in _NUMBER.finditer(self.plain):
            if not self.free(*match.span()):
                continue
            if self._versioned(match):
                parts = tuple(str(int(p)) for p in match.group(0).split("."))
                read.append((*match.span(), Value("number", "version", parts, match.group(0))))
                continue
            read.append(self._quantity(match.start(), match.end(), _amount(match)))
        for start, end, value in _ranges(self.plain, read):
            self.take(start, end, value)

    def _versioned(self, match: re.Match[str]) -> bool:
        """A plain number named by the word before it: "version 2", "Python 3.11"."""
        if match.group("sign") or match.group("e") or match.group("pow") or "," in match[0]:
            return False
        before = NAME_WORD.findall(self.plain[max(0, match.start() - 30) : match.start()])
        if not before or not self.plain[: match.start()].endswith(before[-1] + " "):
            return False
        word = before[-1]
        if word.casefold() in _VERSION_WORDS:
            return True
        # A capitalised word names a version only of a dotted number ("Python 3.11"):
        # "Use 3 GPUs" is a count, and 3.10 must not read as 3.1.
        named = word[0].isupper() and not self.caseless and word.casefold() not in _NOT_NAMES
        after = _AFTER.match(self.plain, match.end())
        return named and bool(match.group("frac")) and after is not None and after.group(0) == ""

    def _quantity(self, start: int, end: int, amount: Any) -> tuple[int, int, Value]:
        """A number with what surrounds it: comparator and currency before, magnitude,
        unit and a trailing comparator after."""
        comparator = unit = None
        before = _BEFORE.search(self.plain, max(0, start - 30), start)
        if before is None:
            before = _CURRENCY.search(self.plain, max(0, start - 3), start)
        if before is not None and self.free(before.start(), start):
            found = before.groupdict()
            cmp = found.get("sym") or found.get("word") or ""
            comparator = _CMP_SYMBOLS.get(cmp) or _CMP_WORDS.get(cmp.casefold())
            unit = canonical_unit(found["cur"].strip()) if found.get("cur") else None
            start = before.start()
        after = _AFTER.match(self.plain, end)
        assert after is not None  # every part of it is optional
        if after.group("magword") or after.group("mag"):
            scale = _MAGNITUDES[after.group("magword") or after.group("mag")]
            amount = amount * scale if isinstance(amount, Fraction) else (amount, scale)
        if after.group("uword") or after.group("unit"):
            unit = canonical_unit(after.group("uword") or after.group("unit"))
        if after.group("plus") or after.group("after"):
            comparator = "≥" if after.group("plus") else _AFTER_CMP[after.group("after").lower()]
        end = after.end() if after.group(0).strip() or after.group("plus") else end
        text = self.plain[start:end].strip()
        return start, end, Value("number", "number", amount, text, comparator, unit, self.caseless)

    def ordinals(self) -> None:
        for match in _ORDINAL.finditer(self.plain):
            if self.free(*match.span()):
                self.take(*match.span(), Value("ordinal", "ordinal", int(match.group(1)), match[0]))

    # -- words: number words, ordinals, names ------------------------------------------

    def words(self) -> None:
        tokens = [m for m in NAME_WORD.finditer(self.plain) if self.free(*m.span())]
        index = 0
        while index < len(tokens):
            index = self._word(tokens, index)

    def _word(self, tokens: list[re.Match[str]], index: int) -> int:
        token = tokens[index]
        spelled = token.group(0)
        lower = spelled.casefold().replace("’", "'")
        if not spelled[0].isupper() and lower.split("-")[0] not in _NUMBERISH:
            return index + 1  # neither a name nor a number: most words
        if lower in _ORDINAL_WORDS and not (lower == "second" and self._after_number(token)):
            value = Value("ordinal", "ordinal", _ORDINAL_WORDS[lower], token.group(0))
            self.take(*token.span(), value)
            return index + 1
        taken = _number_words(tokens, index)
        if taken is not None:
            last, amount = taken
            self.take(*self._quantity(tokens[index].start(), tokens[last].end(), Fraction(amount)))
            return last + 1
        name = lower.removesuffix("'s")
        if len(spelled) == 1 or is_numeral(spelled):
            self.value_words.append(name)  # a label ("Plan B", "phase II"): ``labels``
            return index + 1
        acronym = len(spelled) > 1 and spelled.isupper()  # "EU", "BY": named on purpose
        named = spelled[0].isupper() and (acronym or name not in _NOT_NAMES)
        if named and not self.caseless:
            self.names.append(name)
            self.value_words.append(name)
            if not self._starts_sentence(token):
                self.placed.append(name)
        return index + 1

    def _starts_sentence(self, token: re.Match[str]) -> bool:
        """Whether a word opens its sentence (where any word is capitalised), after
        quotes, brackets and list markers."""
        before = self.plain[: token.start()].rstrip(_OPENERS)
        return not before or before[-1] in ".!?:;\n"

    def _after_number(self, token: re.Match[str]) -> bool:
        return bool(re.search(r"\d\s?$", self.plain[: token.start()]))


def _number_words(tokens: list[re.Match[str]], index: int) -> tuple[int, int] | None:
    """(index of the last token, value) of the number spelled from ``tokens[index]``
    ("twenty-one", "a hundred and five", "three"), or None."""
    total = current = 0
    last = None
    position = index
    while position < len(tokens):
        parts = tokens[position].group(0).casefold().split("-")
        if parts == ["a"] or parts == ["and"]:
            following = (
                tokens[position + 1].group(0).casefold() if position + 1 < len(tokens) else ""
            )
            allowed = _SCALES if parts == ["a"] else {**_ONES, **_TENS}
            after_scale = last is not None and _last_part(tokens[last]) in _SCALES
            if (parts == ["and"] and not after_scale) or following.split("-")[0] not in allowed:
                break
            position += 1
            continue
        if not all(p in _ONES or p in _TENS or p in _SCALES for p in parts):
            break
        if parts == ["one"] and last is None and _excluded_one(tokens, position):
            break
        for part in parts:
            total, current = _add_word(part, total, current)
        last = position
        position += 1
    return None if last is None else (last, total + current)


def _last_part(token: re.Match[str]) -> str:
    return token.group(0).casefold().split("-")[-1]


def _excluded_one(tokens: list[re.Match[str]], position: int) -> bool:
    """ "one" as a pronoun: "no one", "every one", "the one", and a "one" that counts
    nothing after it ("kids who need one", "one of them"; but "one GPU", "one hundred")."""
    if position > 0 and tokens[position - 1].group(0).casefold() in _NOT_ONE:
        return True
    if position + 1 == len(tokens):
        return True
    token, following = tokens[position], tokens[position + 1]
    if token.string[token.end() : following.start()].strip():
        return True  # punctuation after it: "need one, even though"
    return following.group(0).casefold() in FUNCTION_WORDS


def _add_word(part: str, total: int, current: int) -> tuple[int, int]:
    if part in _ONES or part in _TENS:
        return total, current + _ONES.get(part, _TENS.get(part, 0))
    scale = _SCALES[part]
    if scale < 1000:
        return total, (current or 1) * scale
    return total + (current or 1) * scale, 0


def _amount(match: re.Match[str]) -> Any:
    """The number a digit match states, exactly (a Fraction), or as written when an
    exponent is too large to compute."""
    literal = match.group("int").replace(",", "") + (match.group("frac") or "")
    value = Fraction(literal) * (Fraction(10) ** int(match.group("e")) if match.group("e") else 1)
    for power, base in ((match.group("pow"), None), (match.group("pow10"), 10)):
        if power is None:
            continue
        if abs(int(power)) > _MAX_POWER:
            return (match.group("sign") or "", literal, base, int(power))
        value = value * Fraction(10) ** int(power) if base else value ** int(power)
    return -value if match.group("sign") == "-" else value


def _ranges(plain: str, read: list[tuple[int, int, Value]]) -> list[tuple[int, int, Value]]:
    """Two numbers joined by a dash, "to", or "between ... and" make one range."""
    merged: list[tuple[int, int, Value]] = []
    for start, end, value in read:
        if merged and _joined(plain, merged[-1], start, value):
            p_start, _, previous = merged[-1]
            merged[-1] = (
                p_start,
                end,
                Value(
                    "number",
                    "range",
                    (previous.amount, value.amount),
                    plain[p_start:end],
                    previous.comparator,
                    previous.unit or value.unit,
                    value.caseless,
                ),
            )
        else:
            merged.append((start, end, value))
    return merged


def _joined(plain: str, previous: tuple[int, int, Value], start: int, value: Value) -> bool:
    """Whether ``value`` closes a range opened by ``previous`` ("3-5", "3 to 5", "between
    3 and 5"; not "3 - -5")."""
    p_start, p_end, before = previous
    if not (value.kind == before.kind == "number"):
        return False
    between = plain[p_end:start]
    if not _RANGE_BETWEEN.fullmatch(between):
        return False
    if between.strip() == "and":
        return plain[:p_start].casefold().rstrip().endswith("between")
    return not (between.strip() == "-" and " " in between and value.text.startswith("-"))
