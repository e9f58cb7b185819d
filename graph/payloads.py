"""The typed payloads that cross modules: what nodes write into the state and tools return.

Pure (no LangGraph, no I/O), so the policies, the toolkits and the shell can all import them;
graph/state.py assembles them into the LangGraph state schema. Statuses are enums in
graph/enums.py; the payloads carry their string values (the state is JSON in a checkpoint).
"""

from __future__ import annotations

from typing import Any, TypedDict

from graph.enums import CollectionKind

#: Default number of node executions one turn may take before the guard stops it.
DEFAULT_STEP_BUDGET = 24
#: Default number of *extra* attempts a retryable tool error gets.
DEFAULT_RETRY_BUDGET = 1
#: How many route-history entries a thread keeps (the oscillation guard needs a short tail).
HISTORY_LIMIT = 64


class RouteInfo(TypedDict, total=False):
    """Why the orchestrator chose ``_route``: which tier decided, how sure, and why."""

    route: str
    tier: str
    confidence: float
    reason: str
    latency_ms: float
    override: str | None
    #: Wall seconds the model tier spent on this decision (0 when it was not asked).
    model_s: float
    #: The aspect the message asks about (graph.enums.Lens value; nodes/routing/lens.py).
    lens: str


class ToolError(TypedDict):
    """The last tool failure. Policies read ``kind`` only; ``message`` is for people."""

    tool: str
    kind: str
    message: str


class Skip(TypedDict):
    """A capability that could not run here, and why ("no device attached", …)."""

    node: str
    reason: str


class Question(TypedDict, total=False):
    """A missing field the user can supply, asked through ``interrupt()``."""

    field: str
    prompt: str
    for_node: str
    choices: list[str]


class RunRequest(TypedDict, total=False):
    """The exact program a run stage would start, and what permission it has (docs/permission.md).

    Built by the stage (nodes/collect/permission.py) from ``target`` and ``target_origin``;
    the stage policy reads ``origin``, ``refusal`` and ``confirmation`` only.
    """

    argv: list[str]
    #: The argv as one shell-quoted line, for prompts and refusals.
    display: str
    #: graph.enums.TargetOrigin value.
    origin: str
    #: Why this proposal is never run, even when confirmed (None: it may run once confirmed).
    refusal: str | None
    #: Arguments that point outside the workspace (named in the confirmation).
    outside_workspace: list[str]
    #: graph.enums.Confirmation value.
    confirmation: str
    #: Other argvs the same question names, whose answer is this one's (the start-up race asks
    #: about both its programs at once: nodes/run_stages/startup_ab.py).
    confirms_also: list[list[str]]


class Collected(TypedDict, total=False):
    """What a stage collected or found: the data files the analyzer reads and a summary.

    Built only by :func:`collection`, so every producer writes the same keys.
    """

    #: graph.enums.CollectionKind value.
    kind: str
    #: Data files the analyzer reads, by role ("profile", "runs", "data" …); empty when the
    #: stage answers by itself (a device list, a meminfo dump).
    paths: dict[str, str]
    #: Every file written, by role, including ones the analyzer does not read.
    files: dict[str, str]
    #: Small JSON facts about the collection (runs, exit codes, notes, device …).
    summary: dict[str, Any]
    #: What produced it: the command, the file, the adb call.
    source: str
    #: Raw device outputs kept beside the parsed summary, by name.
    raw: dict[str, str]


def collection(
    kind: CollectionKind,
    *,
    paths: dict[str, str] | None = None,
    files: dict[str, str] | None = None,
    summary: dict[str, Any] | None = None,
    source: str = "",
    raw: dict[str, str] | None = None,
) -> Collected:
    """The one way to build a ``Collected``: every key present, kinds from the enum."""
    out = Collected(
        kind=CollectionKind(kind).value,
        paths=dict(paths or {}),
        files=dict(files or paths or {}),
        summary=dict(summary or {}),
        source=str(source),
    )
    if raw:
        out["raw"] = dict(raw)
    return out


class Attribution(TypedDict, total=False):
    """One hot spot tied to the user's source (nodes/code/attribute.py)."""

    name: str
    #: graph.enums.AttributionStatus value.
    status: str
    file: str | None
    line: int | None
    excerpt: Any
    reason: str
    self_ms: float
    self_pct: float
    kind: str


class Exploration(TypedDict, total=False):
    """What the explorer looked for and found (nodes/code/explore.py ``as_state``)."""

    query: dict[str, Any]
    matches: list[dict[str, Any]]
    definitions: list[dict[str, Any]]
    notes: list[str]
    model: dict[str, Any]


class Report(TypedDict, total=False):
    """Where the reporter wrote: the folder and each file by kind."""

    dir: str
    markdown: str
    html: str
    json: str
    speedscope: str
    trace_events: str
    #: A comparison's files beside the report (nodes/compare/render.py), when two sides were compared.
    compare_markdown: str
    compare_html: str
    compare_json: str
