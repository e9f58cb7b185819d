"""A thread's status, read from its last checkpoint, and the one mapping from the graph's state
keys to the fields a turn's result and a thread's detail both report.

``turn_state`` reads a thread's last checkpoint: a pending ``interrupt()`` is ``needs_input``; a
turn whose next node never ran (the process was killed, crashed or was interrupted with
Ctrl-C — the store holds the same checkpoint in all three cases) is ``incomplete``, with the
node it stopped before; otherwise the turn ended (``done``, ``failed``, ``skipped``). While
another process holds the thread's lock, ``threads show`` says ``running`` instead of
``incomplete``. The vocabulary is ``graph.enums.TurnOutcome``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from graph.enums import RENAMED_NODES, Node, TurnOutcome


@dataclass(frozen=True)
class TurnState:
    status: TurnOutcome
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
        return TurnState(TurnOutcome.NEEDS_INPUT, question=question)
    if snap.next or snap.tasks:
        # A finished turn's last checkpoint has no tasks. Tasks left over mean the turn stopped
        # between checkpoints: before ``snap.next`` (not run, or run and killed before its
        # writes were saved), or after a task whose writes were saved (``next`` is empty then).
        errors = [str(t.error) for t in snap.tasks or () if getattr(t, "error", None)]
        first = errors[0].splitlines()[0][:300] if errors else None
        if snap.next:
            return TurnState(TurnOutcome.INCOMPLETE, stopped_before=_today(str(snap.next[0])), error=first)
        done = [t.name for t in snap.tasks if getattr(t, "result", None) is not None]
        return TurnState(TurnOutcome.INCOMPLETE, stopped_after=_today((done or [snap.tasks[0].name])[0]), error=first)
    outcome = st.get("outcome")
    if outcome in (TurnOutcome.FAILED, TurnOutcome.SKIPPED):
        return TurnState(TurnOutcome(outcome))  # written by the fail node / the stage runner's skip
    if "outcome" not in st and (legacy := _legacy_outcome(st)):
        return TurnState(legacy)  # a thread checkpointed before ``outcome`` existed
    return TurnState(TurnOutcome.DONE)


def _today(node: str) -> str:
    """A node's name today: a thread checkpointed before a rename names the old one."""
    return RENAMED_NODES.get(node, node)


def _legacy_outcome(st: dict[str, Any]) -> TurnOutcome | None:
    """How a turn checkpointed by PerfScout 0.1 (no ``outcome`` key) ended."""
    if (st.get("route_history") or [""])[-1].startswith(Node.FAIL.value):
        return TurnOutcome.FAILED
    return TurnOutcome.SKIPPED if st.get("skipped") else None


def existing_paths(report: dict[str, Any] | None) -> dict[str, str]:
    """The report's file entries that exist on disk (a report dict also holds counts and flags)."""
    out: dict[str, str] = {}
    for key, value in (report or {}).items():
        if key != "dir" and isinstance(value, str) and value and Path(value).is_file():
            out[key] = value
    return out


class TurnFields(TypedDict):
    """What ``AskResult`` (app/api.py) and ``ThreadDetail`` (app/threads/listing.py) both say
    about a thread's last turn."""

    status: TurnOutcome
    route: str | None
    route_info: dict[str, Any]
    answer: str | None
    question: dict[str, Any] | None
    report: dict[str, Any] | None
    report_paths: dict[str, str]
    route_history: list[str]
    diagnosis: str | None
    analysis_source: str | None
    stopped_before: str | None
    stopped_after: str | None


def turn_fields(snap: Any, ts: TurnState | None = None) -> TurnFields:
    """The state keys a result reports, from a ``graph.get_state`` snapshot: the one mapping
    (``_route`` is the route, an answer is shown only when no question is pending, …)."""
    st = snap.values or {}
    ts = ts or turn_state(snap)
    analysis = st.get("analysis") or {}
    return TurnFields(
        status=ts.status,
        route=st.get("_route"),
        route_info=dict(st.get("route_info") or {}),
        answer=st.get("answer") if ts.question is None else None,
        question=ts.question,
        report=st.get("report"),
        report_paths=existing_paths(st.get("report")),
        route_history=list(st.get("route_history") or []),
        diagnosis=st.get("diagnosis"),
        analysis_source=analysis.get("source"),
        stopped_before=ts.stopped_before,
        stopped_after=ts.stopped_after,
    )
