"""Point-in-time queries: CPU (``dumpsys cpuinfo`` + ``top``), memory (``dumpsys meminfo``), battery.

These answer a question directly (``say``) instead of feeding the analyzer, so their
``collected`` has no ``paths``; the raw output is still saved under ``raw`` so every number in
the answer can be checked against what the device printed.
"""

from __future__ import annotations

import re
from typing import Any

from graph.enums import CollectionKind, ErrorKind
from graph.payloads import collection
from nodes.android.names import check_package
from nodes.android.session import Session
from nodes.framework.errors import ToolFailure
from nodes.perf.errors import PerfDataError
from nodes.perf.parsers import android_capture, cpuinfo, meminfo


def _save(s: Session, name: str, meta: dict[str, Any], body: str) -> str:
    path = s.run_dir / name
    path.write_text(android_capture.header(meta) + body, encoding="utf-8")
    return str(path)


def _meta(s: Session, command: str, package: str | None) -> dict[str, Any]:
    return {"command": command, "serial": s.serial, "model": s.info.model, "android": s.info.release,
            "sdk": s.info.sdk, "package": package}


# --------------------------------------------------------------------------------------
# CPU
# --------------------------------------------------------------------------------------


def collect_cpu(s: Session, package: str | None) -> tuple[dict[str, Any], str]:
    """(collected, answer). ``dumpsys cpuinfo`` is required; ``top`` adds a snapshot if it runs."""
    if package:
        package = check_package(package)
    dump = s.adb.shell(["dumpsys", "cpuinfo"])
    top = s.adb.shell(["top", "-b", "-n", "1"], check=False)
    body = f"# {dump.command}\n{dump.stdout}"
    if top.rc == 0 and top.stdout.strip():
        body += f"\n# {top.command}\n{top.stdout}"
    path = _save(s, "cpuinfo.txt", _meta(s, dump.command, package), body)
    try:
        pd = cpuinfo.parse(path)
    except PerfDataError as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{dump.command}` output did not parse: {e.problem}") from None
    st = pd.stats
    if "cpuinfo.total" not in st:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{dump.command}` printed no TOTAL line")
    summary: dict[str, Any] = {"task": "cpu", "device": s.info.describe()}
    for key in ("total", "user", "kernel", "iowait", "window", "load_1min"):
        if f"cpuinfo.{key}" in st:
            summary[f"cpuinfo_{key}"] = st[f"cpuinfo.{key}"]
    procs = sorted(((k.split(":", 1)[1], v) for k, v in st.items() if k.startswith("cpuinfo.process:")),
                   key=lambda kv: -kv[1])
    summary["top_processes"] = [{"name": n, "pct": v} for n, v in procs[:5]]
    if "top.capacity" in st:
        summary["top_capacity_pct"] = st["top.capacity"]
    lines = [
        f"CPU on {s.info.describe()} (dumpsys cpuinfo, share of all cores over the last "
        f"{st.get('cpuinfo.window', 0) / 1000:.1f} s): total {st['cpuinfo.total']:g}%"
        + (f" (user {st['cpuinfo.user']:g}%, kernel {st['cpuinfo.kernel']:g}%)"
           if "cpuinfo.user" in st and "cpuinfo.kernel" in st else "")
    ]
    if package:
        summary["package"] = package
        share = st.get(f"cpuinfo.process:{package}")
        snap = st.get(f"top.process:{package}")
        if share is not None:
            summary["package_cpuinfo_pct"] = share
            lines.append(f"{package}: {share:g}% of all cores (dumpsys cpuinfo)")
        else:
            lines.append(f"{package}: not listed by dumpsys cpuinfo (no measurable CPU in that window, or not running)")
        if snap is not None:
            summary["package_top_pct"] = snap
            cap = st.get("top.capacity")
            lines.append(f"{package}: {snap:g}% of one core in a `top` snapshot"
                         + (f" (the device counts {cap:g}% for all cores)" if cap else ""))
    if procs:
        lines.append("busiest: " + ", ".join(f"{n} {v:g}%" for n, v in procs[:5]))
    collected = collection(CollectionKind.ANDROID, summary=summary, raw={"cpuinfo": path},
                           source=s.source("shell dumpsys cpuinfo"))
    return collected, "\n".join(lines)


# --------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------

_APP_FIELDS = (
    ("total_pss", "PSS total"), ("total_rss", "RSS total"), ("java_heap_pss", "Java heap (PSS)"),
    ("native_heap_pss", "native heap (PSS)"), ("graphics_pss", "graphics (PSS)"), ("code_pss", "code (PSS)"),
    ("native_heap_heap_alloc", "native heap allocated"), ("dalvik_heap_heap_alloc", "Java heap allocated"),
)


def _mb(kb: float) -> str:
    return f"{kb / 1024:.1f} MB"


def collect_memory(s: Session, package: str | None) -> tuple[dict[str, Any], str]:
    args = ["dumpsys", "meminfo"]
    if package:
        package = check_package(package)
        args.append(package)
    res = s.adb.shell(args)
    if package and "No process found for" in res.stdout:
        raise ToolFailure(
            ErrorKind.VALIDATION,
            f"{package} is not running on {s.serial} (`{res.command}` printed \u201cNo process found\u201d): "
            "open the app, then ask again",
        )
    path = _save(s, "meminfo.txt", _meta(s, res.command, package), res.stdout)
    try:
        pd = meminfo.parse(path)
    except PerfDataError as e:
        raise ToolFailure(ErrorKind.VALIDATION, f"`{res.command}` output did not parse: {e.problem}") from None
    st = pd.stats
    summary: dict[str, Any] = {"task": "memory", "device": s.info.describe(), "unit": "kB"}
    if package:
        summary["package"] = package
        summary.update({k: st[k] for k, _ in _APP_FIELDS if k in st})
        shown = [f"{label} {_mb(st[k])}" for k, label in _APP_FIELDS if k in st]
        text = f"Memory of {package} (pid {pd.facts.pid if pd.facts.pid is not None else '?'}) on {s.info.describe()}: " + ", ".join(shown)
    else:
        summary.update({k: v for k, v in st.items() if k.endswith("_ram")})
        procs = [(k.split(":", 1)[1], v) for k, v in st.items() if k.startswith("process_pss:")]
        summary["top_processes"] = [{"name": n, "pss_kb": v} for n, v in procs[:5]]
        shown = [f"{k.replace('_ram', '').capitalize()} RAM {_mb(st[k])}" for k in ("total_ram", "used_ram", "free_ram", "lost_ram") if k in st]
        text = f"Memory on {s.info.describe()}: " + ", ".join(shown)
        if procs:
            text += "\nlargest (PSS): " + ", ".join(f"{n} {_mb(v)}" for n, v in procs[:5])
    collected = collection(CollectionKind.ANDROID, summary=summary, raw={"meminfo": path},
                           source=s.source("shell " + " ".join(args)))
    return collected, text


# --------------------------------------------------------------------------------------
# Battery
# --------------------------------------------------------------------------------------

_BATTERY_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z ]*):\s*(.+?)\s*$")
_STATUS = {"1": "unknown", "2": "charging", "3": "discharging", "4": "not charging", "5": "full"}


def parse_battery(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _BATTERY_LINE.match(line)
        if m:
            out.setdefault(m.group(1).strip().lower(), m.group(2))
    return out


def collect_battery(s: Session) -> tuple[dict[str, Any], str]:
    res = s.adb.shell(["dumpsys", "battery"])
    b = parse_battery(res.stdout)
    if "level" not in b or not b["level"].isdigit():
        raise ToolFailure(ErrorKind.VALIDATION, f"`{res.command}` output did not parse: no level line")
    path = _save(s, "battery.txt", _meta(s, res.command, None), res.stdout)
    summary: dict[str, Any] = {"task": "battery", "device": s.info.describe(), "level_pct": int(b["level"])}
    parts = [f"level {b['level']}%"]
    if b.get("status") in _STATUS:
        summary["status"] = _STATUS[b["status"]]
        parts.append(summary["status"])
    if b.get("temperature", "").lstrip("-").isdigit():
        summary["temperature_c"] = int(b["temperature"]) / 10
        parts.append(f"{summary['temperature_c']:g} \u00b0C")
    if b.get("voltage", "").isdigit():
        summary["voltage_mv"] = int(b["voltage"])
        parts.append(f"{summary['voltage_mv']} mV")
    collected = collection(CollectionKind.ANDROID, summary=summary, raw={"battery": path},
                           source=s.source("shell dumpsys battery"))
    return collected, f"Battery of {s.info.describe()}: " + ", ".join(parts)
