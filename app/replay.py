"""Replays a decision log through today's policies: the regression check for a policy change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from app.decision_log import DecisionLog
from graph.enums import RENAMED_NODES
from graph.policy import replay_decision


@dataclass
class ReplayDiff:
    index: int
    thread: str | None
    node: str
    policy: str
    recorded: str
    now: str
    reason_now: str


@dataclass
class ReplayReport:
    checked: int
    diffs: list[ReplayDiff]
    unreadable: int


#: The decision-record schemas this replay reads (graph/builder.py DECISION_SCHEMA).
KNOWN_SCHEMAS = frozenset({1, 2, 3})
#: Before schema 3 the orchestrator's edge returned a step name; now it is the first node's.
_LEGACY_ROUTE_STEPS = {
    "collect": "collector", "startup": "startup", "explore": "explorer", "android": "android_expert",
    "load_data": "data_locator", "fallback": "fallback", "fail": "fail",
}


def _recorded(rec: dict) -> str:
    """The step a record decided, in today's names (a renamed node: graph/enums.py RENAMED_NODES)."""
    decision = str(rec.get("decision"))
    if rec.get("schema", 1) < 3 and rec.get("policy") == "choose_next_after_orchestrator":
        decision = _LEGACY_ROUTE_STEPS.get(decision, decision)
    return RENAMED_NODES.get(decision, decision)


def replay(records: Iterable[dict]) -> ReplayReport:
    diffs: list[ReplayDiff] = []
    checked = unreadable = 0
    for i, rec in enumerate(records):
        if rec.get("schema", 1) not in KNOWN_SCHEMAS:
            unreadable += 1
            continue
        try:
            decision = replay_decision(rec["policy"], rec["input"])
        except (KeyError, TypeError, ValueError):
            unreadable += 1
            continue
        checked += 1
        if decision.step.value != _recorded(rec):
            diffs.append(
                ReplayDiff(
                    index=i,
                    thread=rec.get("thread"),
                    node=rec.get("node", "?"),
                    policy=rec["policy"],
                    recorded=_recorded(rec),
                    now=decision.step.value,
                    reason_now=decision.reason,
                )
            )
    return ReplayReport(checked=checked, diffs=diffs, unreadable=unreadable)


class ReplayInputError(ValueError):
    """The file is no decision log: nothing in it could be checked."""


def replay_file(path: str) -> ReplayReport:
    """Replay the log at ``path``; ReplayInputError when not one decision in it could be checked
    (an empty file, a file that is not JSON lines, records of another kind): "0 checked, exit 0"
    would pass a check that checked nothing."""
    rep = replay(DecisionLog(path).records())
    if rep.checked == 0:
        raise ReplayInputError(f"{path}: {_why_nothing(path, rep)}")
    return rep


def _why_nothing(path: str, rep: ReplayReport) -> str:
    lines = records = 0
    with open(path, "rb") as f:
        while True:
            raw = f.readline(1 << 20)
            if not raw:
                break
            if not raw.strip():
                continue
            lines += 1
            if raw.lstrip()[:1] == b"{" and raw.rstrip().endswith(b"}"):
                records += 1
    if lines == 0:
        return "empty: no decisions to check"
    if rep.unreadable:
        return (f"{rep.unreadable} record(s), none of them a policy decision this version can replay "
                "(no policy/input fields): not a PerfScout decision log?")
    if records == 0:
        return f"not a decision log: none of its {lines} line(s) is a JSON record"
    return f"not a decision log: {lines} line(s), none a readable decision record"
