"""The routing cascade: rules, a local classifier, the 5-token LLM call, the default.

``route_message(text, llm=None) -> RouteInfo`` is the one entry point the orchestrator node
uses; it always returns one of the six labels. See docs/router.md for the measured figures.
"""

from nodes.routing.cascade import route_message

__all__ = ["route_message"]
