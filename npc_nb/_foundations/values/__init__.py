"""Typed values: what a statement asserts that a rewording keeps and a correction
changes, for the guards every matcher's verdict passes (``memory.matching``).

What lives here: ``compare`` (the rules, ``read_values`` and ``value_changes``: which
values two statements disagree on, in both directions alike; ``replaces``: whether a
change puts a value in place of another or only adds or leaves one out), ``reader``
(reading numbers, comparators, units, versions, ordinals and names out of a text),
``calendar`` (its dates and times), ``labels`` (one-letter words and Roman numerals
that name one of several things, compared pairwise; ``transliterated``: lone Greek and
Cyrillic letters as the Latin letters they stand for), ``polarity`` (which words a
statement asserts and which it denies) and ``units`` (unit symbols, whose case is their
meaning; the exact-repeat hash keeps it too).

What it may import: what the rest of ``_foundations`` may (the standard library, the
confusables data, and ``_foundations.text`` and ``_foundations.terms``).
"""

from .compare import Value, Values, read_values, replaces, value_changes
from .labels import transliterated

__all__ = ["Value", "Values", "read_values", "replaces", "transliterated", "value_changes"]
