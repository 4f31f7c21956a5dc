"""The analytical SQL run as the store stood at a moment (the metrics' ``as_of``).

A metric's query names the store's tables and views as usual; ``rewound`` reads it at
a ``Moment`` by putting, in front of it, one common table expression per source as it
stood then, and pointing the query's ``FROM`` and ``JOIN`` at those:

- ``memory_events``: the events the moment includes (up to a snapshot's last event);
- ``memories``: every memory as it stood (``predicates.memories_at``);
- ``reproposals``, ``match_labels``, ``context_injections``: the rows recorded by the
  moment's clock (a re-proposal not yet listed then shows as not listed);
- ``votes``: the votes whose audit event the moment includes (what became of a vote,
  replaced, withdrawn or settled, is read from the votes and events above);
- the views (``v_memories``, ``v_decisions``, ``v_reproposals``, ``v_injections``, ...):
  their own SQL, taken from the migrations, over the sources above.

So a metric computed ``as_of`` a snapshot is that metric as it would have been then.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import duckdb

from ..memories.predicates import Moment, included, memories_at
from ..schema.migrations import apply_migrations

__all__ = ["rewound"]

_PREFIX = "asof_"


def _base_sources(moment: Moment) -> tuple[dict[str, str], dict[str, Any]]:
    """The tables as they stood at ``moment``, as SQL, and their parameters."""
    state, params = memories_at(moment)
    clock = "$as_of_clock_time"
    sources = {
        "memory_events": f"SELECT * FROM memory_events WHERE {included(moment)}",
        "memories": state,
        "reproposals": (
            "SELECT * REPLACE (CASE WHEN listed_at <= $as_of_clock_time THEN listed_at END "
            f"AS listed_at) FROM reproposals WHERE recorded_at <= {clock}"
        ),
        "match_labels": f"SELECT * FROM match_labels WHERE labelled_at <= {clock}",
        "context_injections": f"SELECT * FROM context_injections WHERE injected_at <= {clock}",
        # A vote is cast with its audit event: it counts from that event on.
        "votes": (
            "SELECT * FROM votes WHERE event_seq IN "
            f"(SELECT seq FROM memory_events WHERE {included(moment)})"
        ),
    }
    return sources, params | {"as_of_clock_time": moment.clock}


@functools.cache
def _views() -> tuple[tuple[str, str], ...]:
    """(name, body) of every analytical view, as the migrations define it, in an order
    in which each view comes after those it reads."""
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        apply_migrations(con)
        found = con.execute(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
            "AND schema_name = 'main' ORDER BY view_name"
        ).fetchall()
    finally:
        con.close()
    bodies = {}
    for name, sql in found:
        match = re.match(r"\s*CREATE\s+VIEW\s+\S+\s+AS\s+(.*?);?\s*$", sql, re.S | re.I)
        if match is not None:
            bodies[name] = match[1]
    ordered: list[tuple[str, str]] = []
    while bodies:  # views over views last
        ready = [n for n, body in bodies.items() if not (_names(body) & (set(bodies) - {n}))]
        for name in ready or list(bodies):
            ordered.append((name, bodies.pop(name)))
    return tuple(ordered)


def _names(sql: str) -> set[str]:
    return set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql, re.I))


#: Words that may follow a table in FROM or JOIN and are not its alias.
_NOT_ALIAS = (
    "where|join|left|right|inner|outer|full|cross|natural|positional|asof|on|using|group|"
    "order|limit|offset|union|except|intersect|having|window|qualify|sample|tablesample"
)
_ALIASED = re.compile(rf"\s+(?:as\b|(?!(?:{_NOT_ALIAS})\b)[a-z_]\w*)", re.I)


def _pointed(sql: str, names: set[str]) -> str:
    """``sql`` with each ``FROM name`` / ``JOIN name`` of ``names`` reading its stand-in,
    under the table's own name where the query gives it no alias, so that a column
    qualified by the table's name (``memories.id``) still finds it."""
    pattern = r"\b(FROM|JOIN)(\s+)(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b"

    def stand_in(match: re.Match[str]) -> str:
        aliased = _ALIASED.match(sql, match.end())
        own = "" if aliased else f" AS {match[3]}"
        return f"{match[1]}{match[2]}{_PREFIX}{match[3]}{own}"

    return re.sub(pattern, stand_in, sql, flags=re.I)


def rewound(sql: str, moment: Moment | None) -> tuple[str, dict[str, Any]]:
    """``sql`` (DuckDB's, read through the analysis path) as the store stood at
    ``moment``, and its parameters; unchanged, with none, for now (None)."""
    if moment is None:
        return sql, {}
    sources, params = _base_sources(moment)
    names = set(sources)
    ctes = [f"{_PREFIX}{name} AS ({body})" for name, body in sources.items()]
    for name, body in _views():
        ctes.append(f"{_PREFIX}{name} AS ({_pointed(body, names)})")
        names.add(name)
    query = _pointed(sql.strip(), names)
    if re.match(r"WITH\b", query, re.I):
        return f"WITH {', '.join(ctes)}, {query[4:].lstrip()}", params
    return f"WITH {', '.join(ctes)} {query}", params
