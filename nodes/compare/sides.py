"""What one side of a comparison (or the subject of a check) names, loaded as runs.

A side is the runs of one build. Accepted, tried in this order:

1. a file: a ``report.json`` (its analysis), an analysis JSON (``perfscout analyze --json``), or
   any capture the analyzer reads — one run;
2. a folder: a report folder (``report.json`` in it) is one run; otherwise every report folder
   below it and every readable data file in it. Data files of **one format** are independent
   runs (ten traces of ten launches); files of **several formats** are the files of one
   collection (py-spy + psutil + perf stat of one run, as the collector writes them) and make
   one run together. Files no reader recognises (a README, ``run.json``) are skipped;
3. a glob (``runs/*.pftrace``): each match as above;
4. a thread name: the newest report of that thread under the runs folder.

Traces are parsed in parallel, one process per core (``ProcessPoolExecutor``): each trace is
independent and parsing is CPU-bound. Anything unreadable is a :class:`SideError` with one line
naming it — a comparison with one side half-read would compare the wrong things.
"""

from __future__ import annotations

import glob as globlib
import json
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, Callable, Sequence

from nodes.perf.limits import ReadLimits, current as current_limits

#: A JSON file bigger than this is a trace, not an analysis (same bound as app/report_cmd.py).
MAX_RESULT_JSON = 64 * 1024 * 1024
REPORT_SCHEMA = "perfscout.report/1"


class SideError(ValueError):
    """A side that cannot be loaded: one line naming it and the problem."""


@dataclass
class Run:
    label: str  # a file or folder name, shown in tables
    source: str  # the path it came from
    analysis: dict[str, Any]


@dataclass
class Side:
    spec: str
    runs: list[Run] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.spec


def _json_object(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > MAX_RESULT_JSON:
            return None
        with path.open("rb") as f:
            if not f.read(64).lstrip().startswith(b"{"):
                return None
            f.seek(0)
            data = json.loads(f.read().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    except OSError as e:
        raise SideError(f"{path}: cannot read it ({e.strerror or e})") from None
    return data if isinstance(data, dict) else None


def _is_analysis(d: dict[str, Any]) -> bool:
    return "format" in d and "source" in d and "traceEvents" not in d and "$schema" not in d


def _stored_analysis(path: Path) -> dict[str, Any] | None:
    """The analysis a report.json or an analysis JSON holds; None when the file is a capture."""
    if path.suffix.lower() != ".json" and not path.name.endswith(".json.gz"):
        return None
    d = _json_object(path) if path.suffix.lower() == ".json" else None
    if d is None:
        return None
    if d.get("schema") == REPORT_SCHEMA:
        if not isinstance(d.get("analysis"), dict):
            raise SideError(f"{path}: a report.json without its analysis")
        return d["analysis"]
    if _is_analysis(d):
        return d
    return None


def slim(a: dict[str, Any]) -> dict[str, Any]:
    """An analysis without its drawing data (stacks, per-frame series, counter curves): what
    ``perfscout analyze --json`` prints (app/analyze_cmd.py ``to_json``); a comparison needs
    only the numbers, and a side of many runs stays small."""
    a = dict(a)
    a.pop("stacks", None)
    if isinstance(a.get("frames"), dict):
        a["frames"] = {k: v for k, v in a["frames"].items() if k not in ("durations_ms", "starts_ms")}
    if a.get("counters"):
        a["counters"] = [{k: v for k, v in c.items() if k != "points"} for c in a["counters"] if isinstance(c, dict)]
    return a


def _analyse_one(paths: tuple[str, ...], limits: ReadLimits | None = None) -> tuple[bool, Any]:
    """Worker: (True, analysis JSON) or (False, the one-line error). Runs in a child process,
    which is handed the caller's reader bounds (a forkserver child inherits none)."""
    from nodes.perf.analysis import analyze_paths
    from nodes.perf.errors import PerfDataError

    try:
        return True, slim(analyze_paths(list(paths), limits=limits).model_dump(mode="json"))
    except PerfDataError as e:
        return False, str(e).splitlines()[0] if str(e) else f"{paths[0]}: unreadable data"
    except MemoryError:
        return False, f"{paths[0]}: out of memory while reading it"


def workers() -> int:
    """One process per core (PERFSCOUT_WORKERS overrides, e.g. 1 in a constrained CI job)."""
    env = os.environ.get("PERFSCOUT_WORKERS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, os.cpu_count() or 1)


def analyse_groups(groups: Sequence[tuple[str, ...]]) -> list[dict[str, Any]]:
    """Analyse each group of files (one run each), in parallel when there are several."""
    if not groups:
        return []
    n = min(workers(), len(groups))
    bounds = current_limits()
    if n <= 1:
        results = [_analyse_one(g, bounds) for g in groups]
    else:
        # fork is the cheapest start, but forking a process that runs other threads (a graph node
        # inside LangGraph's executor) can copy a held lock: start from a clean server there.
        ctx = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
            results = list(pool.map(_analyse_one, groups, repeat(bounds)))
    out = []
    for ok, value in results:
        if not ok:
            raise SideError(value)
        out.append(value)
    return out


def _format_of(path: str) -> str | None:
    from nodes.perf.errors import PerfDataError
    from nodes.perf.formats import detect

    try:
        return detect(path)[0]
    except (PerfDataError, OSError):
        return None


def _newest_report(folder: Path) -> Path | None:
    found = list(folder.glob("*/report.json")) + list(folder.glob("*/*/report.json"))
    return max(found, key=lambda p: (p.stat().st_mtime, str(p))) if found else None


def thread_report(thread: str, runs_dir: str | None) -> Path | None:
    """The newest ``report.json`` of ``thread`` under ``runs_dir``; None when it has none."""
    from nodes.report.output import safe_component

    folder = Path(runs_dir) / safe_component(thread) if runs_dir else None
    return _newest_report(folder) if folder is not None and folder.is_dir() else None


@dataclass
class _Plan:
    """Runs already loaded (stored analyses) and groups of files still to analyse."""

    stored: list[Run] = field(default_factory=list)
    groups: list[tuple[str, ...]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


def _plan_file(p: Path, plan: _Plan) -> None:
    stored = _stored_analysis(p)
    if stored is not None:
        label = p.parent.name if p.name == "report.json" else p.name
        plan.stored.append(Run(label, str(p), stored))
    else:
        plan.groups.append((str(p),))
        plan.labels.append(p.name)


def _plan_dir(d: Path, plan: _Plan) -> None:
    if (d / "report.json").is_file():
        _plan_file(d / "report.json", plan)
        return
    reports = sorted(d.glob("*/report.json"))
    for r in reports:
        _plan_file(r, plan)
    files = sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith("."))
    stored_here, data = [], []
    for p in files:
        a = _stored_analysis(p)
        if a is not None:
            stored_here.append(Run(p.name, str(p), a))
        elif p.name != "run.json":
            fmt = _format_of(str(p))
            if fmt is not None:
                data.append((p, fmt))
    plan.stored.extend(stored_here)
    formats = {fmt for _, fmt in data}
    if len(formats) == 1:
        for p, _ in data:
            plan.groups.append((str(p),))
            plan.labels.append(p.name)
    elif len(formats) > 1:
        plan.groups.append(tuple(str(p) for p, _ in data))
        plan.labels.append(d.name)
    if not reports and not stored_here and not data:
        raise SideError(f"{d}: a folder with no capture, analysis or report the analyzer can read")


def load_side(spec: str, *, runs_dir: str | None = None, confine: Callable[[str], object] | None = None) -> Side:
    """The runs ``spec`` names (see the module docstring). Raises SideError.

    ``confine`` is called with every file the side reads, once the side is planned and before
    any is analysed; it raises to refuse one (the MCP server: files outside its workspace)."""
    plan = _plan(spec, runs_dir=runs_dir)
    if confine is not None:
        for path in [r.source for r in plan.stored] + [p for group in plan.groups for p in group]:
            confine(path)
    side = Side(spec, list(plan.stored))
    for label, group, analysis in zip(plan.labels, plan.groups, analyse_groups(plan.groups)):
        side.runs.append(Run(label, group[0] if len(group) == 1 else os.path.dirname(group[0]), analysis))
    return side


def _plan(spec: str, *, runs_dir: str | None) -> _Plan:
    plan = _Plan()
    p = Path(spec)
    if p.is_file():
        _plan_file(p, plan)
    elif p.is_dir():
        _plan_dir(p, plan)
    elif any(ch in spec for ch in "*?["):
        matches = sorted(globlib.glob(spec))
        if not matches:
            raise SideError(f"{spec}: the pattern matches nothing")
        for m in matches:
            mp = Path(m)
            if mp.is_dir():
                _plan_dir(mp, plan)
            elif mp.is_file():
                _plan_file(mp, plan)
    elif p.exists():
        raise SideError(f"{spec}: not a regular file or folder")
    else:
        newest = thread_report(spec, runs_dir)
        if newest is None:
            where = f" in {runs_dir}" if runs_dir else ""
            raise SideError(f"{spec}: no such file or folder, and no report of a thread {spec!r}{where}")
        _plan_file(newest, plan)
    if not plan.stored and not plan.groups:
        raise SideError(f"{spec}: nothing to read")
    return plan


def side_from_analyses(label: str, analyses: Sequence[dict[str, Any]]) -> Side:
    """A side from analyses already in memory (the graph's state)."""
    return Side(label, [Run(os.path.basename(str(a.get("source") or label)), str(a.get("source") or label), slim(a))
                        for a in analyses])
