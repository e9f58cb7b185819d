"""The graph LangGraph Studio and ``langgraph dev`` serve (see langgraph.json).

The server supplies its own checkpointer; this module only wires the configured model, if any,
and the decision log. With no model configured it is the same offline graph as the CLI's.
"""

from __future__ import annotations

from app.decision_log import DecisionLog
from app.models import make_chat_model
from app.settings import Settings
from graph.builder import build_graph
from nodes.context import NodeContext

_settings = Settings.from_env()
_settings.install_read_limits()
graph = build_graph(
    context=NodeContext(
        llm=make_chat_model(_settings),
        runs_dir=str(_settings.runs_dir),
        run_timeout_s=_settings.run_timeout_s,
        llm_timeout_s=_settings.llm_timeout_s,
        llm_turn_budget_s=_settings.turn_model_budget_s,
        startup_runs=_settings.startup_runs,
        allowlist=_settings.allowlist,
    ),
    on_decision=DecisionLog(_settings.decision_log).append,
)
