"""The lab's three roles on a shared store, as SQL an administrator runs (docs/lab.md).

- **owner** creates the project's schema and runs the migrations (it opens the project
  first, and again after an upgrade of npc_nb);
- **reviewer** decides: it reads everything and inserts and updates rows, but on the
  audit log (``memory_events``) it may only read and insert, and the schema's record of
  its project (``_project``, see ``pg_project``) it may only read;
- **reader** queries (``nb.sql``, ``%npc_sql``, the metrics) and nothing else.

Isolation between projects is by schema privileges: a role without USAGE on a project's
schema cannot read a single row of it, whatever SQL it sends. Row-level security is not
needed, since a project never shares a table with another.
"""

from __future__ import annotations

__all__ = ["grant_statements"]


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
        f"REVOKE INSERT, UPDATE ON {schema}._project FROM {reviewer}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {reviewer}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO {reader}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} "
        f"GRANT SELECT, INSERT, UPDATE ON TABLES TO {reviewer}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES "
        f"TO {reviewer}",
    ]
