"""The thread store: what the checkpoint store holds per thread, and one writer per thread.

A thread is whatever LangGraph checkpointed under a ``thread_id``; nothing else records them,
so the store itself is the list. This module reads it (ids, each thread's status, a summary)
and serialises the turns that write it:

**One writer per thread.** Two turns on one thread at once would both start from the same
checkpoint and both write children of it — the history forks and the last writer wins, so
one turn's messages vanish without an error (issue 14, item 3). A turn therefore takes the
thread's lock before it reads the state and keeps it until its last checkpoint is written.
The lock dies with its process, so a turn killed with SIGKILL never leaves the thread "busy":

- SQLite: ``fcntl.flock`` on an empty file per thread in ``<checkpoint file>.locks/`` (the
  kernel drops a flock when the last descriptor of its holder closes, which includes death);
- PostgreSQL: ``pg_advisory_lock`` on a session of its own, keyed by a 64-bit hash of the
  thread id (the server drops session locks when the session ends, and a killed client's
  socket closes at once);
- a checkpointer handed to ``PerfScout`` without a location: a lock of this process only.

A second turn waits at most ``Settings.thread_wait_s`` (``PERFSCOUT_THREAD_WAIT``) and then
raises ``ThreadBusy`` — it never runs on a forked history. docs/reliability.md has the timings.

**Status.** ``turn_state`` reads a thread's last checkpoint: a pending ``interrupt()`` is
``needs_input``; a turn whose next node never ran (the process was killed, crashed or was
interrupted with Ctrl-C — the store holds the same checkpoint in all three cases) is
``incomplete``, with the node it stopped before; otherwise the turn ended (``done``,
``failed``, ``skipped``). While another process holds the thread's lock, ``threads show``
says ``running`` instead of ``incomplete``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sqlite3
import threading
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal, Protocol

from pydantic import BaseModel, Field

from app.errors import RequestError, ThreadBusy
from graph.enums import Node, TurnOutcome

#: What a turn's last checkpoint says (the values of ``graph.enums.TurnOutcome``).
#: ``incomplete``: it stopped between nodes and can be continued (``perfscout resume T`` /
#: ``PerfScout.continue_run``).
Status = Literal["done", "needs_input", "failed", "skipped", "incomplete"]
#: How much of a message a listing shows.
SNIPPET = 80
#: Longest thread id accepted (it is stored in every checkpoint row).
MAX_THREAD_ID = 256
#: How often a waiting turn retries a file lock (flock has no timeout of its own).
POLL_S = 0.05


# ----------------------------------------------------------------------------------------------
# Thread ids
# ----------------------------------------------------------------------------------------------


def check_thread_id(thread_id: Any) -> str:
    """The thread id, or RequestError in one line. An id is text the stores can keep: valid
    Unicode (a shell can pass bytes that are not UTF-8; Python turns them into lone surrogates
    that SQLite and PostgreSQL refuse), no control characters (they would reach terminals
    through ``threads list``), at most MAX_THREAD_ID characters."""
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise RequestError("the thread id is empty: give a name such as --thread demo")
    shown = ascii(thread_id)[:80]
    try:
        thread_id.encode("utf-8")
    except UnicodeEncodeError:
        raise RequestError(f"thread id {shown} is not valid UTF-8 text: use letters, digits, '-' or '_'") from None
    if any(unicodedata.category(c) == "Cc" for c in thread_id):
        raise RequestError(f"thread id {shown} contains control characters: use letters, digits, '-' or '_'")
    if len(thread_id) > MAX_THREAD_ID:
        raise RequestError(f"thread id {shown} is longer than {MAX_THREAD_ID} characters")
    return thread_id


def _digest(thread_id: str) -> bytes:
    return hashlib.sha256(b"perfscout-thread\0" + thread_id.encode("utf-8")).digest()


# ----------------------------------------------------------------------------------------------
# Locks
# ----------------------------------------------------------------------------------------------


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
        return self.dir / f"{_digest(thread_id).hex()[:32]}.lock"

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
    return int.from_bytes(_digest(thread_id)[:8], "big", signed=True)


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


# ----------------------------------------------------------------------------------------------
# Status of a thread's last turn
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnState:
    status: Status
    #: The pending question (needs_input).
    question: dict[str, Any] | None = None
    #: The node the turn stopped before (incomplete): it runs when the turn is continued.
    stopped_before: str | None = None
    #: The node whose work was saved but whose successor was never scheduled (incomplete):
    #: LangGraph lets a running node finish on Ctrl-C, then stops; continuing takes its edge.
    stopped_after: str | None = None
    #: The error a node raised, when that is why it stopped (incomplete).
    error: str | None = None


def turn_state(snap: Any) -> TurnState:
    """The status of a thread from its ``graph.get_state`` snapshot (a pure read)."""
    st = snap.values or {}
    question = None
    for task in snap.tasks or ():
        for intr in task.interrupts or ():
            question = intr.value if isinstance(intr.value, dict) else {"prompt": str(intr.value)}
    if question is not None:
        return TurnState(TurnOutcome.NEEDS_INPUT.value, question=question)
    if snap.next or snap.tasks:
        # A finished turn's last checkpoint has no tasks. Tasks left over mean the turn stopped
        # between checkpoints: before ``snap.next`` (not run, or run and killed before its
        # writes were saved), or after a task whose writes were saved (``next`` is empty then).
        errors = [str(t.error) for t in snap.tasks or () if getattr(t, "error", None)]
        first = errors[0].splitlines()[0][:300] if errors else None
        if snap.next:
            return TurnState(TurnOutcome.INCOMPLETE.value, stopped_before=str(snap.next[0]), error=first)
        done = [t.name for t in snap.tasks if getattr(t, "result", None) is not None]
        return TurnState(TurnOutcome.INCOMPLETE.value, stopped_after=(done or [snap.tasks[0].name])[0], error=first)
    outcome = st.get("outcome")
    if outcome in (TurnOutcome.FAILED.value, TurnOutcome.SKIPPED.value):
        return TurnState(outcome)  # written by the fail node / the stage runner's skip
    if "outcome" not in st and (legacy := _legacy_outcome(st)):
        return TurnState(legacy)  # a thread checkpointed before ``outcome`` existed
    return TurnState(TurnOutcome.DONE.value)


def _legacy_outcome(st: dict[str, Any]) -> Status | None:
    """How a turn checkpointed by PerfScout 0.1 (no ``outcome`` key) ended."""
    if (st.get("route_history") or [""])[-1].startswith(Node.FAIL.value):
        return TurnOutcome.FAILED.value
    return TurnOutcome.SKIPPED.value if st.get("skipped") else None


def existing_paths(report: dict[str, Any] | None) -> dict[str, str]:
    """The report's file entries that exist on disk (a report dict also holds counts and flags)."""
    out: dict[str, str] = {}
    for key, value in (report or {}).items():
        if key != "dir" and isinstance(value, str) and value and Path(value).is_file():
            out[key] = value
    return out


# ----------------------------------------------------------------------------------------------
# Listing
# ----------------------------------------------------------------------------------------------


class ThreadSummary(BaseModel):
    thread_id: str
    #: When the last checkpoint was written (ISO 8601, UTC).
    updated: str | None = None
    #: ``turn_state``'s status, or ``running`` while another turn holds the thread.
    status: str
    route: str | None = None
    last_request: str | None = None
    answer: str | None = None
    turns: int = 0
    #: The node an ``incomplete`` (or ``running``) turn stopped before / is at.
    stopped_before: str | None = None
    #: The node an ``incomplete`` turn finished last, when it stopped before the next was chosen.
    stopped_after: str | None = None


class ThreadDetail(ThreadSummary):
    route_info: dict[str, Any] = Field(default_factory=dict)
    route_history: list[str] = Field(default_factory=list)
    question: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    report_paths: dict[str, str] = Field(default_factory=dict)
    analysis_source: str | None = None
    collected: dict[str, Any] | None = None
    run_dir: str | None = None
    diagnosis: str | None = None
    #: The error a node raised (incomplete), first line.
    error: str | None = None
    messages: int = 0


def thread_ids(saver: Any) -> list[tuple[str, str]]:
    """(thread id, newest checkpoint id) per thread, newest first.

    One ``GROUP BY`` on the savers' ``checkpoints`` table (SQLite or PostgreSQL) — walking
    ``saver.list(None)`` would load every checkpoint of every thread."""
    conn = getattr(saver, "conn", None)
    sql = (
        "SELECT thread_id, MAX(checkpoint_id) AS last FROM checkpoints "
        "WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY last DESC"
    )
    if isinstance(conn, sqlite3.Connection):
        # The saver's own cursor: it creates the tables on first use and holds its lock.
        with saver.cursor(transaction=False) as cur:
            rows = cur.execute(sql).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]
    if conn is not None and hasattr(conn, "execute") and hasattr(saver, "lock"):  # one psycopg connection
        with saver.lock:
            rows = conn.execute(sql).fetchall()
        return [(_col(r, 0, "thread_id"), _col(r, 1, "last")) for r in rows]
    # Any other saver: walk its checkpoints (newest first per thread, by the saver's contract).
    seen: dict[str, str] = {}
    for tup in saver.list(None):
        cfg = tup.config.get("configurable", {})
        tid = cfg.get("thread_id")
        if tid is not None and tid not in seen and not cfg.get("checkpoint_ns"):
            seen[tid] = cfg.get("checkpoint_id") or ""
    return sorted(seen.items(), key=lambda kv: kv[1], reverse=True)


def _col(row: Any, i: int, name: str) -> str:
    return str(row[name] if isinstance(row, dict) else row[i])


def _last_human(state: dict[str, Any]) -> str | None:
    for m in reversed(list(state.get("messages") or [])):
        if getattr(m, "type", None) == "human":
            return str(m.content)
    return None


def _snip(text: str | None) -> str | None:
    if text is None:
        return None
    one = " ".join(str(text).split())
    return one if len(one) <= SNIPPET else one[: SNIPPET - 1] + "…"


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def exists(saver: Any, thread_id: str) -> bool:
    return saver.get_tuple(_config(thread_id)) is not None


def describe(graph: Any, saver: Any, thread_id: str, running: bool = False) -> ThreadDetail | None:
    """One thread's last state, summarised; None when the store has no such thread."""
    tup = saver.get_tuple(_config(thread_id))
    if tup is None:
        return None
    snap = graph.get_state(_config(thread_id))
    state = snap.values or {}
    ts = turn_state(snap)
    status: str = ts.status
    if running:  # another turn holds the thread: its checkpoint is a step of that turn
        status = "running"
    analysis = state.get("analysis") or {}
    messages = list(state.get("messages") or [])
    return ThreadDetail(
        thread_id=thread_id,
        updated=tup.checkpoint.get("ts"),
        status=status,
        route=state.get("_route"),
        last_request=_last_human(state),
        answer=state.get("answer") if ts.question is None else None,
        turns=sum(1 for m in messages if getattr(m, "type", None) == "human"),
        stopped_before=ts.stopped_before,
        stopped_after=ts.stopped_after,
        route_info=dict(state.get("route_info") or {}),
        route_history=list(state.get("route_history") or []),
        question=ts.question,
        report=state.get("report"),
        report_paths=existing_paths(state.get("report")),
        analysis_source=analysis.get("source"),
        collected=state.get("collected"),
        run_dir=state.get("run_dir"),
        diagnosis=state.get("diagnosis"),
        error=ts.error,
        messages=len(messages),
    )


def list_threads(graph: Any, saver: Any, locks: ThreadLocks, limit: int | None = None) -> list[ThreadSummary]:
    """The store's threads, newest first, each with its last route, status and request."""
    ids = [tid for tid, _ in thread_ids(saver)[: limit or None]]
    running = locks.held(ids)
    out: list[ThreadSummary] = []
    for tid in ids:
        d = describe(graph, saver, tid, running=tid in running)
        if d is not None:
            out.append(
                ThreadSummary(
                    thread_id=d.thread_id,
                    updated=d.updated,
                    status=d.status,
                    route=d.route,
                    last_request=_snip(d.last_request),
                    answer=_snip(d.answer),
                    turns=d.turns,
                    stopped_before=d.stopped_before,
                    stopped_after=d.stopped_after,
                )
            )
    return out
