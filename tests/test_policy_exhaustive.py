"""The routing policies checked over their whole input space against an independent spec.

The spec below is written from the issue's decision table, not from graph/policy.py: it reuses
no policy code. Every combination of every input dimension is enumerated; a guard fails the test
if the enumerated space shrinks (someone deleting a dimension would otherwise pass silently).
"""

from __future__ import annotations

import copy
import itertools
import math

import pytest

from graph.builder import ANSWER_PATH_MAP, ROUTE_PATH_MAP, stage_path_map
from graph.enums import ErrorKind, NextStep, Node, Route, RunGate
from graph.policy import (
    AnswerView,
    GuardView,
    RouteView,
    StageView,
    answer_view,
    choose_next_after_answer,
    choose_next_after_orchestrator,
    choose_next_after_stage,
    route_view,
    stage_view,
)

# ----------------------------------------------------------------------------------------
# The spec mirror
# ----------------------------------------------------------------------------------------


def spec_stop(steps: int, budget: int, history: tuple[str, ...], retry_budget: int) -> bool:
    if steps >= budget:
        return True
    if len(history) >= 4 and history[-1] == history[-3] and history[-2] == history[-4] and history[-1] != history[-2]:
        return True
    # Each answered question (a target, a confirmation) allows the asking stage one more run.
    questions = len([x for x in history if x.split(":")[0] == "ask_user"])
    if history and history.count(history[-1]) >= max(3, retry_budget + 2 + questions):
        return True
    return False


def spec_stage(
    steps, budget, history, needs_perm, has_perm, err, attempts, rb, skipped, evidence, missing, on_success, gate
) -> str:
    if spec_stop(steps, budget, history, rb):
        return "fail"
    # Permission names a program: a message's command runs only when confirmed and of an
    # allowed shape; the user's own program needs --allow-run; a confirmation is permission.
    if needs_perm:
        if gate == "forbidden" or gate == "declined":
            return "reject"
        if gate == "proposed":
            return "ask_user"
        if gate == "own" and not has_perm:
            return "reject"
    if err is not None:
        if err == "permission":
            return "reject"
        # Only an error a second attempt may fix is retried; a timeout would end the same way.
        if err == "retryable":
            return "retry" if attempts <= rb else "fail"
        return "fail"
    if skipped:
        return "skip"
    if evidence:
        return on_success
    if missing:
        return "ask_user"
    return "fail"


SPEC_ROUTE = {
    "full_analysis": "collector",
    "startup": "startup",
    "explorer": "explorer",
    "android": "android_expert",
    "analyze": "data_locator",
    "end": "fallback",
}

# ----------------------------------------------------------------------------------------
# The input space
# ----------------------------------------------------------------------------------------

STEP_CASES = [(0, 5), (4, 5), (5, 5), (0, 24), (23, 24), (30, 24)]
HISTORIES = [
    (),
    ("orchestrator:full_analysis", "collector"),
    ("orchestrator:full_analysis", "collector", "collector"),  # one retry: fine
    ("collector", "collector", "collector"),  # a loop unless the retry budget allows it
    ("collector", "ask_user:target", "collector", "ask_user:target"),  # oscillation
    # a confirmation round trip, then one retry: the guard must let it through (retry budget ≥ 1)
    ("orchestrator:full_analysis", "collector", "ask_user:confirm_run", "collector", "collector"),
]
#: Who named the command and whether it was confirmed (graph.enums.RunGate), as strings.
GATES = ["own", "proposed", "confirmed", "declined", "forbidden"]
ERRORS = [None, *[k.value for k in ErrorKind], "made-up-kind"]
ATTEMPTS = [0, 1, 2, 3]
RETRY_BUDGETS = [0, 1, 2]
ON_SUCCESS = [NextStep.CONTINUE, NextStep.REPORT, NextStep.FINISH]
STAGES = [Node.COLLECTOR, Node.ANALYZER]

#: Every dimension of the stage policy's input, in StageView order (after the guard's parts).
STAGE_DIMENSIONS = (
    STAGES,
    STEP_CASES,
    HISTORIES,
    [False, True],  # needs permission
    [False, True],  # has permission
    ERRORS,
    ATTEMPTS,
    RETRY_BUDGETS,
    [False, True],  # skipped
    [False, True],  # evidence complete
    [None, "target"],  # missing field
    ON_SUCCESS,
    GATES,
)
#: 2 stages × 6 × 6 × 2 × 2 × 7 × 4 × 3 × 2 × 2 × 2 × 3 × 5
EXPECTED_STAGE_SPACE = 2 * 6 * 6 * 2 * 2 * 7 * 4 * 3 * 2 * 2 * 2 * 3 * 5


def stage_space():
    """The whole input space, lazily (2.9 M tuples as a list would cost ~1 GB)."""
    return itertools.product(*STAGE_DIMENSIONS)


def _view(case, guards: dict) -> StageView:
    stage, (steps, budget), hist, needs, has, err, att, rb, skipped, ev, missing, ok, gate = case
    key = (steps, budget, hist, rb)
    g = guards.get(key)
    if g is None:
        g = guards[key] = GuardView(steps=steps, step_budget=budget, history=hist, retry_budget=rb)
    return StageView(
        stage=stage.value,
        guard=g,
        needs_permission=needs,
        has_permission=has,
        error_kind=err,
        attempts=att,
        retry_budget=rb,
        skipped=skipped,
        evidence_complete=ev,
        missing_field=missing,
        on_success=ok,
        run_gate=RunGate(gate),
        command="python app.py",
    )


def test_stage_space_has_not_shrunk():
    assert math.prod(len(d) for d in STAGE_DIMENSIONS) == EXPECTED_STAGE_SPACE
    # At least the space before the permission facts were added (483,840 combinations).
    assert EXPECTED_STAGE_SPACE >= 483_840


def test_stage_policy_matches_spec_over_whole_space(capsys):
    mismatches = []
    answer_like = {NextStep.CONTINUE, NextStep.REPORT, NextStep.FINISH}
    unconfirmed = ("proposed", "declined", "forbidden")
    path_keys = {stage: set(stage_path_map(stage)) for stage in STAGES}
    guards: dict = {}
    n = 0
    for case in stage_space():
        n += 1
        v = _view(case, guards)
        d = choose_next_after_stage(v)
        stage, (steps, budget), hist, needs, has, err, att, rb, skipped, ev, missing, ok, gate = case
        want = spec_stage(steps, budget, hist, needs, has, err, att, rb, skipped, ev, missing, ok.value, gate)
        step = d.step
        if step.value != want:
            mismatches.append((case, d, want))
            continue
        # Invariants that hold whatever the branch.
        assert step.value in path_keys[stage]
        assert d.reason
        if step is NextStep.RETRY:
            assert err == "retryable" and att <= rb
        if needs and ((not has and gate == "own") or gate in unconfirmed):
            # nothing the user did not allow, or a message's command not confirmed, ever runs
            assert step not in answer_like and step is not NextStep.RETRY
            if gate in unconfirmed and step is not NextStep.FAIL:
                assert "python app.py" in d.reason  # every refusal and question names the argv
        if step in answer_like:
            assert ev and err is None and not skipped
    assert n == EXPECTED_STAGE_SPACE
    assert not mismatches, mismatches[:5]
    with capsys.disabled():
        print(f"\n[policy] stage policy: {n} combinations checked against the spec")


def test_route_policy_over_whole_space(capsys):
    labels = [r.value for r in Route] + ["", "bogus", "FULL_ANALYSIS", "collector"]
    n = 0
    for label, (steps, budget), hist, rb, thread_data in itertools.product(
        labels, STEP_CASES, HISTORIES, RETRY_BUDGETS, [False, True]
    ):
        d = choose_next_after_orchestrator(
            RouteView(route=label, guard=GuardView(steps, budget, hist, rb), thread_data=thread_data)
        )
        n += 1
        if spec_stop(steps, budget, hist, rb):
            assert d.step is Node.FAIL
        elif thread_data and label == "analyze":
            # docs/ROUTING.md rule 8: the thread's last analysis is answered again, not re-read
            assert d.step is Node.REPORTER
        else:
            assert d.step.value == SPEC_ROUTE.get(label, "fallback")
        assert d.step.value in ROUTE_PATH_MAP
    with capsys.disabled():
        print(f"[policy] route policy: {n} combinations checked")


def test_answer_policy_over_whole_space():
    targets = [n.value for n in Node] + [None, "bogus"]
    asking = {"collector", "startup", "explorer", "android_expert", "data_locator"}
    for for_node, answered, (steps, budget), hist, rb in itertools.product(
        targets, [False, True], STEP_CASES, HISTORIES, RETRY_BUDGETS
    ):
        d = choose_next_after_answer(AnswerView(for_node, answered, GuardView(steps, budget, hist, rb)))
        if spec_stop(steps, budget, hist, rb) or not answered or for_node not in asking:
            assert d.step is Node.FAIL
        else:
            assert d.step.value == for_node
        assert d.step.value in ANSWER_PATH_MAP


def test_every_stage_map_is_total():
    for stage in (Node.COLLECTOR, Node.STARTUP, Node.DATA_LOCATOR, Node.ANDROID_EXPERT, Node.ANALYZER,
                  Node.ATTRIBUTOR, Node.EXPLORER, Node.REPORTER):
        assert set(stage_path_map(stage)) == {s.value for s in NextStep}
        assert "__end__" in stage_path_map(stage).values()
    assert set(ROUTE_PATH_MAP) == set(SPEC_ROUTE.values()) | {"fail", "reporter"}


# ----------------------------------------------------------------------------------------
# Purity and determinism of the state → view → decision chain
# ----------------------------------------------------------------------------------------

STATES = [
    {},
    {"_route": "full_analysis", "steps": 2, "route_history": ["orchestrator:full_analysis", "collector"],
     "allow_run": False, "target": "app.py"},
    {"_route": "full_analysis", "steps": 3, "route_history": ["collector", "collector"], "allow_run": True,
     "target": "app.py", "attempts": {"collector": 1},
     "last_error": {"tool": "collector", "kind": "retryable", "message": "attach failed"}},
    {"_route": "startup", "package": "com.demo.shop", "steps": 2, "route_history": ["startup"],
     "collected": {"paths": {"runs": "r.json"}}},
    {"_route": "analyze", "steps": 2, "missing": ["data_path"],
     "question": {"field": "data_path", "for_node": "data_locator"}, "answer_to_question": "x.json"},
    {"_route": "android", "skipped": {"node": "android_expert", "reason": "no device"}, "steps": 2},
]


@pytest.mark.parametrize("state", STATES)
def test_views_and_policies_are_pure_and_deterministic(state):
    before = copy.deepcopy(state)
    for node in (Node.COLLECTOR, Node.STARTUP, Node.DATA_LOCATOR, Node.ANDROID_EXPERT, Node.ANALYZER,
                 Node.ATTRIBUTOR, Node.EXPLORER):
        a = choose_next_after_stage(stage_view(state, node))
        b = choose_next_after_stage(stage_view(state, node))
        assert a == b
    assert choose_next_after_orchestrator(route_view(state)) == choose_next_after_orchestrator(route_view(state))
    assert choose_next_after_answer(answer_view(state)) == choose_next_after_answer(answer_view(state))
    assert state == before


def test_device_startup_needs_no_run_permission():
    st = {"_route": "startup", "package": "com.demo.shop", "steps": 2, "route_history": ["startup"],
          "collected": {"paths": {"runs": "r.json"}}}
    assert choose_next_after_stage(stage_view(st, Node.STARTUP)).step is NextStep.CONTINUE
    st_local = dict(st, target="app.py")
    assert choose_next_after_stage(stage_view(st_local, Node.STARTUP)).step is NextStep.REJECT
