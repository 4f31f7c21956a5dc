"""Missing values in the tables the API returns: ``<NA>``, except in times (``NaT``).

DuckDB and pandas left alone mix four markers in one table: ``NaN`` in text and float
columns, ``<NA>`` in nullable integer and boolean ones, ``None`` in a column that happens
to hold no value at all, ``NaT`` in times. So every table the API returns (memories,
decisions, re-proposals, extraction jobs, the review queue, the metrics, the graph's
frames, the personas) is converted by the kind of each column, not by what its rows
happen to hold:

========  ==================  ================
kind      dtype               missing value
========  ==================  ================
text      ``string``          ``pd.NA``
int       ``Int64``           ``pd.NA``
float     ``Float64``         ``pd.NA``
bool      ``boolean``         ``pd.NA``
other     ``object``          ``pd.NA`` (lists)
time      ``datetime64[us]``  ``NaT``
========  ==================  ================

Times keep numpy's datetimes, whose only missing value is ``NaT``: that is what keeps
date arithmetic, ``.dt`` and resampling working (pandas' nullable alternative needs
pyarrow). Every other column shows ``<NA>``, and ``pd.isna`` is true for all of them;
``numpy.asarray`` of a ``Float64`` column still gives floats (``NaN`` for ``<NA>``).
``nb.sql()`` returns what DuckDB gives for your own query, unconverted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pandas as pd

__all__ = ["Kind", "kind_of_sql_type", "kinds_of", "with_missing_as_na"]

Kind = Literal["text", "int", "float", "bool", "time", "other"]

_DTYPES: dict[str, str] = {
    "text": "string",
    "int": "Int64",
    "float": "Float64",
    "bool": "boolean",
    "time": "datetime64[us]",
}
_SQL_KINDS: dict[str, Kind] = {
    **dict.fromkeys(("VARCHAR", "UUID", "JSON", "ENUM"), "text"),
    **dict.fromkeys(
        ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT"),
        "int",
    ),
    **dict.fromkeys(("UINTEGER", "UBIGINT", "UHUGEINT"), "int"),
    **dict.fromkeys(("DOUBLE", "FLOAT", "DECIMAL"), "float"),
    "BOOLEAN": "bool",
    **dict.fromkeys(("TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_NS", "DATE"), "time"),
}


def kind_of_sql_type(type_name: str) -> Kind:
    """The kind of a DuckDB column type (``DECIMAL(10,2)`` is a float, ``VARCHAR[]``
    other)."""
    return _SQL_KINDS.get(type_name.split("(")[0].strip().upper(), "other")


def with_missing_as_na(frame: pd.DataFrame, kinds: Mapping[str, Kind]) -> pd.DataFrame:
    """``frame`` with each column named in ``kinds`` given its kind's dtype and missing
    value (see the module's table); other columns are left as they are."""
    converted = {}
    for column, kind in kinds.items():
        if column not in frame.columns:
            continue
        values = frame[column]
        if kind == "time" and pd.api.types.is_datetime64_any_dtype(values):
            continue  # already a datetime column (its time zone, if any, kept)
        if kind in _DTYPES:
            converted[column] = values.astype(_DTYPES[kind])
        else:
            objects = values.astype(object)
            converted[column] = objects.where(objects.notna(), pd.NA)
    return frame.assign(**converted) if converted else frame


def kinds_of(frame: pd.DataFrame, **named: Kind) -> dict[str, Kind]:
    """The kind of each column of a frame built in Python (a metric, the graph's
    frames), read from its dtype and values: a float column is a float, an object or
    text column whose values are all text (or missing) is text, other object columns
    are "other"; ``named`` says it where the values cannot (a column with no value)."""
    kinds: dict[str, Kind] = {}
    for column, values in frame.items():
        if column in named:
            kinds[str(column)] = named[str(column)]
        elif pd.api.types.is_float_dtype(values.dtype):
            kinds[str(column)] = "float"
        elif isinstance(values.dtype, pd.StringDtype):
            kinds[str(column)] = "text"
        elif pd.api.types.is_object_dtype(values.dtype):
            text = all(isinstance(value, str) for value in values.dropna())
            kinds[str(column)] = "text" if text else "other"
    return kinds
