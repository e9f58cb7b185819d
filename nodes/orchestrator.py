"""The orchestrator: starts a turn, writes ``_route`` and the facts the message carries.

It decides the label through the routing cascade (``nodes.routing``) and nothing else: where
the graph goes from the label is ``graph.policy.choose_next_after_orchestrator``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from graph.enums import Lens, Node, Route, TargetOrigin, Tier, lens_named
from nodes.routing.section import sections_of
from nodes.collect.permission import target_from_message
from nodes.framework.common import last_user_text
from nodes.compare.intent import programs_to_race, sides_in
from nodes.framework.context import NodeContext
from nodes.framework.stage import node_context
from nodes.routing.extract import extract
from nodes.report.followup import answerable as followup_answerable
from nodes.framework.model_call import time_left_s
from nodes.routing import route_message, thread_rule

#: Per-turn keys reset at the start of every turn. Results (collected, analysis …) are kept:
#: a thread remembers what it measured, so "analyse what you just collected" works.
TURN_RESET: dict[str, Any] = {
    "attempts": {},
    "last_error": None,
    "skipped": None,
    "missing": [],
    "question": None,
    "answer_to_question": None,
    "answer": None,
    "diagnosis": None,
    "outcome": None,
    "exploration": None,
    # Permission is per turn: a command confirmed in an earlier turn is asked again.
    "run_request": None,
}

#: Routes an explicit target (--target, the API's target=) overrides when the message names no
#: data: the user said what to run, so "profile this" is not a request to read a file.
_TARGET_OVERRIDES = frozenset({Route.ANALYZE.value, Route.END.value})


def _names_program(command: str, program: str) -> bool:
    """Whether ``command`` (a command line) runs ``program`` (a script path from the message)."""
    tokens = command.split()
    return any(t == program or t.endswith("/" + program.lstrip("./")) for t in tokens)


def route_turn(text: str, state: Mapping[str, Any], llm: Any = None, timeout_s: float | None = None) -> Turn:
    """The label, lens and facts of one message in its thread: the cascade, then the orchestrator's
    overrides (two sides to compare, two programs to race, rule 8 on a thread). ``perfscout route
    --thread`` calls it with the thread's state, so it prints what a turn would decide."""
    kw = {} if timeout_s is None else {"timeout_s": timeout_s}
    info = route_message(text, llm=llm, **kw)
    facts = extract(text, state.get("workspace") or ".")
    # 「对比一下 before.pftrace 和 after.pftrace」/ "compare run_a/ with run_b/": two sides named
    sides = sides_in(text, state.get("workspace") or ".")
    if len(sides) >= 2 and info["route"] != Route.ANALYZE.value and info.get("tier") != Tier.RULE.value:
        # Two existing captures or run folders with a comparison cue are existing data
        # (docs/ROUTING.md rule 2); only a guess of the classifier (or the default) gives way.
        info = {**info, "route": Route.ANALYZE.value, "override": "compare",
                "reason": f"{info.get('reason', '')}; compares two existing sides: {sides[0]}, {sides[1]}".lstrip("; ")}
    racers = programs_to_race(text)
    if len(racers) >= 2 and info["route"] != Route.STARTUP.value and info.get("tier") != Tier.RULE.value:
        # two programs' launch times against each other is startup (docs/ROUTING.md)
        info = {**info, "route": Route.STARTUP.value, "override": "compare",
                "reason": f"{info.get('reason', '')}; compares the launch of {racers[0]} and {racers[1]}".lstrip("; ")}
    analysis = state.get("analysis")
    explicit_lens = str(state.get("explicit_lens") or "").strip()
    if explicit_lens:  # --focus / focus=: the caller named the lens
        info = {**info, "lens": lens_named(explicit_lens).value}
    thread_data = thread_rule.applies(
        info, text, has_analysis=bool(analysis), names_data=bool(facts.data_paths) or len(sides) >= 2,
        names_target=bool(facts.packages or facts.programs or state.get("explicit_target")),
        followup=bool(analysis) and followup_answerable(text, analysis),
    )
    if thread_data:
        # docs/ROUTING.md rule 8: another aspect of this thread's last analysis is analyze on
        # that data; the route policy sends it straight to the reporter (no device, no re-read).
        info = {**info, "route": Route.ANALYZE.value, "override": "thread",
                "reason": thread_rule.reason(info, (analysis or {}).get("source")).lstrip("; ")}
    return Turn(info, facts, sides, racers, thread_data)


@dataclass(frozen=True)
class Turn:
    """What ``route_turn`` decided: the route info (with its lens) and the facts behind it."""

    info: dict[str, Any]
    facts: Any
    sides: list[str]
    racers: list[str]
    #: docs/ROUTING.md rule 8 fired: the turn answers from the thread's last analysis.
    thread_data: bool


def make(default: NodeContext) -> Callable[..., dict]:
    def orchestrator(state: dict, runtime: Any = None) -> dict:
        ctx = node_context(runtime, default)
        text = last_user_text(state)
        # A new turn: its model time starts at 0, bounded by the turn's budget (graph/state.py).
        turn = route_turn(text, state, ctx.llm, time_left_s(ctx, state, spent_s=0.0))
        info, facts, sides, racers, thread_data = turn.info, turn.facts, turn.sides, turn.racers, turn.thread_data
        update: dict[str, Any] = dict(TURN_RESET)
        update.update(
            {
                "_route": info["route"],
                "route_info": info,
                "lens": info.get("lens") or Lens.OVERVIEW.value,
                "explicit_lens": None,
                "thread_data": thread_data,
                "sections": sections_of(text, facts.quoted, facts.paths + facts.data_paths),
                "steps": 1,
                "llm_time_s": round(float(info.get("model_s") or 0.0), 3),
                "route_history": [f"{Node.ORCHESTRATOR.value}:{info['route']}"],
            }
        )
        # What to run (docs/permission.md): an explicit target given for this turn wins; else
        # what the message names, with who named it (a workspace script, or a proposal that
        # runs only once confirmed); else the thread's earlier target, as it was named.
        explicit = str(state.get("explicit_target") or "").strip()
        update["explicit_target"] = None
        current = str(state.get("target") or "")
        if explicit:
            update["target"], update["target_origin"] = explicit, TargetOrigin.USER.value
            if info["route"] in _TARGET_OVERRIDES and not facts.data_paths and not thread_data:
                info = {**info, "route": Route.FULL_ANALYSIS.value, "override": "explicit_target",
                        "reason": f"{info.get('reason', '')}; an explicit target was given".lstrip("; ")}
                update["_route"], update["route_info"] = info["route"], info
                update["route_history"] = [f"{Node.ORCHESTRATOR.value}:{info['route']}"]
        else:
            found = target_from_message(
                quoted=facts.quoted, programs=facts.programs, after_run=facts.after_run,
                data_paths=facts.data_paths, workspace=state.get("workspace") or ".",
            )
            if found is not None:
                text_target, origin = found
                keeps_args = (
                    origin is TargetOrigin.WORKSPACE and current and facts.programs
                    and _names_program(current, facts.programs[0])
                    and state.get("target_origin") in (None, TargetOrigin.USER.value, TargetOrigin.WORKSPACE.value)
                )
                if not keeps_args:
                    # An earlier command line that already runs this script keeps its arguments.
                    update["target"], update["target_origin"] = text_target, origin.value
            elif current and not state.get("target_origin"):
                update["target_origin"] = TargetOrigin.USER.value  # set by the caller (graph.invoke)
        # A data file counts only when this message names it; otherwise "the data" is what the
        # thread collected (data_locator falls back to it).
        update["data_path"] = facts.data_paths[0] if facts.data_paths else None
        update["data_paths"] = sides if len(sides) >= 2 else (list(facts.data_paths) or None)
        update["targets"] = racers[:2] if len(racers) >= 2 else None
        if len(sides) >= 2:
            update["data_path"] = sides[0]
        if facts.packages:
            update["package"] = facts.packages[0]
        return update

    return orchestrator
