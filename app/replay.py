"""Replays a decision log through today's policies: the regression check for a policy change."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from app.decision_log import DecisionLog
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


#: The newest decision-record schema this replay reads (graph/builder.py DECISION_SCHEMA).
KNOWN_SCHEMAS = frozenset({1, 2})


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
        if decision.step.value != rec.get("decision"):
            diffs.append(
                ReplayDiff(
                    index=i,
                    thread=rec.get("thread"),
                    node=rec.get("node", "?"),
                    policy=rec["policy"],
                    recorded=str(rec.get("decision")),
                    now=decision.step.value,
                    reason_now=decision.reason,
                )
            )
    return ReplayReport(checked=checked, diffs=diffs, unreadable=unreadable)


def replay_file(path: str) -> ReplayReport:
    return replay(DecisionLog(path).records())
