"""The lab's three roles on a shared store, as SQL an administrator runs (docs/lab.md).

- **owner** creates the project's schema and runs the migrations (it opens the project
  first, and again after an upgrade of npc_nb);
- **reviewer** decides: it reads everything and inserts and updates rows, but on the
  audit log (``memory_events``) and the votes it may only read and insert, and the
  schema's record of its project (``_project``, see ``pg_project``) it may only read;
- **reader** queries (``nb.sql``, ``%npc_sql``, the metrics) and nothing else.

Isolation between projects is by schema privileges: a role without USAGE on a project's
schema cannot read a single row of it, whatever SQL it sends. Within a project one
table has row-level security, ``votes`` (``schema.pg_extras``): a reviewer reads its
own votes, and another's only once the round is complete (to adjudicate) or settled;
a reader reads settled rounds only; the owner reads everything.

``grant_statements`` is that SQL as text, for an administrator to read and run;
``set_access`` runs it for one role (``nb.access.grant``, ``nb.access.revoke``,
``npc-nb grant``), as the schema's owner, with every name quoted as an identifier by
psycopg. Creating roles
(and their passwords) stays the administrator's job: no password passes through here.
"""

from __future__ import annotations

from typing import Literal, cast

import psycopg
from psycopg import sql

from ..._foundations.results import RoleAccess
from ...errors import StoreError

__all__ = ["grant_statements", "set_access"]

Level = Literal["owner", "reviewer", "reader", "none"]
Granted = Literal["reviewer", "reader", "none"]


def grant_statements(schema: str, *, reviewer: str, reader: str) -> list[str]:
    """What the owner runs, once the project exists, to let ``reviewer`` decide and
    ``reader`` query in ``schema`` (and in every table a later migration adds).
    The names reach SQL text: pass role and schema names, never user input."""
    tables = f"ALL TABLES IN SCHEMA {schema}"
    return [
        f"GRANT USAGE ON SCHEMA {schema} TO {reviewer}, {reader}",
        f"GRANT SELECT ON {tables} TO {reader}",
        f"GRANT SELECT, INSERT, UPDATE ON {tables} TO {reviewer}",
        f"REVOKE UPDATE ON {schema}.memory_events FROM {reviewer}",
        f"REVOKE UPDATE ON {schema}.votes FROM {reviewer}",
        f"REVOKE INSERT, UPDATE ON {schema}._project FROM {reviewer}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {reviewer}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO {reader}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} "
        f"GRANT SELECT, INSERT, UPDATE ON TABLES TO {reviewer}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES "
        f"TO {reviewer}",
    ]


#: What each level may do in a project's schema, granted to one role at a time; the
#: same privileges ``grant_statements`` gives. Default privileges are set for the
#: schema's owner (``FOR ROLE``), who creates every table a later migration adds, so a
#: superuser granting gives what the owner would.
_LEVEL_GRANTS = {
    "reader": (
        "GRANT USAGE ON SCHEMA {schema} TO {role}",
        "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}",
        "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {schema} "
        "GRANT SELECT ON TABLES TO {role}",
    ),
    "reviewer": (
        "GRANT USAGE ON SCHEMA {schema} TO {role}",
        "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA {schema} TO {role}",
        "REVOKE UPDATE ON {schema}.memory_events FROM {role}",
        "REVOKE UPDATE ON {schema}.votes FROM {role}",
        "REVOKE INSERT, UPDATE ON {schema}._project FROM {role}",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {schema} "
        "GRANT SELECT, INSERT, UPDATE ON TABLES TO {role}",
        "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {schema} "
        "GRANT USAGE, SELECT ON SEQUENCES TO {role}",
    ),
}
#: Every privilege the owner gave a role in the schema, now and on tables to come.
_REVOKE_ALL = (
    "REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}",
    "REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {role}",
    "REVOKE ALL ON SCHEMA {schema} FROM {role}",
    "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {schema} REVOKE ALL ON TABLES FROM {role}",
    "ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {schema} "
    "REVOKE ALL ON SEQUENCES FROM {role}",
)
#: What a role may do in a schema, whatever gave it (its own grants, a role it is a
#: member of, PUBLIC): ownership, USAGE, and the privileges that tell the levels apart.
_ACCESS_SQL = """
SELECT pg_has_role(r.oid, n.nspowner, 'USAGE'),
       has_schema_privilege(r.oid, n.oid, 'USAGE'),
       has_table_privilege(r.oid, m.oid, 'SELECT'),
       has_table_privilege(r.oid, m.oid, 'UPDATE') AND has_table_privilege(r.oid, e.oid, 'INSERT')
FROM pg_roles r, pg_namespace n
JOIN pg_class m ON m.relnamespace = n.oid AND m.relname = 'memories'
JOIN pg_class e ON e.relnamespace = n.oid AND e.relname = 'memory_events'
WHERE r.rolname = %s AND n.nspname = %s
"""


def set_access(
    con: psycopg.Connection, schema: str, role: str, level: str | None, *, project: str
) -> RoleAccess:
    """Give ``role`` exactly ``level`` (reader or reviewer; None: nothing) in ``schema``,
    as its owner, inside the caller's transaction: first every privilege the owner gave
    it is taken back, then the level's are granted. Refused, changing nothing, unless
    the connected role owns the schema (or is a superuser) and ``role`` exists and does
    not own it. Returns what ``role`` may do now, as the server sees it."""
    owner = _owner_granting(con, schema, project)
    _check_member(con, schema, role, project)
    names = {
        "schema": sql.Identifier(schema),
        "role": sql.Identifier(role),
        "owner": sql.Identifier(owner),
    }
    for statement in (*_REVOKE_ALL, *_LEVEL_GRANTS.get(level or "", ())):
        con.execute(sql.SQL(statement).format(**names))
    asked = cast(Granted, level or "none")
    return RoleAccess(role, project, schema, _level(con, schema, role), asked)


def _owner_granting(con: psycopg.Connection, schema: str, project: str) -> str:
    """The schema owner's name, if the connected role may grant as the owner."""
    found = con.execute(
        "SELECT pg_get_userbyid(nspowner), pg_has_role(current_user, nspowner, 'USAGE'), "
        "current_user FROM pg_namespace WHERE nspname = %s",
        [schema],
    ).fetchone()
    assert found is not None  # the project's schema: the store has it open
    owner, may, caller = found
    if not may:
        raise StoreError(
            f"The database role {caller!r} may not grant or revoke access to project "
            f"{project!r}: only the owner of its schema {schema}, {owner!r}, can (or a "
            f"superuser). Nothing was changed. Open the project as {owner!r} and grant "
            "again, or ask the lab's database administrator."
        )
    return str(owner)


def _check_member(con: psycopg.Connection, schema: str, role: str, project: str) -> None:
    found = con.execute(
        "SELECT pg_has_role(r.oid, n.nspowner, 'USAGE') FROM pg_roles r, pg_namespace n "
        "WHERE r.rolname = %s AND n.nspname = %s",
        [role, schema],
    ).fetchone()
    if found is None:
        name = sql.Identifier(role).as_string(con)
        raise StoreError(
            f"There is no database role {role!r} on this server. Roles are created by a "
            f"database administrator, not by npc_nb: as a superuser, CREATE ROLE {name} "
            f"LOGIN; then set its password in psql with \\password {name} (never in a "
            "file or a notebook), and grant again. Nothing was changed."
        )
    if found[0]:
        raise StoreError(
            f"{role!r} owns project {project!r} (schema {schema}), is a member of its owner "
            "or is a superuser: it may do everything there, and grant and revoke do not "
            "change its access. Nothing was changed."
        )


def _level(con: psycopg.Connection, schema: str, role: str) -> Level:
    found = con.execute(_ACCESS_SQL, [role, schema]).fetchone()
    assert found is not None  # the role and the schema exist: checked above
    owns, uses, reads, decides = found
    if owns:
        return "owner"
    if not uses:
        return "none"
    return "reviewer" if decides else "reader" if reads else "none"
