"""A throwaway PostgreSQL server on loopback, for the tests of the shared store.

One server per test session: ``initdb`` in a temporary folder (trust authentication,
loopback only), then the ``postgres`` binary itself as a child of this process, on a free
port of 127.0.0.1 with a private socket folder. The key choice is that the server stays
our child rather than a daemon started by ``pg_ctl``: it is asked to shut down fast at the
end of the session, at interpreter exit (``atexit``), and by the kernel when this process
dies without running either (a parent-death signal), so no run leaves a server behind.

``NPC_NB_TEST_POSTGRES_URL`` (a superuser URL) points the tests at an existing server
instead; ``NPC_NB_TEST_POSTGRES_BINDIR`` names the folder of the server binaries when they
are somewhere unusual (an empty folder hides them, to see the skip). PostgreSQL refuses
to run as root, so as root the server runs as the ``postgres`` user the Debian package
creates.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

#: What to install when no server can run here.
POSTGRES_INSTALL = "sudo apt-get install postgresql"
EXTERNAL_URL_VARIABLE = "NPC_NB_TEST_POSTGRES_URL"
BINDIR_VARIABLE = "NPC_NB_TEST_POSTGRES_BINDIR"
DEBIAN_BINDIRS = "/usr/lib/postgresql/*/bin"
HOST = "127.0.0.1"
SUPERUSER = "postgres"
#: Throwaway data: durability would only slow the tests down.
SERVER_SETTINGS = {
    "listen_addresses": HOST,
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
}
HBA = "local all all trust\nhost all all 127.0.0.1/32 trust\n"
#: How long starting may take on a busy machine (a limit on a wait, never on speed).
START_PATIENCE = 120.0
PORT_ATTEMPTS = 5
#: Looked up here, not in the forked child, where loading a library is unsafe.
_PRCTL = ctypes.CDLL(None).prctl if sys.platform == "linux" else None
_PR_SET_PDEATHSIG = 1


class PostgresUnavailable(RuntimeError):
    """No test server can run here; the message says why and what to install."""


@dataclass
class PostgresServer:
    """A server the tests may use as superuser: its URL and a few conveniences."""

    url: str
    host: str
    port: int
    #: Started by this harness (else the one NPC_NB_TEST_POSTGRES_URL names).
    throwaway: bool = False
    _process: subprocess.Popen | None = field(default=None, repr=False)
    _base: Path | None = field(default=None, repr=False)
    _created: list[str] = field(default_factory=list, repr=False)

    def url_for(
        self, database: str, *, user: str | None = None, password: str | None = None
    ) -> str:
        """This server's URL for ``database``, as ``user`` (default: the superuser)."""
        parts = urlsplit(self.url)
        if user is None:  # the superuser, with the password the server's URL gave
            user = unquote(parts.username or SUPERUSER)
            password = unquote(parts.password) if parts.password is not None else None
        login = quote(user, safe="")
        if password is not None:
            login += ":" + quote(password, safe="")
        netloc = f"{login}@{parts.hostname}:{parts.port or 5432}"
        return urlunsplit((parts.scheme, netloc, "/" + quote(database), parts.query, ""))

    @staticmethod
    def database_name(url: str) -> str:
        return unquote(urlsplit(url).path.lstrip("/")) or SUPERUSER

    def execute(
        self,
        sql: str,
        params: Sequence[Any] | Mapping[str, Any] | None = None,
        *,
        database: str = SUPERUSER,
    ) -> list[tuple[Any, ...]]:
        """Run one statement as superuser in autocommit on ``database`` (a name or URL)."""
        import psycopg

        url = database if "://" in database else self.url_for(database)
        with psycopg.connect(url, autocommit=True) as connection:
            cursor = connection.execute(sql, params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def new_database(self, prefix: str = "t") -> str:
        """Create an empty database and return its superuser URL."""
        name = f"{prefix}_{secrets.token_hex(5)}"
        self.execute(f'CREATE DATABASE "{name}"')
        self._created.append(name)
        return self.url_for(name)

    def stop(self) -> None:
        """Shut a server we started down (fast) and delete its files; for a server we
        were pointed at, drop the databases we created. Safe to call twice."""
        atexit.unregister(self.stop)
        if not self.throwaway:
            for name in self._created:
                self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        elif self._process is not None:
            _shut_down(self._process)
            self._process = None
            if self._base is not None:
                shutil.rmtree(self._base, ignore_errors=True)
        self._created.clear()

    def pause(self) -> None:
        """Fast shutdown (every session ends, open transactions roll back), keeping the
        data and the port for ``resume``; only for a server this harness started."""
        if not self.throwaway or self._process is None or self._base is None:
            raise PostgresUnavailable("only a throwaway server this harness started can pause")
        _shut_down(self._process)

    def resume(self) -> None:
        """Start a paused server again on the same port with the same data."""
        assert self._process is not None and self._base is not None, "not a paused server"
        if self._process.poll() is None:
            return
        bindir = Path(str(self._process.args[0])).parent  # type: ignore[index]
        base = self._base
        process = _launch(
            bindir, base / "data", base / "sockets", self.port, _server_user(), base / "server.log"
        )
        if not _wait_ready(process, self.port):
            log = _tail(base / "server.log")
            raise PostgresUnavailable(f"the server did not come back:\n{log}")
        self._process = process

    def restart(self) -> None:
        """``pause`` then ``resume``: what a server restart does to its clients."""
        self.pause()
        self.resume()

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def external_url(env: Mapping[str, str] = os.environ) -> str | None:
    return env.get(EXTERNAL_URL_VARIABLE, "").strip() or None


def find_bindir(env: Mapping[str, str] = os.environ) -> Path | None:
    """The folder holding ``initdb`` and ``postgres``: ``NPC_NB_TEST_POSTGRES_BINDIR`` if
    set (and nowhere else), else Debian's newest, else ``pg_config --bindir``, else PATH."""
    if BINDIR_VARIABLE in env:
        candidates = [Path(env[BINDIR_VARIABLE])]
    else:
        debian = sorted(Path("/").glob(DEBIAN_BINDIRS.lstrip("/")), key=_version, reverse=True)
        candidates = [*debian, *_pg_config_bindir(env)]
        on_path = shutil.which("postgres", path=env.get("PATH"))
        candidates += [Path(on_path).parent] if on_path else []
    return next((c for c in candidates if _has_server(c)), None)


def missing_postgres(env: Mapping[str, str] = os.environ) -> str | None:
    """Why the PostgreSQL tests cannot run here, or None (they may still fail to start)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the PostgreSQL tests need psycopg: pip install -e '.[dev]'"
    if external_url(env) or find_bindir(env):
        return None
    where = env.get(BINDIR_VARIABLE) or f"{DEBIAN_BINDIRS}, pg_config --bindir or PATH"
    return (
        f"the PostgreSQL tests need a PostgreSQL server, whose binaries (initdb, postgres) "
        f"are not in {where}: install it with `{POSTGRES_INSTALL}`, or set "
        f"{EXTERNAL_URL_VARIABLE} to a superuser URL of a server to use"
    )


def start_postgres(env: Mapping[str, str] = os.environ) -> PostgresServer:
    """The server for a test session: the external one, else a fresh throwaway one.
    Raises PostgresUnavailable saying why when none can run."""
    reason = missing_postgres(env)
    if reason is not None:
        raise PostgresUnavailable(reason)
    url = external_url(env)
    if url is not None:
        parts = urlsplit(url)
        return PostgresServer(url=url, host=parts.hostname or HOST, port=parts.port or 5432)
    bindir = find_bindir(env)
    assert bindir is not None  # missing_postgres checked
    return _start_throwaway(bindir)


def _start_throwaway(bindir: Path) -> PostgresServer:
    base = Path(tempfile.mkdtemp(prefix="npc_nb-postgres-"))
    try:
        owner = _server_user()
        data, sockets = base / "data", base / "sockets"
        sockets.mkdir(mode=0o700)
        if owner is not None:
            for path in (base, sockets):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        _initdb(bindir, data, owner)
        (data / "pg_hba.conf").write_text(HBA)
        for _ in range(PORT_ATTEMPTS):
            port = _free_port()
            process = _launch(bindir, data, sockets, port, owner, base / "server.log")
            if _wait_ready(process, port):
                server = PostgresServer(
                    url=f"postgresql://{SUPERUSER}@{HOST}:{port}/{SUPERUSER}",
                    host=HOST,
                    port=port,
                    throwaway=True,
                    _process=process,
                    _base=base,
                )
                atexit.register(server.stop)
                return server
            if "could not bind" not in _tail(base / "server.log"):
                break  # not a port taken in the meantime: trying again cannot help
        raise PostgresUnavailable(
            f"the PostgreSQL test server did not start:\n{_tail(base / 'server.log')}\n"
            f"(is `{POSTGRES_INSTALL}` complete?)"
        )
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise


def _initdb(bindir: Path, data: Path, owner: pwd.struct_passwd | None) -> None:
    command = [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", SUPERUSER]
    command += ["--no-sync", "--encoding=UTF8", "--locale=C"]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, **_as_user(owner, data.parent)
        )
        failure = done.stderr.strip() if done.returncode != 0 else None
    except OSError as error:  # not runnable, or not by the server's user
        failure = str(error)
    if failure is not None:
        raise PostgresUnavailable(
            f"initdb failed for the PostgreSQL test server:\n{failure}\n"
            f"(is `{POSTGRES_INSTALL}` complete?)"
        )


def _launch(
    bindir: Path,
    data: Path,
    sockets: Path,
    port: int,
    owner: pwd.struct_passwd | None,
    log: Path,
) -> subprocess.Popen:
    settings = {**SERVER_SETTINGS, "port": str(port), "unix_socket_directories": str(sockets)}
    command = [str(bindir / "postgres"), "-D", str(data)]
    for name, value in settings.items():
        command += ["-c", f"{name}={value}"]
    with log.open("ab") as output:  # the child keeps its own descriptor
        try:
            return subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,
                **_as_user(owner, data.parent),
            )
        except OSError as error:
            raise PostgresUnavailable(f"could not run {command[0]}: {error}") from error


def _wait_ready(process: subprocess.Popen, port: int) -> bool:
    """Whether the server accepts connections (False once it has exited)."""
    import psycopg

    url = f"postgresql://{SUPERUSER}@{HOST}:{port}/{SUPERUSER}"
    deadline = time.monotonic() + START_PATIENCE
    while process.poll() is None:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return True
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                _shut_down(process)
                return False
            time.sleep(0.05)
    process.wait()
    return False


def _shut_down(process: subprocess.Popen) -> None:
    """PostgreSQL's fast shutdown (SIGINT): roll back open transactions, stop now."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()


def _die_with_parent() -> None:
    """In the server's process: a fast shutdown when the test process dies (Linux). The
    kernel's "parent" is the thread that started the server: start it from a thread that
    lives as long as the process (pytest's fixtures run on the main thread)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGINT)


def _server_user() -> pwd.struct_passwd | None:
    """As root, the unprivileged user the server runs as; otherwise None (ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresUnavailable(
        f"PostgreSQL refuses to run as root and there is no postgres user: `{POSTGRES_INSTALL}`"
    )


def _as_user(owner: pwd.struct_passwd | None, cwd: Path) -> dict[str, Any]:
    if owner is None:
        return {"cwd": cwd}
    return {"cwd": cwd, "user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": []}


def _has_server(folder: Path) -> bool:
    return all(os.access(folder / name, os.X_OK) for name in ("initdb", "postgres"))


def _pg_config_bindir(env: Mapping[str, str]) -> list[Path]:
    pg_config = shutil.which("pg_config", path=env.get("PATH"))
    if pg_config is None:
        return []
    done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
    return [Path(done.stdout.strip())] if done.returncode == 0 else []


def _version(folder: Path) -> tuple[int, ...]:
    digits = folder.parent.name.split(".")
    return tuple(int(d) for d in digits if d.isdigit())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def lab_project(
    server: PostgresServer,
    url: str,
    folder: Path,
    levels: Mapping[str, str],
    *,
    review_mode: str | None = None,
) -> dict[str, str]:
    """A project at ``folder`` on the database of ``url``, made by an owner role; one login
    role per entry of ``levels`` (a kind such as "alice" -> "reviewer" or "reader"),
    unique to this database and granted its level by the owner; ``review_mode``: the
    project's policy, set by the owner. Returns each kind's URL (the owner's too), each
    role's name (``<kind>_role``), the superuser's URL and the folder."""
    import npc_nb  # the package under test, only where a lab is made

    database = PostgresServer.database_name(url)
    roles = {kind: f"{kind}_{database}" for kind in ("owner", *levels)}
    for role in roles.values():
        server.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    server.execute(f"GRANT CREATE ON DATABASE {database} TO {roles['owner']}")
    urls = {
        kind: server.url_for(database, user=role, password="pw") for kind, role in roles.items()
    }
    (folder / ".git").mkdir(parents=True)
    owner = npc_nb.open(folder, store=urls["owner"])
    for kind, level in levels.items():
        owner.access.grant(roles[kind], level)  # type: ignore[arg-type]
    if review_mode is not None:
        owner.access.set_policy(review_mode=review_mode)  # type: ignore[arg-type]
    owner.close()
    named = {f"{kind}_role": role for kind, role in roles.items()}
    return urls | named | {"superuser": url, "folder": str(folder)}
