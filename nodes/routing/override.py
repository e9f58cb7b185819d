"""The startup-keyword override of docs/ROUTING.md rule 3, applied after whichever tier decided.

Launch words upgrade a whole-pipeline request or a device measurement to ``startup`` (the
launch is what the user wants measured). They never touch ``explorer``, ``analyze`` or
``end``: searching launch code, reading a launch trace or asking launch advice stay what they
are. A launch word the user set aside ("别测启动了，帮我全面分析 com.demo.shop") is no launch
request: the override reads only the asked-for text (``scope.split_scope``), and a launch that is
only the step before another measurement ("launch the app and record FPS") is none either.
"""

from __future__ import annotations

from graph.enums import Route
from nodes.routing.rules import LAUNCH, LAUNCH_AS_STEP, NOT_LAUNCH
from nodes.routing.scope import split_scope

UPGRADABLE = frozenset({Route.FULL_ANALYSIS.value, Route.ANDROID.value})


def startup_override(route: str, text: str) -> tuple[str, str | None]:
    """(route, description of the override or None)."""
    if route not in UPGRADABLE or NOT_LAUNCH.search(text):
        return route, None
    # "launch the app and record FPS", "启动 app 后测内存": the launch is a step, not what is measured.
    m = LAUNCH.search(LAUNCH_AS_STEP.sub(" ", split_scope(text).asked))
    if not m:
        return route, None
    return Route.STARTUP.value, f"{route} -> startup: launch keyword {m.group(0)!r}"


__all__ = ["startup_override", "UPGRADABLE"]
