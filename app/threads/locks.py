"""One writer per thread: the three kinds of thread lock (app/threads/__init__.py says why)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol

from app.errors import ThreadBusy
from app.threads.ids import digest

#: How often a waiting turn retries a file lock (flock has no timeout of its own).
POLL_S = 0.05


class ThreadLocks(Protocol):
    """One writer per thread. ``hold`` waits at most ``wait_s`` (0 = try once), then raises
    ThreadBusy; ``held`` says which of ``thread_ids`` another turn holds right now."""

    kind: str

    def hold(self, thread_id: str, wait_s: float) -> Any: ...

    def held(self, thread_ids: Iterable[str]) -> set[str]: ...


class FileThreadLocks:
    """``flock`` on ``<dir>/<sha256 of the id>.lock``: per open file description, so two turns
    of one process (two Python threads) exclude each other as two processes do. The files stay
    (empty, one per thread): unlinking a lock file that another turn has open would let a third
    lock a new file of the same name while the second still holds the old one."""

    kind = "file"

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)

    def _path(self, thread_id: str) -> Path:
        return self.dir / f"{digest(thread_id).hex()[:32]}.lock"

    def _open(self, thread_id: str) -> int:
        self.dir.mkdir(parents=True, exist_ok=True)
        return os.open(self._path(thread_id), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextmanager
    def hold(self, thread_id: str, wait_s: float) -> Iterator[None]:
        fd = self._open(thread_id)
        try:
            deadline = time.monotonic() + max(0.0, wait_s)
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise ThreadBusy(thread_id, wait_s) from None
                    time.sleep(POLL_S)
            yield
        finally:
            os.close(fd)  # closing the last descriptor releases the flock

    def held(self, thread_ids: Iterable[str]) -> set[str]:
        busy: set[str] = set()
        for tid in thread_ids:
            path = self._path(tid)
            if not path.exists():
                continue
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                busy.add(tid)
            finally:
                os.close(fd)
        return busy


def advisory_key(thread_id: str) -> int:
    """The thread's ``pg_advisory_lock`` key: a signed 64-bit hash of its id."""
    return int.from_bytes(digest(thread_id)[:8], "big", signed=True)


class PostgresThreadLocks:
    """``pg_advisory_lock`` on sessions of the locks' own, never the saver's connection.

    Session-level advisory locks are re-entrant within one session, so two turns of one process
    sharing a session would both "hold" the thread; each hold therefore takes a session no other
    hold is using, from a small pool of idle ones (a fresh connection costs ~20–30 ms here, more
    than the lock). The lock is released with ``pg_advisory_unlock`` before the session goes
    back to the pool; a session in any doubt (an error, Ctrl-C mid-wait) is closed instead, and
    the server drops its locks with it, as it does for a killed process.
    """

    kind = "postgres"
    #: Idle sessions kept for the next turn.
    POOL = 4

    def __init__(self, url: str):
        self.url = url
        self._guard = threading.Lock()
        self._idle: list[Any] = []

    def _connect(self) -> Any:
        import psycopg

        from app.checkpoint import CheckpointError

        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except Exception as e:  # psycopg raises many kinds; the user needs one line
            first = (str(e).splitlines() or [type(e).__name__])[0]
            raise CheckpointError(f"cannot lock the thread in the PostgreSQL checkpoint store: {first}") from e

    def _take(self) -> tuple[Any, bool]:
        with self._guard:
            if self._idle:
                return self._idle.pop(), True
        return self._connect(), False

    def _give(self, conn: Any) -> None:
        with self._guard:
            if not conn.closed and len(self._idle) < self.POOL:
                self._idle.append(conn)
                return
        conn.close()

    def _acquire(self, conn: Any, key: int, wait_s: float) -> bool:
        import psycopg

        if wait_s <= 0:
            return bool(conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0])
        # lock_timeout bounds the wait of any lock, advisory ones included; 0 would mean "wait
        # forever", hence at least 1 ms.
        conn.execute(f"SET lock_timeout = {max(1, int(wait_s * 1000))}")
        try:
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            return True
        except psycopg.errors.LockNotAvailable:
            return False

    @contextmanager
    def hold(self, thread_id: str, wait_s: float) -> Iterator[None]:
        import psycopg

        key = advisory_key(thread_id)
        conn, reused = self._take()
        try:
            try:
                ok = self._acquire(conn, key, wait_s)
            except psycopg.OperationalError:
                if not reused:
                    raise
                conn.close()  # an idle session the server dropped: one fresh try
                conn = self._connect()
                ok = self._acquire(conn, key, wait_s)
        except BaseException:
            conn.close()
            raise
        if not ok:
            self._give(conn)
            raise ThreadBusy(thread_id, wait_s)
        clean = False
        try:
            yield
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            clean = True
        finally:
            if clean:
                self._give(conn)
            else:
                conn.close()  # the session ends, and with it the lock

    def held(self, thread_ids: Iterable[str]) -> set[str]:
        ids = list(thread_ids)
        if not ids:
            return set()
        conn, _ = self._take()
        try:
            rows = conn.execute(
                "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory' "
                "AND objsubid = 1 AND granted AND database = "
                "(SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchall()
        except BaseException:
            conn.close()
            raise
        self._give(conn)
        taken = {(int(r[0]) << 32) | int(r[1]) for r in rows}
        return {tid for tid in ids if advisory_key(tid) & 0xFFFFFFFFFFFFFFFF in taken}

    def close(self) -> None:
        with self._guard:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class LocalThreadLocks:
    """For a checkpointer passed in without a location (an in-memory saver, a pool): turns of
    this process exclude each other; other processes are not seen."""

    kind = "local"

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def _lock(self, thread_id: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(thread_id, threading.Lock())

    @contextmanager
    def hold(self, thread_id: str, wait_s: float) -> Iterator[None]:
        lock = self._lock(thread_id)
        if not (lock.acquire(timeout=wait_s) if wait_s > 0 else lock.acquire(blocking=False)):
            raise ThreadBusy(thread_id, wait_s)
        try:
            yield
        finally:
            lock.release()

    def held(self, thread_ids: Iterable[str]) -> set[str]:
        with self._guard:
            return {t for t in thread_ids if t in self._locks and self._locks[t].locked()}


def locks_for_target(target: str) -> ThreadLocks:
    """The locks that go with a checkpoint target (``Settings.checkpoint_target``)."""
    if target.startswith(("postgres://", "postgresql://")):
        return PostgresThreadLocks(target)
    return FileThreadLocks(str(target) + ".locks")


def locks_for_saver(saver: Any) -> ThreadLocks:
    """The locks for a checkpointer handed in: a SqliteSaver on a file locks beside that file."""
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        with getattr(saver, "lock", None) or threading.Lock():
            rows = conn.execute("PRAGMA database_list").fetchall()
        main = next((r[2] for r in rows if r[1] == "main"), "")
        if main:
            return FileThreadLocks(main + ".locks")
    return LocalThreadLocks()
