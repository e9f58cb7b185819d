"""App launch time on a device: N runs of ``am start -W``, cold or warm, and the startup node's hook.

Cold is forced, not hoped for: ``-S`` force-stops the app before every launch, so each run
starts a new process. Warm keeps the process: one unmeasured launch first, then for each run
HOME and ``am start -W`` without ``-S``. Android 10+ prints ``LaunchState`` (COLD/WARM/HOT) and
that is what each run is labelled with; on older releases the label is the mode that was forced.
Failed launches are kept in the file and reported, never counted.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from graph.enums import CollectionKind, ErrorKind
from graph.payloads import collection
from nodes.android.intent import read_request
from nodes.android.names import InvalidName, check_component, check_package
from nodes.android.session import Session, open_session
from nodes.framework.context import NodeContext
from nodes.framework.errors import ToolFailure
from nodes.perf.errors import PerfDataError
from nodes.perf.model import run_statistics
from nodes.perf.parsers import amstart, android_capture

LAUNCHER = "android.intent.category.LAUNCHER"
#: Pause between launches so the previous one's work has settled (seconds).
DEFAULT_PAUSE_S = 1.0


def resolve_launcher(s: Session, package: str) -> str:
    """``package/.Activity`` of the launcher activity (``cmd package resolve-activity``)."""
    package = check_package(package)
    res = s.adb.shell(["cmd", "package", "resolve-activity", "--brief", "-c", LAUNCHER, package], check=False)
    lines = [l.strip() for l in res.stdout.splitlines() if l.strip()]
    comp = lines[-1] if lines else ""
    if res.rc != 0 or "/" not in comp or comp.lower().startswith("no activity"):
        said = (lines[-1] if lines else (res.stderr.strip().splitlines() or ["no output"])[0])[:200]
        raise ToolFailure(
            ErrorKind.VALIDATION,
            f"{package} has no launcher activity on {s.serial} (`{res.command}` printed {said!r}): "
            f"is it installed? Check `adb -s {s.serial} shell pm list packages {package}`",
        )
    try:
        return check_component(comp)
    except InvalidName as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{res.command}` printed an unusable component: {e}") from None


def measure_launches(
    s: Session,
    package: str,
    runs: int,
    warm: bool = False,
    pause_s: float = DEFAULT_PAUSE_S,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """The ``collected`` entry for N launches. Raises ToolFailure."""
    component = resolve_launcher(s, package)
    mode = "warm" if warm else "cold"
    chunks: list[str] = []
    if warm:
        res = s.adb.shell(["am", "start", "-W", "-n", component])
        chunks.append(f"# run 0 (warm-up): {res.command}\n{res.stdout}")
    last_cmd = ""
    for i in range(1, runs + 1):
        if i > 1 or warm:
            sleep(pause_s)
        if warm:
            s.adb.shell(["input", "keyevent", "KEYCODE_HOME"])
            sleep(pause_s)
            res = s.adb.shell(["am", "start", "-W", "-n", component])
        else:
            res = s.adb.shell(["am", "start", "-W", "-S", "-n", component])
        last_cmd = res.command
        chunks.append(f"# run {i}: {res.command}\n{res.stdout}")
    meta = {"command": last_cmd, "serial": s.serial, "model": s.info.model, "android": s.info.release,
            "sdk": s.info.sdk, "package": package, "component": component, "launch_mode": mode, "runs": runs}
    path = s.run_dir / "am-start.txt"
    path.write_text(android_capture.header(meta) + "\n".join(chunks), encoding="utf-8")
    try:
        pd = amstart.parse(str(path))
    except PerfDataError as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{last_cmd}` output did not parse: {e.problem}") from None
    totals = [r.total_ms for r in pd.startup_runs]
    kinds = sorted({r.kind for r in pd.startup_runs})
    summary: dict[str, Any] = {
        "task": "launch",
        "device": s.info.describe(),
        "package": package,
        "component": component,
        "mode": mode,
        "launch_state": kinds[0] if len(kinds) == 1 else "mixed: " + ", ".join(kinds),
        "runs_requested": runs,
        "runs_ok": len(totals),
        "total_ms": totals,
        "wait_ms": [r.wait_ms for r in pd.startup_runs],
        **run_statistics(totals),
    }
    if pd.warnings:
        summary["failed"] = list(pd.warnings)
    return collection(CollectionKind.ANDROID, paths={"startup": str(path)}, summary=summary,
                      source=s.source(f"shell am start -W {'-S ' if not warm else ''}-n {component}"))


def describe_launches(summary: Mapping[str, Any]) -> str:
    return (
        f"{summary['package']} on {summary['device']}: {summary['runs_ok']} {summary['mode']} launches "
        f"(reported as {summary['launch_state']}), TotalTime median {summary['median_ms']:g} ms, "
        f"min {summary['min_ms']:g}, max {summary['max_ms']:g} ms"
    )


def _pause(ctx: NodeContext) -> float:
    return DEFAULT_PAUSE_S if ctx.android_launch_pause_s is None else max(0.0, float(ctx.android_launch_pause_s))


def device_startup(state: Mapping[str, Any], ctx: NodeContext, text: str) -> dict[str, Any]:
    """The startup stage's result for an Android package with no local target: N launches of
    the kind ``text`` (the user's message) asks for.

    Raises the Android exceptions (nodes/android/outcome.py translates them) or ToolFailure.
    """
    req = read_request(text)
    runs = req.runs or max(1, int(ctx.startup_runs))
    package = check_package(state.get("package"))
    s = open_session(state, ctx)
    collected = measure_launches(s, package, runs, warm=req.warm, pause_s=_pause(ctx))
    return {"run_dir": str(s.run_dir), "collected": collected}
