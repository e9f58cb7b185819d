"""One profiled run of a target: py-spy stacks (Python), a psutil series, ``perf stat`` counters.

The program is launched once and every observer attaches to that one process, so the stacks,
the CPU/RSS series and the counters describe the same run. The outcome is classified for the
retry policy: the profiler failing to attach while the program runs is worth one retry; a
crash, a missing file or a refusal is not. A program still running at the time limit is stopped
there and profiled for the limit, as a profiler's duration is its sampling window; only a run
that sampled nothing by then is a timeout (and is not retried: the same run ends the same way). Whatever happens, the run
folder keeps ``run.json``, the bounded output and whatever was measured, and nothing the
program started is left running.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from graph.enums import CollectionKind, ErrorKind
from graph.payloads import collection
from nodes.collect.documents import write_series
from nodes.collect.handoff import split_analysable
from nodes.collect.options import CollectOptions
from nodes.collect.perfstat import PerfStatAttached, perf_status
from nodes.collect.pyspy import (
    ATTACH_RESTART_DELAY_S,
    ATTACH_RESTARTS,
    PySpyOutcome,
    PySpyRecorder,
    attach_hint,
    find_pyspy,
    interpreter_not_up,
    looked_too_early,
    python_loaded,
)
from nodes.collect.rundir import write_json, write_text
from nodes.collect.run_limit import raise_limit_hint
from nodes.collect.runner import Launched
from nodes.collect.sampler import TreeSampler
from nodes.collect.target import Target
from nodes.framework.errors import ToolFailure
from nodes.framework.context import report_deadline

#: How often the wait loop checks that py-spy is still attached.
_CHECK_S = 0.1


def program_env() -> dict[str, str]:
    """The program's environment: the user's, with Python output unbuffered (lines arrive live)."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def collect_profile(target: Target, run_dir: Path, opts: CollectOptions) -> dict[str, Any]:
    """Run ``target`` once under observation; the ``collected`` dict, or ``ToolFailure``."""
    record: dict[str, Any] = {
        "kind": "profile",
        "command": target.display,
        "argv": list(target.argv),
        "cwd": target.cwd,
        "timeout_s": opts.timeout_s,
        "started_unix": time.time(),
        "tools": {},
        "notes": [],
    }
    files: dict[str, str] = {}
    pyspy_exe = None
    if target.is_python:
        pyspy_exe = find_pyspy(opts.pyspy_path)
        if pyspy_exe is None:
            where = opts.pyspy_path or "next to the interpreter or on PATH"
            msg = (
                f"py-spy was not found ({where}); it samples the Python stacks of {target.display}. "
                "Install it with `pip install py-spy`, or point the pyspy_path setting at it"
            )
            record["outcome"] = "not started"
            record["error"] = {"kind": ErrorKind.UNAVAILABLE.value, "message": msg}
            write_json(run_dir / "run.json", record)
            raise ToolFailure(ErrorKind.UNAVAILABLE, f"{msg}. Run recorded in {run_dir}")
    perf = perf_status(opts.perf_path) if opts.use_perf else None
    record["tools"]["perf"] = perf.reason if perf else "perf disabled in settings"
    if perf is not None and not perf.usable:
        record["notes"].append(perf.reason)

    profile_path = str(run_dir / "pyspy.speedscope.json")
    perf_path = str(run_dir / "perf-stat.txt")
    spy: PySpyRecorder | None = None
    perf_run: PerfStatAttached | None = None
    sampler: TreeSampler | None = None
    spy_out: PySpyOutcome | None = None
    spy_done: PySpyRecorder | None = None
    attach_failed = False
    attach_restarts = 0
    prog = Launched(list(target.argv), cwd=target.cwd, env=program_env(), capture_limit=opts.capture_limit)
    try:
        launched_at = time.monotonic()
        sampler = TreeSampler(prog.tree, opts.sample_interval_s).start()
        loaded_at_start: bool | None = None  # whether the program had Python loaded when py-spy started

        def start_spy() -> PySpyRecorder:
            nonlocal loaded_at_start
            loaded_at_start = python_loaded(prog.pid)
            return PySpyRecorder(
                pyspy_exe, prog.pid, profile_path, rate=opts.pyspy_rate, native=opts.pyspy_native, idle=opts.pyspy_idle
            )

        if pyspy_exe:
            spy = start_spy()
        if perf is not None and perf.usable and perf.path:
            perf_run = PerfStatAttached(perf, prog.pid, perf_path)
        deadline = time.monotonic() + opts.timeout_s
        # The CLI counts down to the limit, so a long wait reads as expected, not as a hang.
        report_deadline("collect", opts.timeout_s, f"profiling {target.display}")
        while True:
            state = prog.wait(min(_CHECK_S, max(0.0, deadline - time.monotonic())))
            if state == "exited":
                break
            if spy is not None and not spy.running():
                # py-spy ends on its own when the program ends (status 0); ending with an error
                # while the program still runs means it could not attach.
                failed = spy.proc.returncode not in (0, None)
                if prog.wait(0.2) == "exited":
                    break
                early = looked_too_early(loaded_at_start, time.monotonic() - launched_at)
                if failed and early and attach_restarts < ATTACH_RESTARTS and interpreter_not_up(spy.finish(1.0).message):
                    # Looked before the program's interpreter was up (a launcher still starting
                    # it, or a loaded machine between fork and exec): not a refusal, so attach
                    # again shortly.
                    attach_restarts += 1
                    record["notes"].append(f"py-spy attached before Python was up; attached again ({attach_restarts})")
                    time.sleep(ATTACH_RESTART_DELAY_S)
                    spy = start_spy()
                    continue
                if failed:
                    attach_failed = True
                    break
                spy_done, spy = spy, None
                continue
            if time.monotonic() >= deadline:
                break
    except KeyboardInterrupt:
        prog.outcome = "interrupted"
        raise
    finally:
        if sampler is not None:
            sampler.stop()
        prog.stop()
        spy = spy or spy_done
        if spy is not None:
            spy_out = spy.finish()
        perf_res = perf_run.finish() if perf_run is not None else None
        result = prog.result()
        record.update(
            {
                "pid": result.pid,
                "outcome": "profiler failed" if attach_failed else result.outcome,
                "exit_code": result.returncode,
                "wall_s": round(result.wall_s, 4),
                "stopped_pids": result.stopped_pids,
                "stdout_bytes": result.stdout.total,
                "stderr_bytes": result.stderr.total,
                "output_truncated": result.stdout.truncated or result.stderr.truncated,
            }
        )
        files["stdout"] = write_text(run_dir / "stdout.txt", result.stdout.data())
        files["stderr"] = write_text(run_dir / "stderr.txt", result.stderr.data())
        if sampler is not None:
            files["series"] = write_series(
                run_dir / "psutil-series.json", sampler.series, command=target.display, pid=result.pid
            )
            record["series"] = sampler.series.summary()
        if spy_out is not None:
            files["pyspy_log"] = write_text(run_dir / "pyspy.log", spy_out.log)
            record["tools"]["py-spy"] = {
                "argv": spy.argv if spy else None,
                "ok": spy_out.ok,
                "samples": spy_out.samples,
                "errors": spy_out.errors,
                "message": spy_out.message,
            }
            if spy_out.ok:
                files["profile"] = spy_out.path
        if perf_res is not None and os.path.isfile(perf_path) and os.path.getsize(perf_path) > 0:
            files["perf_stat"] = perf_path
        record["files"] = dict(files)
        write_json(run_dir / "run.json", record)

    return _classify(target, run_dir, opts, record, files, result, spy_out, attach_failed)


def _classify(target, run_dir, opts, record, files, result, spy_out, attach_failed) -> dict[str, Any]:
    where = f"run recorded in {run_dir}"
    stopped = len(result.stopped_pids)
    if attach_failed and spy_out is not None:
        raise ToolFailure(
            ErrorKind.RETRYABLE,
            f"py-spy could not attach to {target.display} (pid {result.pid}): {spy_out.message}; "
            f"{attach_hint(spy_out.message)}. Stopped the program; {where}",
        )
    at_limit = result.outcome == "timeout"
    if at_limit and not (spy_out is not None and spy_out.ok) and not files.get("series"):
        # Nothing was sampled up to the limit: nothing to analyse, and the same run would
        # end the same way (a timeout is not retried).
        raise ToolFailure(
            ErrorKind.TIMEOUT,
            f"{target.display} was still running after the {opts.timeout_s:g} s limit and nothing was "
            f"sampled; stopped it ({stopped} process{'es' if stopped != 1 else ''}). {raise_limit_hint(opts.timeout_s)}; {where}",
        )
    rc = None if at_limit else result.returncode
    if rc not in (0, None):
        how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
        tail = result.stderr_tail() or "(no output on stderr)"
        raise ToolFailure(ErrorKind.VALIDATION, f"{target.display} {how}; {where}. Its stderr ends with:\n{tail}")

    notes: list[str] = list(record["notes"])
    if at_limit:
        # A profiler's time limit is its sampling window (py-spy record --duration): what was
        # sampled until the limit is the profile, and the answer says where it was cut.
        notes.append(
            f"the program was still running at the {opts.timeout_s:g} s run limit and was stopped there; "
            f"the profile covers those {opts.timeout_s:g} s. {raise_limit_hint(opts.timeout_s)}"
        )
    if spy_out is not None and not spy_out.ok:
        notes.append(
            f"the program ended after {result.wall_s * 1000:.0f} ms, before py-spy could sample it "
            f"({spy_out.message}); no Python stacks"
        )
    elif spy_out is not None and spy_out.samples == 0:
        notes.append("py-spy took no samples (the program ended at once)")
    if result.stdout.truncated or result.stderr.truncated:
        notes.append(
            f"output was {result.stdout.total + result.stderr.total} bytes; kept the first and last "
            f"{opts.capture_limit // 1024} KiB of each stream"
        )
    if stopped and not at_limit:
        notes.append(f"stopped {stopped} process{'es' if stopped != 1 else ''} the program left running")
    paths, handoff_notes = split_analysable({k: v for k, v in files.items() if k in ("profile", "series", "perf_stat")})
    notes += handoff_notes
    summary: dict[str, Any] = {
        "command": target.display,
        "exit_code": rc,
        # Set when the run was cut at the limit (seconds): the report leads with it.
        "stopped_at_limit_s": opts.timeout_s if at_limit else None,
        "pid": result.pid,
        "wall_s": record["wall_s"],
        "python": target.is_python,
        "script": target.script,
        "run_dir": str(run_dir),
        **{f"series_{k}": v for k, v in (record.get("series") or {}).items()},
        "pyspy_samples": spy_out.samples if spy_out is not None else None,
        "perf": record["tools"]["perf"],
        "stdout_bytes": result.stdout.total,
        "stderr_bytes": result.stderr.total,
        "notes": notes,
    }
    return collection(CollectionKind.PROFILE, paths=paths, files=files, summary=summary, source=target.display)
