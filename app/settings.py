"""Settings from the environment (and CLI flags that override them).

Nothing else in PerfScout reads the environment: nodes get a NodeContext, policies get state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nodes.framework.context import NodeContext

from nodes.perf import limits


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError as e:
        raise SettingsError(f"{name}={raw!r} is not a number") from e


def _positive(name: str, default: float | None) -> float | None:
    """A number of seconds > 0 (a zero or negative limit would disable the model silently)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = _float(name, 0.0)
    if not value > 0 or value != value or value == float("inf"):
        raise SettingsError(f"{name}={raw!r} must be a number of seconds greater than 0")
    return value


def _count(name: str, default: int) -> int:
    """A whole number > 0 (a byte or event cap; 0 would refuse every input)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a whole number") from None
    if value <= 0:
        raise SettingsError(f"{name}={raw!r} must be greater than 0")
    return value


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
    #: Wall-clock seconds one model call may take, body included (router, fallback, narrative).
    llm_timeout_s: float = 10.0
    #: Total model seconds one turn may spend; None = 2 × llm_timeout_s (docs/reliability.md).
    llm_turn_budget_s: float | None = None
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
    #: Reader bounds (nodes/perf/limits.py): what a compressed input may inflate to, what a
    #: whole-file reader may load (bytes), and how many events one input's data keeps.
    max_inflated_bytes: int = limits.DEFAULT.max_inflated_bytes
    max_whole_file_bytes: int = limits.DEFAULT.max_whole_file_bytes
    max_events: int = limits.DEFAULT.max_events
    #: Programs the user allows PerfScout to run without --allow-run (basenames or paths).
    allowlist: tuple[str, ...] = field(default_factory=tuple)
    #: Seconds a turn waits for its thread while another turn holds it, before "thread T is
    #: busy" (app/threads/locks.py); 0 = do not wait.
    thread_wait_s: float = 10.0
    #: The adb to call (None: the first ``adb`` on PATH) and the seconds one adb call may take
    #: (None: nodes/android/adb.py's default); ``--adb`` / ``--adb-timeout`` or PERFSCOUT_ADB /
    #: PERFSCOUT_ADB_TIMEOUT.
    adb_path: str | None = None
    adb_timeout_s: float | None = None

    def node_context(self, llm: Any = None) -> "NodeContext":
        """The runtime context an invocation passes to the graph (nodes/framework/context.py)."""
        from nodes.framework.context import NodeContext

        return NodeContext(
            llm=llm,
            runs_dir=str(self.runs_dir),
            run_timeout_s=self.run_timeout_s,
            llm_timeout_s=self.llm_timeout_s,
            llm_turn_budget_s=self.turn_model_budget_s,
            startup_runs=self.startup_runs,
            allowlist=self.allowlist,
            read_limits=self.read_limits(),
            adb_path=self.adb_path,
            adb_timeout_s=self.adb_timeout_s,
        )

    @property
    def model_configured(self) -> bool:
        return not self.offline and bool(self.api_key or self.base_url)

    @property
    def turn_model_budget_s(self) -> float:
        """The turn's model-time budget, in seconds (``PERFSCOUT_LLM_TURN_BUDGET``)."""
        if self.llm_turn_budget_s is not None:
            return float(self.llm_turn_budget_s)
        return 2.0 * self.llm_timeout_s

    def read_limits(self) -> limits.ReadLimits:
        """The reader bounds, passed to the graph in the runtime context (``node_context``) and
        to direct reads (``analyze_paths(..., limits=)``): never installed for the process."""
        return limits.ReadLimits(
            max_inflated_bytes=self.max_inflated_bytes,
            max_whole_file_bytes=self.max_whole_file_bytes,
            max_events=self.max_events,
        )

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
            llm_timeout_s=_positive("PERFSCOUT_LLM_TIMEOUT", 10.0),
            llm_turn_budget_s=_positive("PERFSCOUT_LLM_TURN_BUDGET", None),
            offline=env.get("PERFSCOUT_OFFLINE", "").lower() in {"1", "true", "yes"},
            state_dir=Path(env.get("PERFSCOUT_HOME") or ".perfscout"),
            checkpoint_url=env.get("PERFSCOUT_CHECKPOINT_URL") or None,
            run_timeout_s=_float("PERFSCOUT_RUN_TIMEOUT", 30.0),
            startup_runs=_int("PERFSCOUT_STARTUP_RUNS", 5),
            step_budget=_int("PERFSCOUT_STEP_BUDGET", 24),
            retry_budget=_int("PERFSCOUT_RETRY_BUDGET", 1),
            allowlist=allow,
            thread_wait_s=_float("PERFSCOUT_THREAD_WAIT", 10.0),
            adb_path=env.get("PERFSCOUT_ADB") or None,
            adb_timeout_s=_positive("PERFSCOUT_ADB_TIMEOUT", None),
            max_inflated_bytes=_count("PERFSCOUT_MAX_DECOMPRESSED", limits.DEFAULT.max_inflated_bytes),
            max_whole_file_bytes=_count("PERFSCOUT_MAX_WHOLE_FILE", limits.DEFAULT.max_whole_file_bytes),
            max_events=_count("PERFSCOUT_MAX_EVENTS", limits.DEFAULT.max_events),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]
