"""Units of measurement as statements write them after a number: what the exact-repeat
hash keeps the case of, and what the value guards compare.

A unit symbol's case is part of its meaning: ``mW`` is a thousandth of a watt and ``MW``
a million watts, ``ms`` a thousandth of a second and ``Ms`` a million seconds. So a
symbol (an SI prefix and a base unit, or a unit of its own: ``min``, ``°C``, ``px``...)
is matched case-sensitively, and only right after a number, where it cannot be a word.
Spelled-out units (``milliseconds``, ``per cent``) are matched in any case and become
their symbol, so "120 milliseconds" and "120 ms" state the same value.
"""

from __future__ import annotations

import re

__all__ = ["SYMBOL", "WORDS", "canonical_unit"]

_PREFIXES = "Y Z E P T G M k h da d c m µ μ u n p f a Ki Mi Gi Ti"
_BASES = (
    "mol cd Hz Pa Wb Bq Gy Sv lm lx eV Da Wh VA Ω m g s A K N J W C V F S T H L l B b bit bps t bar"
)
#: Symbols that take no prefix here.
_PLAIN = "°C °F ° % ‰ min h hr hrs px pt dpi fps ppm ppb rpm kph mph mpg psi x"
_CURRENCIES = "USD EUR GBP CHF JPY CNY CAD AUD"


def _alternatives() -> list[str]:
    prefixed = [p + b for p in _PREFIXES.split() for b in _BASES.split()]
    every = {*prefixed, *_BASES.split(), *_PLAIN.split(), *_CURRENCIES.split()}
    return sorted(every, key=len, reverse=True)  # the longest first: "mol" before "m"


#: A unit symbol (case-sensitive); callers anchor it after a number and before a
#: non-word character.
SYMBOL = "(?:" + "|".join(re.escape(s) for s in _alternatives()) + ")"

#: Spelled-out units, in any case, and the symbol each stands for.
WORDS = {
    **dict.fromkeys(["millisecond", "milliseconds", "msec", "msecs"], "ms"),
    **dict.fromkeys(["microsecond", "microseconds"], "µs"),
    **dict.fromkeys(["nanosecond", "nanoseconds"], "ns"),
    **dict.fromkeys(["second", "seconds", "sec", "secs"], "s"),
    **dict.fromkeys(["minute", "minutes", "mins"], "min"),
    **dict.fromkeys(["hour", "hours"], "h"),
    **dict.fromkeys(["day", "days"], "d"),
    **dict.fromkeys(["week", "weeks"], "wk"),
    **dict.fromkeys(["month", "months"], "mo"),
    **dict.fromkeys(["year", "years", "yr", "yrs"], "yr"),
    **dict.fromkeys(["percent", "per cent", "pct"], "%"),
    **dict.fromkeys(["percentage point", "percentage points", "pp"], "pp"),
    **dict.fromkeys(["degree", "degrees"], "°"),
    **dict.fromkeys(["kilogram", "kilograms", "kilo", "kilos"], "kg"),
    **dict.fromkeys(["gram", "grams"], "g"),
    **dict.fromkeys(["milligram", "milligrams"], "mg"),
    **dict.fromkeys(["metre", "metres", "meter", "meters"], "m"),
    **dict.fromkeys(["kilometre", "kilometres", "kilometer", "kilometers"], "km"),
    **dict.fromkeys(["centimetre", "centimetres", "centimeter", "centimeters"], "cm"),
    **dict.fromkeys(["millimetre", "millimetres", "millimeter", "millimeters"], "mm"),
    **dict.fromkeys(["litre", "litres", "liter", "liters"], "L"),
    **dict.fromkeys(["millilitre", "millilitres", "milliliter", "milliliters"], "mL"),
    **dict.fromkeys(["byte", "bytes"], "B"),
    **dict.fromkeys(["kilobyte", "kilobytes"], "kB"),
    **dict.fromkeys(["megabyte", "megabytes"], "MB"),
    **dict.fromkeys(["gigabyte", "gigabytes"], "GB"),
    **dict.fromkeys(["terabyte", "terabytes"], "TB"),
    **dict.fromkeys(["bits"], "b"),
    **dict.fromkeys(["watt", "watts"], "W"),
    **dict.fromkeys(["milliwatt", "milliwatts"], "mW"),
    **dict.fromkeys(["kilowatt", "kilowatts"], "kW"),
    **dict.fromkeys(["megawatt", "megawatts"], "MW"),
    **dict.fromkeys(["volt", "volts"], "V"),
    **dict.fromkeys(["hertz"], "Hz"),
    **dict.fromkeys(["dollar", "dollars"], "USD"),
    **dict.fromkeys(["euro", "euros"], "EUR"),
    **dict.fromkeys(["pound", "pounds"], "GBP"),
}
_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "μ": "µ", "u": "µ"}


def canonical_unit(unit: str) -> str:
    """One spelling per unit: words become symbols, currency signs codes, ``u`` and the
    Greek mu the micro sign (``us``, ``μs`` and ``µs`` are one unit)."""
    word = WORDS.get(unit.casefold())
    if word is not None:
        return word
    if unit in _SIGNS:
        return _SIGNS[unit]
    if len(unit) > 1 and unit[0] in "uμ" and unit[1:] in _BASES.split():
        return "µ" + unit[1:]
    return unit
