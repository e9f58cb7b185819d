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


def _setup(saver: Any) -> None:
    """``PostgresSaver.setup()``, safe when several processes open a fresh database at once:
    concurrent ``CREATE TABLE IF NOT EXISTS`` can fail on PostgreSQL's catalog with a unique
    violation (``pg_type_typname_nsp_index``) — the other process created the table; the
    second try finds it (seen with four concurrent turns, tests/test_reliability_threads.py)."""
    import psycopg

    for attempt in range(3):
        try:
            saver.setup()
            return
        except psycopg.errors.UniqueViolation:
            if attempt == 2:
                raise
