"""Helpers shared by the test files (the fixtures live in conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import npc_nb

REPO = Path(__file__).resolve().parents[1]
#: How long a test waits for something that should happen at once: generous, since a
#: test must never depend on how fast a busy 2-core machine is (speed lives in bench/).
PATIENCE = 30.0

T = TypeVar("T")


def propose(nb: npc_nb.Project, text: str, **fields: object) -> str:
    """Queue a candidate and return its id (fails the test if it was not queued)."""
    fields.setdefault("category", "fact")
    fields.setdefault("npc", "analyst")
    outcome = nb.add_candidate(text, **fields)
    assert outcome.action == "queued", outcome
    return outcome.memory_id


def status_of(nb: npc_nb.Project, memory_id: str) -> str:
    frame = nb.memories()
    return frame.loc[frame["id"] == memory_id, "status"].item()


def seed_message(nb: npc_nb.Project, content: str, message_id: str = "m1") -> str:
    """Store a user message (as a conversation would) and return its id."""
    nb.sql(
        "INSERT INTO messages (id, conversation_id, role, content, created_at) "
        "VALUES (?, 'c1', 'user', ?, now()::TIMESTAMP)",
        [message_id, content],
        allow_write=True,
    )
    return message_id


def running_in_ci(env: Mapping[str, str] = os.environ) -> bool:
    """CI sets CI=true; there a missing browser or database server is a failure, never
    a skip."""
    return env.get("CI", "").strip().lower() in {"1", "true", "yes"}


def wait_until(
    condition: Callable[[], T], *, timeout: float = PATIENCE, what: str = "the condition"
) -> T:
    """Poll ``condition`` until it returns something truthy (returned) or fail after
    ``timeout`` seconds. For waits on another thread or process, never for speed."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.02)


def run_python(
    code: str, *, env_home: Path, wait: bool = True, expect_code: int = 0
) -> subprocess.Popen | str:
    """Run ``code`` in a fresh interpreter (another kernel) with its own NPC_NB_HOME.

    ``wait=False`` returns the running process, its stdin, stdout and stderr piped; else
    its stdout once it exits with ``expect_code`` (it is killed if it runs for minutes).
    """
    env = {**os.environ, "NPC_NB_HOME": str(env_home), "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if not wait:
        return process
    try:
        out, err = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    assert process.returncode == expect_code, err
    return out


def cell(ip: Any, source: str) -> Any:
    """Run ``source`` as a notebook cell in the IPython shell ``ip``; raise its error."""
    result = ip.run_cell(source, store_history=True)
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def magics_project(ip: Any) -> npc_nb.Project:
    """The Project the npc_nb magics in shell ``ip`` work on."""
    return ip.magics_manager.registry["NpcMagics"].project


def run_cli(*argv: str, cwd: Path, keys: str = "a\n") -> subprocess.CompletedProcess[str]:
    """``npc-nb`` run as a program in ``cwd`` with ``keys`` as its input, this
    checkout's package on its path."""
    return subprocess.run(
        [sys.executable, "-m", "npc_nb.cli", *argv],
        cwd=cwd,
        input=keys,
        text=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=PATIENCE * 4,
    )


#: The projects ``as_reviewer`` opened, closed after each test (conftest.py).
REVIEWER_KERNELS: list[npc_nb.Project] = []


def as_reviewer(nb: npc_nb.Project, name: str) -> npc_nb.Project:
    """The project of ``nb`` opened again as reviewer ``name`` (another kernel, the same
    settings): in independent review ``by=`` names only yourself, so each reviewer
    records from their own Project, as each would from their own kernel."""
    for opened in REVIEWER_KERNELS:
        if opened.store_path == nb.store_path and opened.settings.reviewer == name:
            return opened
    chosen = {
        key: getattr(nb.settings, key)
        for key in type(nb.settings).model_fields
        if nb.settings.source_of(key) in ("npc_nb.open()", "this session")
    }
    if nb.settings.store:  # a shared store: the reviewer connects as a role of their own
        chosen["store"] = reviewer_store(nb, name)
    project = npc_nb.open(nb.root, **(chosen | {"reviewer": name}))
    REVIEWER_KERNELS.append(project)
    return project


def reviewer_store(nb: npc_nb.Project, name: str) -> str:
    """The URL of ``nb``'s PostgreSQL store as a login role of reviewer ``name``'s own
    (``<name>_<database>``, created if need be and granted reviewer on the project by
    ``nb``, which must be connected as the owner or a superuser): on PostgreSQL the
    connected role is who votes, so each reviewer needs one."""
    import psycopg
    from psycopg import sql

    url = nb.settings.store
    assert url, "reviewer_store is for a project on PostgreSQL"
    parts = urlsplit(url)
    database = unquote(parts.path.lstrip("/"))
    role = f"{name}_{database}"
    with psycopg.connect(url, autocommit=True) as con:
        exists = con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone()
        if exists is None:
            con.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'pw'").format(sql.Identifier(role)))
    nb.access.grant(role, "reviewer")
    netloc = f"{quote(role, safe='')}:pw@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
