"""The one stage runner: what every stage does around its body, written once.

Every stage node (the rows of graph/stages.py) is ``run_stage(node, body)``. On entry the
runner stamps the step and the route history, counts the attempt, and clears what the last
attempt left (``last_error``, ``skipped``, ``missing``, ``question``) — so a retry that succeeds
reads as a success, whichever stage it was. The body reads the state, calls its tools and
returns only its result; a ``ToolFailure`` it raises becomes the typed ``last_error``, a
``StageSkipped`` the typed skip, a ``NeedsAnswer`` the question (nodes/framework/common.py ``ask``). The policies in graph/policy.py then decide what follows.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from graph.enums import Node
from nodes.framework.common import ask, failure, skip, stamp
from nodes.framework.context import NodeContext
from nodes.framework.errors import NeedsAnswer, StageSkipped, ToolFailure
from nodes.perf.limits import applied

#: A stage's body: the state and this invocation's context in, its result (a partial update) out.
StageBody = Callable[[Mapping[str, Any], NodeContext], dict[str, Any]]

#: What each attempt starts without: the previous attempt's error, skip and question.
_CLEARED_ON_ENTRY: dict[str, Any] = {"last_error": None, "skipped": None, "missing": [], "question": None}


def attempt(state: Mapping[str, Any], tool: str) -> dict[str, int]:
    """The attempts map with one more attempt for ``tool`` (a new dict: state is never mutated)."""
    attempts = dict(state.get("attempts") or {})
    attempts[tool] = attempts.get(tool, 0) + 1
    return attempts


def node_context(runtime: Any, default: NodeContext) -> NodeContext:
    """This invocation's context (``invoke(..., context=…)``), else the graph's default."""
    ctx = getattr(runtime, "context", None)
    return ctx if isinstance(ctx, NodeContext) else default


def run_stage(node: Node | str, body: StageBody, default: NodeContext) -> Callable[..., dict]:
    """The graph node for ``body``: entry bookkeeping, the body, its failure or skip typed.

    ``default`` is the context for an invocation that passes none (a direct call in a test).
    """
    name = Node(node).value

    def stage(state: dict, runtime: Any = None) -> dict:
        ctx = node_context(runtime, default)
        update: dict[str, Any] = {**stamp(state, name), "attempts": attempt(state, name), **_CLEARED_ON_ENTRY}
        try:
            with applied(ctx.read_limits):  # the invocation's reader bounds (nodes/perf/limits.py)
                update.update(body(state, ctx) or {})
        except ToolFailure as e:
            update.update(e.partial)
            update.update(failure(name, e))
        except StageSkipped as e:
            update.update(e.partial)
            update.update(skip(name, e.reason))
        except NeedsAnswer as e:
            update.update(e.partial)
            update.update(ask(name, e.field, e.prompt, choices=e.choices))
        return update

    stage.__name__ = name
    stage.__doc__ = body.__doc__
    return stage
