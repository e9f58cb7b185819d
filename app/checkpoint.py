"""Opens the checkpointer a setting names: a SQLite file (default) or a PostgreSQL URL."""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator


class CheckpointError(RuntimeError):
    """The checkpoint store named in the settings cannot be opened."""


@contextmanager
def open_checkpointer(target: str) -> Iterator[Any]:
    """A checkpointer for ``target``: ``postgresql://…`` or a SQLite file path."""
    if target.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres import PostgresSaver

        with ExitStack() as stack:
            try:
                saver = stack.enter_context(PostgresSaver.from_conn_string(target))
                _setup(saver)
            except Exception as e:  # psycopg raises many kinds; the user needs one line
                first = (str(e).splitlines() or [type(e).__name__])[0]
                raise CheckpointError(f"cannot use the PostgreSQL checkpoint store: {first}") from e
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


#: pg_advisory_lock key that serialises the checkpoint tables' setup across processes.
_SETUP_LOCK = 0x5065_7266_5363_7431  # "PerfScout-setup", any fixed 64-bit number


def _setup(saver: Any) -> None:
    """``PostgresSaver.setup()``, safe when several processes open a fresh database at once.

    Concurrent setups race on the catalog (``CREATE TABLE IF NOT EXISTS`` → a unique violation
    on ``pg_type_typname_nsp_index``) and on the migrations table (``checkpoint_migrations_pkey``),
    seen with four concurrent turns (tests/test_reliability_threads.py). A session advisory lock
    makes them run one after another; the second finds the tables and migrations in place.
    """
    import time

    import psycopg

    conn = saver.conn
    for attempt in range(5):
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_lock(%s)", (_SETUP_LOCK,))
            try:
                saver.setup()
            finally:
                with conn.cursor() as cur:
                    cur.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK,))
            return
        except (psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected):
            # a turn of another process writing while this one checks its tables: try again
            if attempt == 4:
                raise
            time.sleep(0.05 * (attempt + 1))
