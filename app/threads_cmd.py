"""The conversations a checkpoint store holds: list them, show one, forget one.

A thread is whatever LangGraph checkpointed under a ``thread_id``; nothing else records them,
so the store itself is the list. Thread ids are read with one ``GROUP BY`` on the savers'
``checkpoints`` table (SQLite or PostgreSQL) — walking ``saver.list(None)`` would load every
checkpoint of every thread — and each thread's last state comes from the graph, as ``ask``
sees it.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from app.api import PerfScout

#: How much of a message a listing shows.
SNIPPET = 80


class ThreadSummary(BaseModel):
    thread_id: str
    #: When the last checkpoint was written (ISO 8601, UTC).
    updated: str | None = None
    status: str
    route: str | None = None
    last_request: str | None = None
    answer: str | None = None
    turns: int = 0


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
    messages: int = 0


def thread_ids(saver: Any) -> list[tuple[str, str]]:
    """(thread id, newest checkpoint id) per thread, newest first."""
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


def _detail(ps: "PerfScout", thread_id: str) -> ThreadDetail | None:
    tup = ps.checkpointer.get_tuple(ps.config(thread_id))
    if tup is None:
        return None
    state = ps.graph.get_state(ps.config(thread_id)).values or {}
    r = ps.result(thread_id)
    messages = list(state.get("messages") or [])
    return ThreadDetail(
        thread_id=thread_id,
        updated=tup.checkpoint.get("ts"),
        status=r.status,
        route=r.route,
        last_request=_last_human(state),
        answer=r.answer,
        turns=sum(1 for m in messages if getattr(m, "type", None) == "human"),
        route_info=r.route_info,
        route_history=r.route_history,
        question=r.question,
        report=r.report,
        report_paths=r.report_paths,
        analysis_source=r.analysis_source,
        collected=state.get("collected"),
        run_dir=state.get("run_dir"),
        diagnosis=r.diagnosis,
        messages=len(messages),
    )


def list_threads(ps: "PerfScout", limit: int | None = None) -> list[ThreadSummary]:
    """The store's threads, newest first, each with its last route, status and request."""
    out: list[ThreadSummary] = []
    for tid, _ in thread_ids(ps.checkpointer)[: limit or None]:
        d = _detail(ps, tid)
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
                )
            )
    return out


def show_thread(ps: "PerfScout", thread_id: str) -> ThreadDetail | None:
    return _detail(ps, thread_id)


def delete_thread(ps: "PerfScout", thread_id: str) -> bool:
    """Delete every checkpoint of the thread. Run folders (reports) stay where they are."""
    saver = ps.checkpointer
    if saver.get_tuple(ps.config(thread_id)) is None:
        return False
    saver.delete_thread(thread_id)
    return True


def format_list(threads: list[ThreadSummary]) -> str:
    if not threads:
        return "no threads yet"
    rows = []
    for t in threads:
        when = (t.updated or "")[:19].replace("T", " ")
        rows.append(f"{t.thread_id}  {when}  {t.status:<11} {t.route or '-':<13} {t.last_request or ''}")
    return "\n".join(rows)


def format_detail(d: ThreadDetail) -> str:
    lines = [
        f"thread   {d.thread_id}",
        f"updated  {d.updated}",
        f"status   {d.status}   route {d.route}   turns {d.turns}",
        f"request  {d.last_request}",
    ]
    if d.route_info:
        lines.append(f"why      {d.route_info.get('tier')}: {d.route_info.get('reason')}")
    if d.route_history:
        lines.append(f"steps    {' → '.join(d.route_history)}")
    if d.question:
        lines.append(f"asks     {d.question.get('prompt')}")
    if d.analysis_source:
        lines.append(f"analysed {d.analysis_source}")
    for kind, path in d.report_paths.items():
        lines.append(f"report   {kind}: {path}")
    if d.diagnosis:
        lines.append(f"stopped  {d.diagnosis}")
    if d.answer:
        lines.append("answer")
        lines.extend(f"  {line}" for line in d.answer.splitlines())
    return "\n".join(lines)
