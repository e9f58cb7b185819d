"""PerfScout's own small JSON files, written by the collector and read back by the analyzer.

Two kinds, told apart by the ``"perfscout"`` key (always the first key, so sniffing is cheap).
Writers: :func:`write_psutil_series`, :func:`write_startup_runs` (or any JSON writer that
follows the schema; :class:`PsutilSeries` and :class:`StartupRuns` validate it).

psutil-series — resource use of a process over time (``psutil`` sampling)::

    {
      "perfscout": "psutil-series",
      "version": 1,
      "pid": 4242,                          # optional
      "command": "python examples/slow.py", # optional
      "interval_s": 0.1,                    # optional: the sampling interval
      "t0_unix": 1764500000.0,              # optional: wall clock of t = 0
      "series": {                           # name → unit and [t_seconds_since_t0, value] points
        "cpu_percent": {"unit": "%",     "points": [[0.0, 12.5], [0.1, 98.0]]},
        "rss_bytes":   {"unit": "bytes", "points": [[0.0, 31457280], [0.1, 33554432]]},
        "num_threads": {"unit": "",      "points": [[0.0, 1], [0.1, 2]]}
      },
      "threads": [                          # optional: per-thread CPU at the end (psutil threads())
        {"tid": 4242, "name": "MainThread", "user_s": 1.25, "system_s": 0.05}
      ]
    }

Series names are free; the analyzer summarises every series (min/max/mean/last, a downsampled
curve) and knows ``cpu_percent`` (a finding when a process sits at one full core) and
``rss_bytes`` (growth). Non-finite values are rejected.

startup-runs — launch time of a target measured N times::

    {
      "perfscout": "startup-runs",
      "version": 1,
      "target": "examples/slow.py",         # or an Android package / activity
      "kind": "cold",                       # cold | warm | hot | unknown
      "runs": [                             # the fields of nodes.perf.model.StartupRun
        {"index": 0, "total_ms": 412.0, "wait_ms": null, "kind": "cold",
         "ready_by": "exit", "exit_code": 0, "command": "python examples/slow.py"}
      ],
      "phases": [                           # optional, nodes.perf.model.StartupPhase
        {"name": "imports", "start_ms": 0.0, "dur_ms": 180.0, "thread": "MainThread"}
      ]
    }
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Literal, Mapping, Sequence

import msgspec

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import read_all, strip_json_start
from nodes.perf.model import PerfData, StartupPhase, StartupRun
from nodes.perf.result import Result, error_location

FORMAT = "perfscout_json"
PSUTIL_SERIES = "psutil-series"
STARTUP_RUNS = "startup-runs"
SCHEMA_VERSION = 1


class Series(Result, kw_only=True):
    unit: str | None = None
    points: list[tuple[float, float]] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        # msgspec runs this after converting (and wraps the ValueError as a ValidationError
        # at this series' place), as pydantic ran the field validator.
        for t, v in self.points:
            if not (math.isfinite(t) and math.isfinite(v)):
                raise ValueError("points must be finite numbers")


class ThreadCpu(Result, kw_only=True):
    tid: int
    name: str | None = None
    user_s: float = 0.0
    system_s: float = 0.0


class PsutilSeries(Result, kw_only=True):
    perfscout: Literal["psutil-series"]
    version: int = SCHEMA_VERSION
    pid: int | None = None
    command: str | None = None
    interval_s: float | None = None
    t0_unix: float | None = None
    series: dict[str, Series]
    threads: list[ThreadCpu] = msgspec.field(default_factory=list)


class StartupRuns(Result, kw_only=True):
    perfscout: Literal["startup-runs"]
    version: int = SCHEMA_VERSION
    target: str | None = None
    kind: str = "unknown"
    runs: list[StartupRun]
    phases: list[StartupPhase] = msgspec.field(default_factory=list)


# --- writing ---------------------------------------------------------------------------


def _write(path: str | os.PathLike, doc: Result) -> str:
    data = doc.model_dump(mode="json")
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False)
    os.replace(tmp, path)
    return os.fspath(path)


def write_psutil_series(
    path: str | os.PathLike,
    series: Mapping[str, Sequence[tuple[float, float]]],
    units: Mapping[str, str] | None = None,
    *,
    pid: int | None = None,
    command: str | None = None,
    interval_s: float | None = None,
    t0_unix: float | None = None,
    threads: Sequence[Mapping[str, Any]] = (),
) -> str:
    """Write a psutil-series file (validated). ``series``: name → [(t_seconds, value), …]."""
    units = units or {}
    doc = PsutilSeries(
        perfscout=PSUTIL_SERIES,
        pid=pid,
        command=command,
        interval_s=interval_s,
        t0_unix=t0_unix,
        series={k: Series(unit=units.get(k), points=[(float(t), float(v)) for t, v in pts]) for k, pts in series.items()},
        threads=[ThreadCpu.model_validate(dict(t)) for t in threads],
    )
    return _write(path, doc)


def write_startup_runs(
    path: str | os.PathLike,
    runs: Sequence[StartupRun | Mapping[str, Any]],
    *,
    target: str | None = None,
    kind: str = "unknown",
    phases: Sequence[StartupPhase | Mapping[str, Any]] = (),
) -> str:
    """Write a startup-runs file (validated)."""
    doc = StartupRuns(
        perfscout=STARTUP_RUNS,
        target=target,
        kind=kind,
        runs=[StartupRun.model_validate(r if isinstance(r, StartupRun) else dict(r)) for r in runs],
        phases=[StartupPhase.model_validate(p if isinstance(p, StartupPhase) else dict(p)) for p in phases],
    )
    return _write(path, doc)


# --- reading ---------------------------------------------------------------------------


def sniff(head: bytes, name: str) -> bool:
    h = strip_json_start(head)
    return h[:1] == b"{" and b'"perfscout"' in head[:4096] and (
        b'"psutil-series"' in head[:4096] or b'"startup-runs"' in head[:4096]
    )


def parse(path: str) -> PerfData:
    raw = read_all(path)
    try:
        obj = msgspec.json.decode(raw)
    except msgspec.DecodeError as e:
        raise PerfDataError(path, f"invalid JSON ({e})") from None
    kind = obj.get("perfscout") if isinstance(obj, dict) else None
    try:
        if kind == PSUTIL_SERIES:
            series = obj.get("series")
            if isinstance(series, dict):
                # Each series on its own first: msgspec's error path omits dict keys
                # ("$.series[...].points"), and the error should name the series.
                for name, s in series.items():
                    _validate(Series, s, f"series.{name}")
            return _series(path, _validate(PsutilSeries, obj))
        if kind == STARTUP_RUNS:
            return _startup(path, _validate(StartupRuns, obj))
    except _SchemaError as e:
        raise PerfDataError(path, f"{kind} file does not follow its schema: {e.where}: {e.msg}") from None
    raise PerfDataError(path, f"unknown perfscout file kind {kind!r} (expected psutil-series or startup-runs)")


class _SchemaError(Exception):
    def __init__(self, where: str, msg: str):
        super().__init__(f"{where}: {msg}")
        self.where, self.msg = where, msg


def _validate(cls: type[Result], obj: Any, prefix: str = "") -> Any:
    try:
        return cls.model_validate(obj)
    except msgspec.ValidationError as e:
        where, msg = error_location(e)
        raise _SchemaError(".".join(p for p in (prefix, where) if p) or "(root)", msg) from None


def _series(path: str, doc: PsutilSeries) -> PerfData:
    pd = PerfData("psutil_series", path)
    if doc.pid is not None:
        pd.facts.pid = doc.pid
    if doc.command:
        pd.meta.note("command", doc.command[:300])
    if doc.interval_s:
        pd.meta.note("interval_s", str(doc.interval_s))
    points = 0
    for name, s in doc.series.items():
        for t, v in s.points:
            pd.add_counter(name, t * 1e6, v, s.unit or None)
            points += 1
    pid = doc.pid or 0
    for t in doc.threads:
        if t.name:
            pd.set_thread_name(pid, t.tid, t.name)
        pd.add_thread_state(pid, t.tid, "running", (t.user_s + t.system_s) * 1e6)
    if doc.threads:
        first = doc.threads[0]
        main = next((t for t in doc.threads if t.name == "MainThread" or t.tid == doc.pid), first)
        pd.mark_main_thread(pid, main.tid)
    if not points and not doc.threads:
        raise PerfDataError(path, "psutil-series file without any points")
    return pd


def _startup(path: str, doc: StartupRuns) -> PerfData:
    if not doc.runs:
        raise PerfDataError(path, "startup-runs file without runs")
    pd = PerfData("startup_runs", path)
    for r in doc.runs:
        if not math.isfinite(r.total_ms) or r.total_ms < 0:
            raise PerfDataError(path, f"run {r.index}: total_ms must be a finite, non-negative number")
        pd.add_startup_run(r)
    pd.add_startup_phases(doc.phases)
    if doc.target:
        pd.meta.note("target", doc.target[:300])
    pd.facts.startup_kind = doc.kind
    pd.extend_bounds(0.0, max(r.total_ms for r in doc.runs) * 1000.0)
    return pd
