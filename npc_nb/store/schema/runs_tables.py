"""The tables of reproducible runs (``m018``, ``m022``): snapshots and recorded replies.

SQL both engines take as it is: ``pg_migrations`` runs the very same statements, so a
snapshot and a recording read alike from a file and from PostgreSQL.
"""

from __future__ import annotations

__all__ = ["RUNS_TABLES", "SNAPSHOT_FLOOR"]

#: The tables of ``m018_reproducible_runs``, in SQL both engines take as it is.
RUNS_TABLES = (
    # A snapshot is a row, not a copy: the audit log is append-only, so the memories as
    # they stood are rebuilt from it. ``event_seq`` is the last event of this store the
    # snapshot includes (exact, unlike a time: events may share a microsecond, and
    # kernels' clocks differ), ``user_event_seq`` the same in the user's store (global
    # scope). Labels are unique per project; any number of snapshots may have none.
    """CREATE TABLE snapshots (
        id VARCHAR PRIMARY KEY,
        label VARCHAR UNIQUE,
        taken_at TIMESTAMP NOT NULL,
        taken_by VARCHAR NOT NULL,
        event_seq BIGINT NOT NULL,
        user_event_seq BIGINT NOT NULL,
        content_hash VARCHAR NOT NULL,
        memories BIGINT NOT NULL
    )""",
    # Every recorded call is kept; a replay serves the first one of its fingerprint (m027).
    """CREATE TABLE model_recordings (
        id VARCHAR PRIMARY KEY,
        fingerprint VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        caller VARCHAR,
        request VARCHAR NOT NULL,
        reply VARCHAR NOT NULL,
        prompt_tokens BIGINT,
        completion_tokens BIGINT,
        recorded_at TIMESTAMP NOT NULL
    )""",
    "CREATE INDEX model_recordings_fingerprint ON model_recordings (fingerprint)",
)

#: ``m022_snapshot_event_floor`` on both engines: a snapshot includes the events numbered
#: above ``event_floor`` up to ``event_seq``. 0 for a snapshot taken in its own store (every
#: event up to ``event_seq``); a bundle merged into a project with events of its own gives
#: its snapshots the number before their first event here (store/bundle/load.py), and -1
#: to one whose events a merge could not place in one range (reading at it is refused).
SNAPSHOT_FLOOR = "ALTER TABLE snapshots ADD COLUMN event_floor BIGINT DEFAULT 0"
