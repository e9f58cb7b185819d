"""Settings from the environment (and CLI flags that override them).

Nothing else in PerfScout reads the environment: nodes get a NodeContext, policies get state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nodes.context import NodeContext


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as e:
        raise SettingsError(f"{name}={raw!r} is not a number") from e


def _int(name: str, default: int) -> int:
    return int(_float(name, default))


class SettingsError(ValueError):
    """A setting with a value PerfScout cannot use."""


@dataclass(frozen=True)
class Settings:
    #: OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server …); None = OpenAI's.
    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    #: Seconds one model call may take before the router falls back.
    llm_timeout_s: float = 10.0
    #: Force the offline path even when a model is configured.
    offline: bool = False
    #: Where PerfScout keeps its checkpoints, decision log and runs.
    state_dir: Path = Path(".perfscout")
    #: sqlite file path or postgresql:// URL; default <state_dir>/checkpoints.sqlite.
    checkpoint_url: str | None = None
    run_timeout_s: float = 30.0
    startup_runs: int = 5
    step_budget: int = 24
    retry_budget: int = 1
    #: Programs the user allows PerfScout to run without --allow-run (basenames or paths).
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    #: Seconds a turn waits for its thread while another turn holds it, before "thread T is
    #: busy" (app/threads.py); 0 = do not wait.
    thread_wait_s: float = 10.0

    def node_context(self, llm: Any = None) -> "NodeContext":
        """The runtime context an invocation passes to the graph (nodes/context.py)."""
        from nodes.context import NodeContext

        return NodeContext(
            llm=llm,
            runs_dir=str(self.runs_dir),
            run_timeout_s=self.run_timeout_s,
            startup_runs=self.startup_runs,
            allowlist=self.allowlist,
        )

    @property
    def model_configured(self) -> bool:
        return not self.offline and bool(self.api_key or self.base_url)

    @property
    def checkpoint_target(self) -> str:
        return self.checkpoint_url or str(self.state_dir / "checkpoints.sqlite")

    @property
    def decision_log(self) -> Path:
        return self.state_dir / "decisions.jsonl"

    @property
    def runs_dir(self) -> Path:
        return self.state_dir / "runs"

    @classmethod
    def from_env(cls, **overrides: object) -> "Settings":
        env = os.environ
        allow = tuple(a.strip() for a in env.get("PERFSCOUT_ALLOWLIST", "").split(",") if a.strip())
        values: dict[str, object] = dict(
            base_url=env.get("OPENAI_BASE_URL") or None,
            api_key=env.get("OPENAI_API_KEY") or None,
            model=env.get("PERFSCOUT_MODEL") or env.get("OPENAI_MODEL") or "gpt-4o-mini",
            llm_timeout_s=_float("PERFSCOUT_LLM_TIMEOUT", 10.0),
            offline=env.get("PERFSCOUT_OFFLINE", "").lower() in {"1", "true", "yes"},
            state_dir=Path(env.get("PERFSCOUT_HOME") or ".perfscout"),
            checkpoint_url=env.get("PERFSCOUT_CHECKPOINT_URL") or None,
            run_timeout_s=_float("PERFSCOUT_RUN_TIMEOUT", 30.0),
            startup_runs=_int("PERFSCOUT_STARTUP_RUNS", 5),
            step_budget=_int("PERFSCOUT_STEP_BUDGET", 24),
            retry_budget=_int("PERFSCOUT_RETRY_BUDGET", 1),
            allowlist=allow,
            thread_wait_s=_float("PERFSCOUT_THREAD_WAIT", 10.0),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
