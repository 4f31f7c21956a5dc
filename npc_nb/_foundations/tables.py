"""Missing values in the tables the API returns: one marker per kind of column.

DuckDB and pandas left alone mix three markers in one table: ``NaN`` in text and float
columns, ``<NA>`` in nullable integer and boolean ones, ``None`` in a column that happens
to hold no value at all. So every record table the API returns (memories, decisions,
re-proposals, extraction jobs, the review queue) is converted by the kind of each
column, not by what its rows happen to hold:

========  ==================  ================
kind      dtype               missing value
========  ==================  ================
text      ``string``          ``pd.NA``
int       ``Int64``           ``pd.NA``
float     ``Float64``         ``pd.NA``
bool      ``boolean``         ``pd.NA``
time      ``datetime64[us]``  ``NaT``
other     ``object``          ``None`` (lists)
========  ==================  ================

``pd.isna`` is true for every one of them. Metrics are numeric summaries, not records:
they keep ``NaN`` where a rate is undefined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pandas as pd

__all__ = ["Kind", "kind_of_sql_type", "with_missing_as_na"]

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
            converted[column] = objects.where(objects.notna(), None)
    return frame.assign(**converted) if converted else frame
