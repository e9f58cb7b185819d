"""A real PostgreSQL server on loopback for the checkpoint tests and the load benchmark.

Order: a server named by ``PERFSCOUT_TEST_POSTGRES_URL``; else a private server started from
the installed PostgreSQL binaries (Debian's ``/usr/lib/postgresql/<v>/bin``, or ``pg_config
--bindir``) in a temp folder on a free port, with trust auth on 127.0.0.1 only and fsync off
(throwaway data). As root, initdb refuses to run, so the server runs as the ``postgres`` user.
One server per process, stopped at exit. ``tests/setup_postgres.sh`` installs the binaries.

``start()`` returns ``(server, None)`` or ``(None, why_not)``: tests skip only with that reason.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field

ENV_URL = "PERFSCOUT_TEST_POSTGRES_URL"


@dataclass
class PostgresServer:
    #: URL of the maintenance database (``postgres``) with a superuser.
    admin_url: str
    #: Set when this process started the server (then it stops it at exit).
    data_dir: str | None = None
    bin_dir: str | None = None
    run_as: str | None = None
    databases: list[str] = field(default_factory=list)

    def create_database(self, prefix: str = "perfscout") -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.admin_url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        if self.data_dir and self.bin_dir:
            _run_as(self.run_as, [os.path.join(self.bin_dir, "pg_ctl"), "-D", self.data_dir, "-m", "immediate",
                                  "-w", "stop"], check=False)
            shutil.rmtree(os.path.dirname(self.data_dir), ignore_errors=True)
            self.data_dir = None


_lock = threading.Lock()
_cached: tuple[PostgresServer | None, str | None] | None = None


def start() -> tuple[PostgresServer | None, str | None]:
    """The process-wide server, started on first use."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = _find_or_start()
            if _cached[0] is not None:
                atexit.register(_cached[0].stop)
        return _cached


def _find_or_start() -> tuple[PostgresServer | None, str | None]:
    try:
        import psycopg  # noqa: F401
    except ImportError as e:
        return None, f"psycopg is not installed: {e}"
    url = os.environ.get(ENV_URL)
    if url:
        try:
            _ping(url)
        except Exception as e:
            return None, f"{ENV_URL}={url} does not answer: {str(e).splitlines()[0] if str(e) else e!r}"
        return PostgresServer(admin_url=url), None
    bin_dir = find_bin_dir()
    if bin_dir is None:
        return None, "no PostgreSQL binaries (initdb, pg_ctl) found; run tests/setup_postgres.sh"
    return _start_private(bin_dir)


def find_bin_dir() -> str | None:
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_version_key, reverse=True)
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10).stdout.strip()
            if out:
                cands.append(out)
        except (OSError, subprocess.SubprocessError):
            pass
    for c in cands:
        if os.access(os.path.join(c, "initdb"), os.X_OK) and os.access(os.path.join(c, "pg_ctl"), os.X_OK):
            return c
    return None


def _version_key(path: str) -> tuple[int, ...]:
    v = path.rstrip("/").split("/")[-2]
    return tuple(int(x) for x in v.split(".") if x.isdigit())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as(user: str | None, argv: list[str], check: bool = True) -> subprocess.CompletedProcess:
    if user:
        argv = ["runuser", "-u", user, "--", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=check)


def _start_private(bin_dir: str) -> tuple[PostgresServer | None, str | None]:
    run_as = None
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            return None, "running as root and there is no 'postgres' user to run the server as"
        if not shutil.which("runuser"):
            return None, "running as root and runuser is missing"
        run_as = "postgres"
    base = tempfile.mkdtemp(prefix="perfscout-pg-")
    if run_as:
        os.chown(base, pw.pw_uid, pw.pw_gid)
    data = os.path.join(base, "data")
    port = _free_port()
    try:
        _run_as(run_as, [os.path.join(bin_dir, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
                         "-E", "UTF8", "--no-sync"])
        opts = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        _run_as(run_as, [os.path.join(bin_dir, "pg_ctl"), "-D", data, "-o", opts, "-l",
                         os.path.join(base, "server.log"), "-w", "-t", "60", "start"])
    except (OSError, subprocess.SubprocessError) as e:
        log = ""
        if isinstance(e, subprocess.CalledProcessError):
            log = (e.stderr or e.stdout or "").strip().splitlines()[-1:] or [""]
            log = log[0]
        shutil.rmtree(base, ignore_errors=True)
        return None, f"PostgreSQL in {bin_dir} did not start: {type(e).__name__} {log}".strip()
    server = PostgresServer(admin_url=f"postgresql://postgres@127.0.0.1:{port}/postgres", data_dir=data,
                            bin_dir=bin_dir, run_as=run_as)
    try:
        _ping(server.admin_url)
    except Exception as e:
        server.stop()
        return None, f"PostgreSQL started but does not answer: {e}"
    return server, None


def _ping(url: str) -> None:
    import psycopg

    with psycopg.connect(url, connect_timeout=10) as conn:
        conn.execute("SELECT 1")


def require() -> "PostgresServer":
    """The server, for a test that needs one. In CI (``CI`` set) a server that cannot start fails
    the test, since .ci/run installs PostgreSQL; on a developer's machine without it, the test
    skips with the reason (the one case the issue allows)."""
    import pytest

    server, why = start()
    if server is None:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL cannot start in CI: {why}")
        pytest.skip(f"PostgreSQL cannot start here: {why}")
    return server
