"""The graph LangGraph Studio and ``langgraph dev`` serve (see langgraph.json).

The server supplies its own checkpointer; this module only wires the configured model, if any,
and the decision log. With no model configured it is the same offline graph as the CLI's.
"""

from __future__ import annotations

from app.decision_log import DecisionLog
from app.models import make_chat_model
from app.settings import Settings
from graph.builder import build_graph

_settings = Settings.from_env()
graph = build_graph(
    context=_settings.node_context(make_chat_model(_settings)),
    on_decision=DecisionLog(_settings.decision_log).append,
)
