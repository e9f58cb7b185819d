"""Pure routing policies: where the graph goes after each node.

Each ``choose_next_*`` takes a small frozen view of the state (built by ``*_view`` from the
state, also pure) and returns a :class:`Decision` — an enum step plus the reason. The conditional
edges call ``.step``; the decision log records the reason and the exact view, so a later policy
change can be replayed against every recorded input (``perfscout replay``).

Order inside every stage policy is fixed, "permission before confidence":

1. guard — step budget exhausted, or the route history oscillates → FAIL with a diagnosis;
2. permission (docs/permission.md) — a command of a refused shape, or one the user declined →
   REJECT; a command the message proposed and the user has not confirmed → ASK_USER (confirm
   that exact argv); the user's own program without permission → REJECT;
3. tool error — retryable with attempts left → RETRY, otherwise → FAIL (or REJECT for a
   permission error);
4. the stage skipped (a dependency is missing here) → SKIP; evidence complete → the stage's
   success step; a missing field the user can supply → ASK_USER;
5. otherwise a named default exit → FAIL, "the stage produced nothing to go on".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from graph.enums import RETRYABLE_KINDS, ErrorKind, NextStep, Node, Permission, Route, RunGate
from graph.payloads import DEFAULT_RETRY_BUDGET, DEFAULT_STEP_BUDGET
from graph.permission import decide, needs_permission, run_gate
from graph.stages import ASKING_NODES, ROUTE_START, STAGES

#: The same node (and task) this many times in one turn is a loop, not progress.
REPEAT_LIMIT = 3
#: A-B-A-B over this many trailing entries is oscillation.
ALTERNATION_WINDOW = 4


@dataclass(frozen=True)
class Decision:
    """A step and the reason for it. ``step`` is what the edge returns."""

    step: NextStep | Node
    reason: str


# --------------------------------------------------------------------------------------
# Views: the exact inputs of a policy. Built from the state; nothing else is read.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuardView:
    """What the guard reads: budgets and this turn's route-history tail."""

    steps: int
    step_budget: int
    history: tuple[str, ...]
    #: Retries are repeats on purpose: the repeat limit leaves room for them.
    retry_budget: int = DEFAULT_RETRY_BUDGET


@dataclass(frozen=True)
class StageView:
    """What a stage policy reads after the stage (a node that calls tools) has run."""

    stage: str
    guard: GuardView
    needs_permission: bool
    has_permission: bool
    error_kind: str | None
    attempts: int
    retry_budget: int
    skipped: bool
    evidence_complete: bool
    missing_field: str | None
    #: What success leads to: CONTINUE (next stage), REPORT (straight to the reporter) or FINISH.
    on_success: NextStep = NextStep.CONTINUE
    #: Who named the command and whether it was confirmed (see ``run_gate``). Decision-log
    #: records of schema 1 have no such field: their commands were all the user's own.
    run_gate: RunGate = RunGate.OWN
    #: The command, for the reason text only (no decision reads it).
    command: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["guard"]["history"] = list(self.guard.history)
        d["on_success"] = self.on_success.value
        d["run_gate"] = self.run_gate.value
        return d


@dataclass(frozen=True)
class RouteView:
    """What the orchestrator's edge reads: the label and the guard."""

    route: str
    guard: GuardView
    #: The turn answers from the thread's last analysis (docs/ROUTING.md rule 8): an ``analyze``
    #: turn that names no new data goes straight to the reporter. Records written before this
    #: field (decision-log schema 3 and older) replay with the default.
    thread_data: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["guard"]["history"] = list(self.guard.history)
        return d


@dataclass(frozen=True)
class AnswerView:
    """What the edge after ``ask_user`` reads: the answer and the node that asked."""

    for_node: str | None
    answered: bool
    guard: GuardView

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["guard"]["history"] = list(self.guard.history)
        return d


def guard_view(state: Mapping[str, Any]) -> GuardView:
    return GuardView(
        steps=int(state.get("steps") or 0),
        step_budget=int(state.get("step_budget") or DEFAULT_STEP_BUDGET),
        history=tuple(state.get("route_history") or ()),
        retry_budget=_retry_budget(state),
    )


def _retry_budget(state: Mapping[str, Any]) -> int:
    rb = state.get("retry_budget")
    return int(rb) if rb is not None else DEFAULT_RETRY_BUDGET


def stage_view(state: Mapping[str, Any], stage: Node | str) -> StageView:
    """The policy input after ``stage`` ran. Pure: reads declared state keys only."""
    spec = STAGES[Node(stage)]
    stage = spec.node.value
    err = state.get("last_error") or None
    skipped = state.get("skipped") or None
    missing = list(state.get("missing") or [])
    route = state.get("_route") or Route.END.value
    needs = needs_permission(spec.runs_programs, state)
    request = (state.get("run_request") or None) if needs else None
    return StageView(
        stage=stage,
        guard=guard_view(state),
        needs_permission=needs,
        has_permission=bool(state.get("allow_run")),
        error_kind=(err or {}).get("kind") if err and err.get("tool") == stage else None,
        attempts=int((state.get("attempts") or {}).get(stage, 0)),
        retry_budget=_retry_budget(state),
        skipped=bool(skipped and skipped.get("node") == stage),
        evidence_complete=spec.evidence(state),
        missing_field=missing[0] if missing else None,
        on_success=spec.on_success(route, state),
        run_gate=run_gate(request),
        command=str((request or {}).get("display") or ""),
    )


def answer_view(state: Mapping[str, Any]) -> AnswerView:
    q = state.get("question") or {}
    ans = state.get("answer_to_question")
    return AnswerView(
        for_node=q.get("for_node"),
        answered=bool(ans and str(ans).strip()),
        guard=guard_view(state),
    )


def route_view(state: Mapping[str, Any]) -> RouteView:
    return RouteView(route=str(state.get("_route") or Route.END.value), guard=guard_view(state),
                     thread_data=bool(state.get("thread_data")) and bool(state.get("analysis")))


# --------------------------------------------------------------------------------------
# Policies.
# --------------------------------------------------------------------------------------


def check_guard(g: GuardView) -> str | None:
    """A diagnosis when this turn must stop, else None."""
    if g.steps >= g.step_budget:
        return (
            f"step budget exhausted: {g.steps} steps taken, budget {g.step_budget} (PERFSCOUT_STEP_BUDGET); "
            f"last steps: {' → '.join(g.history[-6:]) or '(none)'}"
        )
    h = g.history
    if len(h) >= ALTERNATION_WINDOW:
        a, b, c, d = h[-4:]
        if a == c and b == d and a != b:
            return f"oscillation: {a} and {b} keep alternating ({' → '.join(h[-6:])})"
    if h:
        last = h[-1]
        count = sum(1 for x in h if x == last)
        # A stage runs once, once more per retry, and once more after each answered question
        # (a target asked for, a command confirmed): only repeats beyond that are a loop.
        asked = sum(1 for x in h if x.startswith(Node.ASK_USER.value))
        if count >= max(REPEAT_LIMIT, g.retry_budget + 2 + asked):
            return f"loop: {last} ran {count} times in this turn"
    return None


def choose_next_after_stage(v: StageView) -> Decision:
    """The one stage policy; each stage's edge passes its own view (see ``stage_view``)."""
    diag = check_guard(v.guard)
    if diag:
        return Decision(NextStep.FAIL, diag)
    if v.needs_permission:
        # An allowlisted program reaches here with has_permission set: the stage found its
        # allowlist entry (graph/permission.py) and wrote allow_run for this turn.
        what = f"`{v.command}`" if v.command else "a program"
        permission = decide(v.run_gate, allow_run=v.has_permission)
        if permission is Permission.REFUSED_SHAPE:
            return Decision(NextStep.REJECT, f"{v.stage} refused to run {what}, proposed in the message: never run from a message")
        if permission is Permission.DECLINED:
            return Decision(NextStep.REJECT, f"{v.stage} did not run {what}: you declined it")
        if permission is Permission.CONFIRM:
            return Decision(NextStep.ASK_USER, f"{v.stage} asks to confirm {what}, proposed in the message")
        if permission is Permission.REFUSED:
            return Decision(
                NextStep.REJECT,
                f"{v.stage} would run {what} on this machine, and running programs is off",
            )
    if v.error_kind is not None:
        try:
            kind = ErrorKind(v.error_kind)
        except ValueError:
            return Decision(NextStep.FAIL, f"{v.stage} failed with an unknown error kind {v.error_kind!r}")
        if kind is ErrorKind.PERMISSION:
            return Decision(NextStep.REJECT, f"{v.stage} was refused permission")
        if kind in RETRYABLE_KINDS:
            if v.attempts <= v.retry_budget:
                return Decision(
                    NextStep.RETRY,
                    f"{v.stage} failed ({kind.value}); attempt {v.attempts} of {v.retry_budget + 1}",
                )
            return Decision(
                NextStep.FAIL,
                f"{v.stage} failed ({kind.value}) after {v.attempts} attempts; retry budget spent (PERFSCOUT_RETRY_BUDGET)",
            )
        return Decision(NextStep.FAIL, f"{v.stage} failed ({kind.value}); not retryable")
    if v.skipped:
        return Decision(NextStep.SKIP, f"{v.stage} skipped: a dependency is missing here")
    if v.evidence_complete:
        return Decision(v.on_success, f"{v.stage} produced its result")
    if v.missing_field:
        return Decision(NextStep.ASK_USER, f"{v.stage} needs {v.missing_field} from the user")
    return Decision(NextStep.FAIL, f"{v.stage} produced nothing to go on")


#: Route label → the first node of its pipeline (graph/stages.py ROUTE_START), by value.
_ROUTE_START: dict[str, Node] = {r.value: n for r, n in ROUTE_START.items()}


def choose_next_after_orchestrator(v: RouteView) -> Decision:
    """Route label → the route's first node. An unknown label falls back, never crashes."""
    diag = check_guard(v.guard)
    if diag:
        return Decision(Node.FAIL, diag)
    if v.route == Route.ANALYZE.value and v.thread_data:
        return Decision(Node.REPORTER, "route analyze on the thread's last analysis: answered from it, no new read")
    step = _ROUTE_START.get(v.route)
    if step is None:
        return Decision(Node.FALLBACK, f"unknown route {v.route!r}: falling back")
    return Decision(step, f"route {v.route}")


def choose_next_after_answer(v: AnswerView) -> Decision:
    """Back to the node that asked, with the answer; nothing answered ends with a reason."""
    diag = check_guard(v.guard)
    if diag:
        return Decision(Node.FAIL, diag)
    if not v.answered:
        return Decision(Node.FAIL, "the question was not answered")
    asked = _node_named(v.for_node)
    if asked in ASKING_NODES:
        return Decision(asked, f"answer goes back to {asked.value}")
    return Decision(Node.FAIL, f"no node can take the answer (asked for {v.for_node!r})")


def _node_named(name: str | None) -> Node | None:
    """The node ``name`` names, an earlier version's name included (graph/enums.py
    ``RENAMED_NODES``: a question checkpointed before a rename still finds its node)."""
    try:
        return Node(name) if name is not None else None
    except ValueError:
        return None


# --------------------------------------------------------------------------------------
# Replay support: a policy by name, and its view rebuilt from a logged dict.
# --------------------------------------------------------------------------------------


def _guard_from(d: Mapping[str, Any]) -> GuardView:
    return GuardView(
        steps=d["steps"],
        step_budget=d["step_budget"],
        history=tuple(d["history"]),
        retry_budget=d.get("retry_budget", DEFAULT_RETRY_BUDGET),
    )


def replay_decision(policy: str, view: Mapping[str, Any]) -> Decision:
    """Run today's policy on a logged input. Raises KeyError/TypeError on a malformed record."""
    if policy == "choose_next_after_stage":
        d = dict(view)
        d["guard"] = _guard_from(d["guard"])
        d["on_success"] = NextStep(d["on_success"])
        d["run_gate"] = RunGate(d.get("run_gate", RunGate.OWN.value))
        return choose_next_after_stage(StageView(**d))
    if policy == "choose_next_after_orchestrator":
        return choose_next_after_orchestrator(RouteView(route=view["route"], guard=_guard_from(view["guard"]),
                                                        thread_data=bool(view.get("thread_data", False))))
    if policy == "choose_next_after_answer":
        return choose_next_after_answer(
            AnswerView(for_node=view["for_node"], answered=view["answered"], guard=_guard_from(view["guard"]))
        )
    raise KeyError(f"unknown policy {policy!r}")


__all__ = [
    "ASKING_NODES",
    "AnswerView",
    "Decision",
    "GuardView",
    "RouteView",
    "StageView",
    "answer_view",
    "check_guard",
    "choose_next_after_answer",
    "choose_next_after_orchestrator",
    "choose_next_after_stage",
    "guard_view",
    "replay_decision",
    "route_view",
    "run_gate",
    "stage_view",
]


def decide_after(state: Mapping[str, Any], node: Node | str) -> tuple[str, Mapping[str, Any], Decision]:
    """The decision on the edge leaving ``node``: (policy name, its exact input, the decision).

    The builder's edges and the ``fail`` node (which explains what led to it) both use this,
    so the explanation a user reads is the reason the policy actually gave.
    """
    node = Node(node)
    if node is Node.ORCHESTRATOR:
        rv = route_view(state)
        return "choose_next_after_orchestrator", rv.to_dict(), choose_next_after_orchestrator(rv)
    if node is Node.ASK_USER:
        av = answer_view(state)
        return "choose_next_after_answer", av.to_dict(), choose_next_after_answer(av)
    sv = stage_view(state, node)
    return "choose_next_after_stage", sv.to_dict(), choose_next_after_stage(sv)
