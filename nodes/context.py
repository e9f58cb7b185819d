"""What nodes get from the shell around the graph: the model (if any) and run settings.

Built once by ``graph.builder.build_graph`` from its arguments; nodes read it, never globals or
the environment, so a test can build a graph with exactly the context it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NodeContext:
    #: A LangChain chat model, or None when no model is configured (the offline default).
    llm: Any = None
    #: Where run folders (profiles, reports) go: <runs_dir>/<thread>/<time>/.
    runs_dir: str = ".perfscout/runs"
    #: Wall-clock limit for a program PerfScout runs, in seconds.
    run_timeout_s: float = 30.0
    #: How many launches the startup measurement makes.
    startup_runs: int = 5
    #: Commands (argv[0] basenames or script paths) the user allowed in settings.
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    #: Where adb is looked up (None: PATH).
    adb_path: str | None = None
    #: Extra options nodes may read (kept small and documented where read).
    extra: dict[str, Any] = field(default_factory=dict)
