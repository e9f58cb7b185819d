"""The thread store: what the checkpoint store holds per thread, and one writer per thread.

A thread is whatever LangGraph checkpointed under a ``thread_id``; nothing else records them,
so the store itself is the list. This package reads it and serialises the turns that write it:
``ids`` (what a thread id may be), ``locks`` (one writer per thread), ``status`` (what a
thread's last checkpoint says, and the one mapping from state keys to result fields) and
``listing`` (the store's threads, summarised).

**One writer per thread** (app/threads/locks.py). Two turns on one thread at once would both
start from the same checkpoint and both write children of it — the history forks and the last
writer wins, so one turn's messages vanish without an error (issue 14, item 3). A turn therefore takes the
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

**Status** (app/threads/status.py). ``turn_state`` reads a thread's last checkpoint: a pending
``interrupt()`` is ``needs_input``; a turn whose next node never ran (the process was killed, crashed or was
interrupted with Ctrl-C — the store holds the same checkpoint in all three cases) is
``incomplete``, with the node it stopped before; otherwise the turn ended (``done``,
``failed``, ``skipped``). While another process holds the thread's lock, ``threads show``
says ``running`` instead of ``incomplete``. The vocabulary is ``graph.enums.TurnOutcome``.
"""

from app.threads.ids import MAX_THREAD_ID, check_thread_id
from app.threads.listing import SNIPPET, ThreadDetail, ThreadSummary, describe, exists, list_threads, thread_ids
from app.threads.locks import (
    POLL_S,
    FileThreadLocks,
    LocalThreadLocks,
    PostgresThreadLocks,
    ThreadLocks,
    advisory_key,
    locks_for_saver,
    locks_for_target,
)
from app.threads.status import TurnFields, TurnState, existing_paths, turn_fields, turn_state

__all__ = [
    "MAX_THREAD_ID",
    "POLL_S",
    "SNIPPET",
    "FileThreadLocks",
    "LocalThreadLocks",
    "PostgresThreadLocks",
    "ThreadDetail",
    "ThreadLocks",
    "ThreadSummary",
    "TurnFields",
    "TurnState",
    "advisory_key",
    "check_thread_id",
    "describe",
    "existing_paths",
    "exists",
    "list_threads",
    "locks_for_saver",
    "locks_for_target",
    "thread_ids",
    "turn_fields",
    "turn_state",
]
