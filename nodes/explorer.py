"""The explorer node: answers "search / open / where is … defined" from the user's code.

It reads the newest message and the ``workspace`` (default "."), works out what to look for
(``nodes.code.query``), runs the code tools inside the workspace sandbox and answers with what
they found. A configured model may choose the tool calls instead, within fixed caps; the
answer is still built from the tool results. Finding nothing is a complete answer that says so;
a path in the message that leads outside the workspace is a validation failure, and a missing
``rg`` binary makes the tools unavailable.
"""

from __future__ import annotations

from typing import Any, Callable

from graph.enums import ErrorKind, Node
from nodes.code.explore import Exploration, compose_answer, deterministic_plan, run_plan
from nodes.code.planner import plan_with_model
from nodes.code.query import parse_query
from nodes.code.rg import find_rg
from nodes.code.search import _safe_glob
from nodes.framework.common import last_user_text, say
from nodes.framework.context import NodeContext
from nodes.framework.errors import ToolFailure
from nodes.framework.stage import run_stage
from nodes.code.sandbox import PathNotFound, PathRefused, resolve_inside, workspace_root

NAME = Node.EXPLORER.value


def make(ctx: NodeContext) -> Callable[[dict], dict]:
    def explorer(state: dict, ctx: NodeContext) -> dict:
        exploration, answer = explore(last_user_text(state), state.get("workspace") or ".", llm=ctx.llm, rg=ctx.rg_path)
        return {"exploration": exploration, **say(NAME, answer)}

    return run_stage(Node.EXPLORER, explorer, ctx)


def explore(text: str, workspace: str, *, llm: Any = None, rg: str | None = None) -> tuple[dict[str, Any], str]:
    """(exploration, answer) for one message. Raises ToolFailure with a typed kind."""
    try:
        root = workspace_root(workspace)
    except (PathRefused, PathNotFound) as e:
        raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
    find_rg(rg)  # unavailable before any work, not halfway through
    q = parse_query(text)
    _check_message_paths(root, q.paths, q.globs)
    ex = Exploration(root, q, rg=rg)
    use = None
    if llm is not None:
        use = plan_with_model(llm, ex, q.as_dict())
        if not ex.found_anything():
            ex.notes.append(f"the model's calls found nothing ({use.stopped}); the plain search ran")
            run_plan(ex, deterministic_plan(q))
    else:
        run_plan(ex, deterministic_plan(q))
    state = ex.as_state()
    if use is not None:
        state["model"] = use.as_dict()
    return state, compose_answer(ex)


def _check_message_paths(root: Any, paths: list[str], globs: list[str]) -> None:
    """A path the user typed that leads outside the workspace is refused, whoever plans."""
    try:
        for p in paths:
            resolve_inside(root, p)
        for g in globs:
            _safe_glob(g)
    except PathRefused as e:
        raise ToolFailure(ErrorKind.VALIDATION, str(e)) from None
