"""Which project a PostgreSQL schema holds: the project's name, recorded in the schema.

A project's schema is named after the project one-to-one
(``_foundations.store_url.project_schema``), and the schema also records the name it was
made for, in a one-row table ``_project`` written in the transaction that creates the
schema. Opening a schema that records
another name is refused (``StoreError`` naming both), so no mapping slip, hash collision
or hand-renamed schema ever shows one project's approvals in another's context.

Schemas made before the record existed have none. The first role that may create
tables in the schema (its owner) writes it when it opens the project; a role that may
not (a reviewer, a reader) is let in without it: the name maps to that schema now as it
did then. The one case where it did not is a name that is not a plain identifier
(``Größe-Studie``, ``Cell Atlas``): earlier versions folded it, losing letters, into a
schema shared with every name spelled alike (``npc_gr_e_studie``). Opening such a
project whose schema does not exist yet, while that old schema does and records no other
project, is refused with what to do (rename it to the new name if it holds this
project, or out of the way), rather than starting an empty schema beside it in silence.

A command that only reads or reviews (``npc-nb review --store URL``) never creates a
schema: a project whose schema does not exist is refused with the projects the server
holds (``refuse_unknown_project``), listed by the names their schemas record, or by
schema name where a schema records none (or this role may not read it).

Every query here reads the catalogs (readable by every role) or the record itself; the
schema names come from ``project_schema`` (safe identifiers), or from the catalog and
checked to be such before they reach SQL text; the project name is bound.
"""

from __future__ import annotations

import re
from typing import Any

from ..._foundations.store_url import legacy_schema
from ..._foundations.utc import utc_now
from ...errors import StoreError

__all__ = [
    "claim_schema",
    "project_names",
    "record_settled",
    "refuse_legacy_twin",
    "refuse_unknown_project",
    "schema_exists",
]

#: What ``project_schema`` makes (both forms): only such names reach SQL text.
_PROJECT_SCHEMA = re.compile(r"npc_[a-z0-9_]{1,59}")

_RECORD_TABLE = """CREATE TABLE IF NOT EXISTS _project (
    name VARCHAR NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row)
)"""


def schema_exists(con: Any, schema: str) -> bool:
    found = con.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", [schema])
    return found.fetchone() is not None


def recorded_name(con: Any, schema: str) -> tuple[bool, str | None]:
    """Whether this role can read ``schema``'s record, and the name it records (None:
    no record, or not readable)."""
    found = con.execute(
        "SELECT has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = '_project'",
        [schema],
    ).fetchone()
    if found is None:
        return True, None  # a schema from before the record (or none at all)
    if not found[0]:
        return False, None
    row = con.execute(f"SELECT name FROM {schema}._project").fetchone()
    return True, (str(row[0]) if row else None)


def record_settled(con: Any, schema: str, name: str) -> bool:
    """Whether opening ``schema`` as project ``name`` needs no record written: it records
    ``name``, or it records none and this role may not write one. A StoreError if it
    records another project."""
    _, recorded = recorded_name(con, schema)
    if recorded is not None:
        _refuse_other(schema, recorded, name)
        return True
    if not schema_exists(con, schema):
        return False
    may = con.execute("SELECT has_schema_privilege(%s, 'CREATE')", [schema]).fetchone()
    return not (may and may[0])


def claim_schema(con: Any, schema: str, name: str) -> None:
    """Inside the transaction that creates or migrates the schema (``search_path`` set
    to it): record ``name`` unless a record exists, then refuse if the record names
    another project (the whole transaction rolls back)."""
    con.execute(_RECORD_TABLE)
    con.execute(
        "INSERT INTO _project (name, recorded_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        [name, utc_now()],
    )
    _refuse_other(schema, str(con.execute("SELECT name FROM _project").fetchone()[0]), name)


def refuse_legacy_twin(con: Any, schema: str, name: str) -> None:
    """A StoreError if ``schema`` does not exist yet while the schema earlier versions
    gave ``name`` does and records no other project (see the module docstring)."""
    old = legacy_schema(name)
    if old is None or old == schema or schema_exists(con, schema):
        return
    if not schema_exists(con, old):
        return
    readable, recorded = recorded_name(con, old)
    if readable and recorded is not None and recorded != name:
        return  # another project's, recorded as such: not this one's
    raise StoreError(
        f"The project {name!r} is kept in the schema {schema}, which does not exist yet, "
        f"while {old} does: that is where npc_nb kept it before project names mapped "
        "one-to-one to schemas, a schema shared by every name that folds to the same "
        f"ASCII letters. If {old} holds this project, rename it as its owner "
        f"(ALTER SCHEMA {old} RENAME TO {schema};) and open the project again. If it "
        f"does not, rename it out of the way (ALTER SCHEMA {old} RENAME TO {old}_before;) "
        "and move what belongs here with npc-nb migrate-store (docs/lab.md, 'Project "
        "names and schemas')."
    )


def _refuse_other(schema: str, recorded: str, name: str) -> None:
    if recorded != name:
        raise StoreError(
            f"The schema {schema} holds the project {recorded!r}, not {name!r}: npc_nb "
            "will not show one project's memories as another's. Check the project "
            "setting (NPC_NB_PROJECT, project=); if the schema was renamed by hand, "
            "rename it back."
        )


def project_names(con: Any) -> list[str]:
    """The projects this server holds: each npc_nb schema's recorded name, or the
    schema's own name where it records none this role can read; sorted."""
    schemas = con.execute(
        "SELECT n.nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid "
        "WHERE c.relname = '_migrations' ORDER BY 1"
    ).fetchall()
    names = set()
    for (schema,) in schemas:
        if not _PROJECT_SCHEMA.fullmatch(schema):
            continue  # not one npc_nb made: never into SQL text
        _, recorded = recorded_name(con, schema)
        names.add(recorded if recorded is not None else schema)
    return sorted(names)


def refuse_unknown_project(con: Any, schema: str, name: str, where: str) -> None:
    """A StoreError if ``schema`` (project ``name``'s) does not exist on the server
    shown as ``where``, listing the projects there; nothing is created."""
    if schema_exists(con, schema):
        return
    projects = project_names(con)
    if not projects:
        raise StoreError(
            f"No project {name!r} in {where}, which holds no npc_nb project yet: a "
            "project's schema is made when a notebook opens it with npc_nb.open("
            "store=URL). Check the URL, or pass --project-name NAME."
        )
    raise StoreError(
        f"No project {name!r} in {where}. Projects there: {', '.join(projects)}. "
        "Pass --project-name NAME."
    )
