"""Start-up time of a local program: N launches, each timed to exit or to "ready".

"Ready" is what the user's program means by it: a line of output matching a regex ("listening
on"), or a TCP port accepting connections; without either, a launch ends when the program
exits. Exit times come from a thread blocked in ``waitpid``, ready-by-output times from the
reader thread that saw the line, so neither is rounded to a polling interval. The first launch
is reported on its own (the coldest: nothing of the program is in the OS caches yet, unless
an earlier run put it there — the page cache is not dropped). A Python target is launched once
more under ``-X importtime``; the import lines are kept for the analyzer's import tree.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any, Callable

from graph.enums import CollectionKind, ErrorKind
from graph.payloads import collection
from nodes.collect.documents import startup_summary, write_startup
from nodes.collect.handoff import split_analysable
from nodes.collect.options import CollectOptions
from nodes.collect.profile import program_env
from nodes.collect.rundir import write_json, write_text
from nodes.collect.run_limit import raise_limit_hint
from nodes.collect.runner import Launched, RunResult
from nodes.collect.target import Target
from nodes.framework.errors import ToolFailure
from nodes.framework.context import report_deadline

#: Import lines kept at most (a large application imports a few thousand modules).
MAX_IMPORT_LINES = 200_000


class ReadyWatch:
    """Knows when a launched program became ready; ``when()`` is the wait loop's ``ready``."""

    def __init__(self, opts: CollectOptions):
        self.port = opts.ready_port
        self.host = opts.ready_host
        self.regex: re.Pattern[str] | None = None
        if opts.ready_regex:
            try:
                self.regex = re.compile(opts.ready_regex)
            except re.error as e:
                raise ToolFailure(ErrorKind.VALIDATION, f"ready_regex {opts.ready_regex!r} is not a regex: {e}") from None
        self._at: float | None = None
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        if self.regex is not None:
            return f"output matching {self.regex.pattern!r}"
        if self.port is not None:
            return f"port {self.host}:{self.port} accepting"
        return "exit"

    def reset(self) -> None:
        self._at = None

    def check_port_free(self) -> None:
        if self.port is not None and self._port_open():
            raise ToolFailure(
                ErrorKind.VALIDATION,
                f"port {self.host}:{self.port} already accepts connections before launch; another "
                "program holds it, so readiness cannot be measured there",
            )

    def on_line(self, line: str) -> None:
        if self.regex is not None and self._at is None and self.regex.search(line):
            with self._lock:
                if self._at is None:
                    self._at = time.monotonic()

    def _port_open(self) -> bool:
        try:
            with socket.create_connection((self.host, int(self.port)), timeout=0.05):
                return True
        except OSError:
            return False

    def when(self) -> float | None:
        if self._at is not None:
            return self._at
        if self.port is not None and self.regex is None and self._port_open():
            self._at = time.monotonic()
        return self._at

    @property
    def by_exit(self) -> bool:
        return self.regex is None and self.port is None


def _launch(
    argv: list[str], target: Target, opts: CollectOptions, watch: ReadyWatch, on_stderr: Callable[[str], None] | None = None
) -> RunResult:
    watch.reset()

    def err_line(line: str) -> None:
        watch.on_line(line)
        if on_stderr is not None:
            on_stderr(line)

    scan = watch.regex is not None
    with Launched(
        argv,
        cwd=target.cwd,
        env=program_env(),
        capture_limit=opts.capture_limit,
        on_stdout_line=watch.on_line if scan else None,
        on_stderr_line=err_line if (scan or on_stderr is not None) else None,
    ) as prog:
        prog.wait(opts.timeout_s, ready=None if watch.by_exit else watch.when)
    return prog.result()


def _check(res: RunResult, target: Target, opts: CollectOptions, watch: ReadyWatch, what: str, where: str) -> None:
    if res.outcome == "timeout":
        raise ToolFailure(
            ErrorKind.TIMEOUT,
            f"{what}: {target.display} was not {'done' if watch.by_exit else 'ready'} within the "
            f"{opts.timeout_s:g} s limit (waiting for {watch.label}); stopped it. {raise_limit_hint(opts.timeout_s)}; {where}",
        )
    rc = res.returncode
    if res.outcome == "exited" and rc not in (0, None):
        how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
        tail = res.stderr_tail() or "(no output on stderr)"
        raise ToolFailure(ErrorKind.VALIDATION, f"{what}: {target.display} {how}; {where}. Its stderr ends with:\n{tail}")
    if res.outcome == "exited" and not watch.by_exit:
        raise ToolFailure(
            ErrorKind.VALIDATION,
            f"{what}: {target.display} exited (status {rc}) before it was ready (waiting for {watch.label}); {where}",
        )


def measure_startup(target: Target, run_dir: Path, opts: CollectOptions) -> dict[str, Any]:
    """Launch ``target`` ``opts.startup_runs`` times; the ``collected`` dict, or ``ToolFailure``."""
    watch = ReadyWatch(opts)
    where = f"run recorded in {run_dir}"
    record: dict[str, Any] = {
        "kind": "startup",
        "command": target.display,
        "argv": list(target.argv),
        "cwd": target.cwd,
        "ready_by": watch.label,
        "timeout_s": opts.timeout_s,
        "started_unix": time.time(),
        "runs": [],
    }
    files: dict[str, str] = {}
    runs: list[dict[str, Any]] = []
    try:
        for i in range(opts.startup_runs):
            watch.check_port_free()
            # Each launch has its own limit: the CLI counts down to it.
            report_deadline("startup", opts.timeout_s, f"launch {i + 1} of {opts.startup_runs}: {target.display}")
            res = _launch(list(target.argv), target, opts, watch)
            record["runs"].append(_run_record(i, res))
            if i == 0:
                files["first_stdout"] = write_text(run_dir / "first-stdout.txt", res.stdout.data())
                files["first_stderr"] = write_text(run_dir / "first-stderr.txt", res.stderr.data())
            _check(res, target, opts, watch, f"launch {i + 1} of {opts.startup_runs}", where)
            runs.append(
                {
                    "index": i,
                    "total_ms": round(res.wall_s * 1000.0, 3),
                    "kind": "cold" if i == 0 else "warm",
                    "ready_by": "exit" if watch.by_exit else watch.label,
                    "exit_code": res.returncode,
                    "command": target.display,
                }
            )
        importtime_path = None
        if target.is_python and opts.importtime:
            importtime_path = _importtime_run(target, run_dir, opts, watch, record, where)
            if importtime_path:
                files["importtime"] = importtime_path
        files["startup"] = write_startup(run_dir / "startup-runs.json", runs, target=target.display)
    finally:
        record["files"] = dict(files)
        record["summary"] = startup_summary([r["total_ms"] for r in runs])
        write_json(run_dir / "run.json", record)

    paths, notes = split_analysable({k: v for k, v in files.items() if k in ("startup", "importtime")})
    summary = {
        "command": target.display,
        "ready_by": watch.label,
        "python": target.is_python,
        "script": target.script,
        "run_dir": str(run_dir),
        **startup_summary([r["total_ms"] for r in runs]),
        "notes": notes,
    }
    return collection(CollectionKind.STARTUP, paths=paths, files=files, summary=summary, source=target.display)


def _run_record(i: int, res: RunResult) -> dict[str, Any]:
    return {
        "index": i,
        "outcome": res.outcome,
        "exit_code": res.returncode,
        "wall_ms": round(res.wall_s * 1000.0, 3),
        "stopped_pids": res.stopped_pids,
        "stdout_bytes": res.stdout.total,
        "stderr_bytes": res.stderr.total,
    }


def _importtime_run(
    target: Target, run_dir: Path, opts: CollectOptions, watch: ReadyWatch, record: dict[str, Any], where: str
) -> str | None:
    lines: list[str] = []

    def keep(line: str) -> None:
        if line.startswith("import time:") and len(lines) < MAX_IMPORT_LINES:
            lines.append(line)

    watch.check_port_free()
    report_deadline("startup", opts.timeout_s, f"-X importtime run: {target.display}")
    res = _launch(target.with_python_flags("-X", "importtime"), target, opts, watch, on_stderr=keep)
    record["importtime_run"] = _run_record(-1, res)
    _check(res, target, opts, watch, "the -X importtime run", where)
    if not lines:
        record["importtime_run"]["note"] = "no import lines on stderr"
        return None
    # Where the program's own modules live (sys.path[0] of a script run): the log names modules,
    # not files, and the analyzer's default search path does not hold the script's folder.
    # One comment line, ignored by readers that do not use it.
    hint = f"# search path: {json.dumps([os.path.dirname(target.script)])}\n" if target.script else ""
    return write_text(run_dir / "importtime.log", hint + "\n".join(lines) + "\n")
