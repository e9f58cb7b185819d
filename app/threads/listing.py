"""The threads in a checkpoint store: their ids (one query), and each one summarised."""

from __future__ import annotations

import sqlite3
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.threads.locks import ThreadLocks
from app.threads.status import turn_fields, turn_state
from graph.enums import TurnOutcome

#: How much of a message a listing shows.
SNIPPET = 80


class ThreadSummary(BaseModel):
    model_config = ConfigDict(use_enum_values=True)

    thread_id: str
    #: When the last checkpoint was written (ISO 8601, UTC).
    updated: str | None = None
    #: ``turn_state``'s status, or ``running`` while another turn holds the thread.
    status: TurnOutcome
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
    fields = turn_fields(snap, ts)
    if running:  # another turn holds the thread: its checkpoint is a step of that turn
        fields["status"] = TurnOutcome.RUNNING
    messages = list(state.get("messages") or [])
    return ThreadDetail(
        thread_id=thread_id,
        updated=tup.checkpoint.get("ts"),
        last_request=_last_human(state),
        turns=sum(1 for m in messages if getattr(m, "type", None) == "human"),
        collected=state.get("collected"),
        run_dir=state.get("run_dir"),
        error=ts.error,
        messages=len(messages),
        **fields,
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
