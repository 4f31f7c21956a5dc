"""Dates and times in a statement: months with their day and year, weekdays, ISO and
numeric dates, quarters, "today"; times of day (``3 pm``, ``15:00``, "noon"). What the
value reader (``reader``) takes first, so that "March 15" is one date, not a date and a
number.

A date is the set of its parts (year, month, day, weekday, quarter, a relative day, a
numeric day/month), so "March 15" and "March 15, 2026" agree on what both state. A
lowercase "may" or "march" without a day or a year is a verb, not a month, and the
number of a week is no day ("week 3 of May" is a week and a month).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["DATES", "TIMES", "date_fields", "minutes"]


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            "january jan", "february feb", "march mar", "april apr", "may", "june jun",
            "july jul", "august aug", "september sep sept", "october oct",
            "november nov", "december dec",
        ],
        1,
    )
    for name in names.split()
}  # fmt: skip
_WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday".split())}
_WEEKDAYS |= {"saturday": 5, "sunday": 6}
DATES = re.compile(
    r"\b(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2})\b"
    r"|\b(?P<na>\d{1,2})[/.](?P<nb>\d{1,2})[/.](?P<ny>\d{4}|\d{2})\b"
    r"|\b(?:(?<![Ww]eek\s)(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
    rf"(?P<month>{_alternation(_MONTHS)})\.?(?:\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?(?!\d))?"
    r"(?:,?\s+(?P<my>\d{4})(?!\d))?\b"
    r"|\b[Qq](?P<q>[1-4])\b(?:\s+(?P<qy>\d{4})\b)?"
    rf"|\b(?P<weekday>{_alternation(_WEEKDAYS)})s?\b"
    r"|\b(?P<relative>today|tomorrow|yesterday|tonight)\b",
    re.IGNORECASE,
)
TIMES = re.compile(
    r"\b(?P<h>\d{1,2})(?::(?P<m>[0-5]\d))?\s?(?P<half>am|pm|a\.m\.|p\.m\.)(?!\w)"
    r"|\b(?P<h24>[01]?\d|2[0-3]):(?P<m24>[0-5]\d)\b|\b(?P<word>noon|midnight)\b",
    re.IGNORECASE,
)


def date_fields(match: re.Match[str], caseless: bool) -> frozenset[tuple[str, int | str]]:
    """The parts of a date match as (part, value) pairs; empty when the match is not a
    date (a lowercase "may" or "march" with no day or year is a verb)."""
    found = match.groupdict()
    if found["iy"]:
        return frozenset(
            {("y", int(found["iy"])), ("m", int(found["im"])), ("d", int(found["id"]))}
        )
    if found["na"]:
        full_year = int(found["ny"]) + (2000 if len(found["ny"]) == 2 else 0)
        return frozenset({("y", full_year), ("n", f"{int(found['na'])}/{int(found['nb'])}")})
    if found["month"]:
        day: str | None = found["d1"] or found["d2"]
        year: str | None = found["my"]
        named = found["month"][0].isupper() and not caseless
        if not (named or day or year):
            return frozenset()
        fields: set[tuple[str, int | str]] = {("m", _MONTHS[found["month"].casefold()])}
        fields |= {("d", int(day))} if day else set()
        return frozenset(fields | ({("y", int(year))} if year else set()))
    if found["q"]:
        quarter = {("q", int(found["q"]))}
        return frozenset(quarter | ({("y", int(found["qy"]))} if found["qy"] else set()))
    if found["weekday"]:
        return frozenset({("w", _WEEKDAYS[found["weekday"].casefold()])})
    return frozenset({("r", found["relative"].casefold())})


def minutes(match: re.Match[str]) -> int:
    found = match.groupdict()
    if found["word"]:
        return 720 if found["word"].casefold() == "noon" else 0
    if found["h24"] is not None:
        return int(found["h24"]) * 60 + int(found["m24"])
    hour = int(found["h"]) % 12 + (12 if found["half"].casefold().startswith("p") else 0)
    return hour * 60 + int(found["m"] or 0)
