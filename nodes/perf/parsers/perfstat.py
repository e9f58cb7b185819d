"""Linux ``perf stat`` text output (what it prints on stderr, or ``-o file``).

Counter lines (``value [unit] event  # derived-metric``), ``<not counted>`` /
``<not supported>``, multiplexing shares ``(50.01%)``, ``-r`` variance ``( +- 0.5% )``,
topdown metrics (``topdown-*`` events and the newer ``# 24.6 %  tma_backend_bound`` lines),
and the ``seconds time elapsed / user / sys`` lines. Several runs (several "Performance
counter stats for" blocks, e.g. joined by ``---``) are kept apart: ``stats`` holds
``<name> [run N]`` for each, and the plain ``<name>`` is their mean when every run measured
the same command.

The header names what was measured: a command (``for 'python app.py' (5 runs):``), a process
perf attached to (``for process id '7708':``, ``-p``), threads (``thread id``, ``-t``), or the
whole system / some CPUs (``'system wide'``, ``'CPU(s) 0-3'``). They land in ``meta`` as
``command`` / ``pid`` / ``tid`` / ``target`` (``run N …`` when there are several runs), and
``repeats`` for ``-r N`` — so an attached pid is never mistaken for a command line.
"""

from __future__ import annotations

import re
from statistics import fmean

from nodes.perf.errors import PerfDataError
from nodes.perf.formats import looks_text, open_text
from nodes.perf.model import PerfData, PerfStatTarget

FORMAT = "perfstat"

_HEADER = re.compile(r"Performance counter stats for (?P<what>.*?):?\s*$")
_COUNTER = re.compile(
    r"^\s*(?P<value>[\d][\d,.]*|<not counted>|<not supported>)\s+"
    r"(?:(?P<unit>msec|ms|usec|ns|seconds|Joules|MiB|W)\s+)?"
    r"(?P<event>[A-Za-z_][\w\-/:.=,@]*)"
    r"(?:\s+#\s*(?P<comment>[^(]*?))?"
    r"\s*(?:\(\s*\+-\s*(?P<var>[\d.]+)%\s*\))?"
    r"\s*(?:\((?P<mux>[\d.]+)%\))?\s*$",
    re.ASCII,
)
_METRIC_ONLY = re.compile(r"^\s*#\s*(?P<value>[\d.]+)\s*(?P<pct>%)?\s*(?P<name>[A-Za-z_][\w\-. /]*?)\s*(?:\(.*\))?\s*$", re.ASCII)
_TIME = re.compile(r"^\s*(?P<value>[\d,.]+)\s+(?:\+-\s*[\d.]+\s+)?seconds\s+(?P<what>time elapsed|user|sys)", re.ASCII)
_DERIVED = re.compile(r"^(?P<value>[\d][\d,.]*)\s*(?P<pct>%)?\s*(?P<name>.*?)\s*$", re.ASCII)
_RATE_UNITS = {"/sec", "K/sec", "M/sec", "G/sec", "GHz", "MHz"}
#: What follows "Performance counter stats for": ``process id '1,2'``, ``thread id '3'``,
#: ``'cmd args' (5 runs)``; quotes are optional in old versions.
_TARGET = re.compile(
    r"^(?:(?P<kind>process id|thread id)\s+)?"
    r"(?P<q>['\"]?)(?P<what>.*?)(?P=q)"
    r"(?:\s*\((?P<repeats>\d+)\s+runs?\))?$"
)
#: Targets perf prints in quotes that are not a command line (``-a``, ``-C``, ``-b``).
_SYSTEM = re.compile(r"^(?:system wide|CPU\(s\)\s.*|BPF program\(s\)\s.*)$")
_KIND_KEY = {"process id": "pid", "thread id": "tid"}


def sniff(head: bytes, name: str) -> bool:
    return looks_text(head) and b"Performance counter stats for" in head


def _num(s: str) -> float | None:
    s = s.strip()
    if "," in s and "." in s:
        s = s.replace(",", "")
    elif "," in s:
        # 1,234,567 (thousands) vs 0,52 (decimal comma in some locales)
        parts = s.split(",")
        s = s.replace(",", "") if all(len(p) == 3 for p in parts[1:]) else s.replace(",", ".")
    try:
        return float(s)
    except ValueError:
        return None


def target_of(header: str) -> tuple[str, str, int | None]:
    """(meta key, value, repeats) for the text after "Performance counter stats for".

    ``process id '7708'`` → ("pid", "7708", None); ``'python x.py' (5 runs)`` → ("command",
    "python x.py", 5); ``'system wide'`` → ("target", "system wide", None).
    """
    m = _TARGET.match(header.strip())
    if not m:
        return "target", header.strip(), None
    what = m.group("what").strip()
    repeats = int(m.group("repeats")) if m.group("repeats") else None
    kind = m.group("kind")
    if kind:
        return _KIND_KEY[kind], re.sub(r"\s+", "", what), repeats
    if _SYSTEM.match(what):
        return "target", what, repeats
    return "command", what, repeats


def parse(path: str) -> PerfData:
    runs: list[dict] = []
    cur: dict | None = None
    with open_text(path) as f:
        for line in f:
            m = _HEADER.search(line)
            if m:
                key, what, repeats = target_of(m.group("what"))
                cur = {"key": key, "what": what, "repeats": repeats, "stats": {}, "units": {}, "notes": []}
                runs.append(cur)
                continue
            if cur is None:
                continue
            _line(cur, line)
    runs = [r for r in runs if r["stats"]]
    if not runs:
        raise PerfDataError(path, "no perf stat counters found (expected 'Performance counter stats for …')")
    pd = PerfData(FORMAT, path)
    same = len({(r["key"], r["what"]) for r in runs}) == 1
    pd.facts.perf_stat = [PerfStatTarget(r["key"], r["what"][:300], r["repeats"] or None) for r in runs]
    for i, r in enumerate(runs, 1):
        for note in r["notes"]:
            pd.warn(f"run {i}: {note}" if len(runs) > 1 else note)
    if len(runs) == 1:
        for k, v in runs[0]["stats"].items():
            pd.add_stat(k, v, runs[0]["units"].get(k))
    else:
        for i, r in enumerate(runs, 1):
            for k, v in r["stats"].items():
                pd.add_stat(f"{k} [run {i}]", v, r["units"].get(k))
        if same:
            keys = set.intersection(*(set(r["stats"]) for r in runs))
            for k in sorted(keys):
                pd.add_stat(k, fmean(r["stats"][k] for r in runs), runs[0]["units"].get(k))
    elapsed = [r["stats"].get("elapsed") for r in runs]
    if all(e is not None for e in elapsed):
        pd.extend_bounds(0.0, max(elapsed) * 1e6)  # type: ignore[type-var]
    return pd


def _line(run: dict, line: str) -> None:
    stats, units = run["stats"], run["units"]
    t = _TIME.match(line)
    if t:
        v = _num(t.group("value"))
        if v is not None:
            key = {"time elapsed": "elapsed", "user": "user", "sys": "sys"}[t.group("what")]
            stats[key] = v
            units[key] = "s"
        return
    m = _COUNTER.match(line)
    if m:
        event = m.group("event")
        raw = m.group("value")
        if raw.startswith("<"):
            run["notes"].append(f"{event}: {raw}")
            return
        v = _num(raw)
        if v is None:
            return
        unit = m.group("unit")
        if unit == "msec":
            unit = "ms"
        stats[event] = v
        if unit:
            units[event] = unit
        if m.group("mux") and float(m.group("mux")) < 100.0:
            stats[f"{event} measured %"] = float(m.group("mux"))
            units[f"{event} measured %"] = "%"
        if m.group("var"):
            stats[f"{event} ±%"] = float(m.group("var"))
            units[f"{event} ±%"] = "%"
        comment = m.group("comment")
        if comment:
            _derived(stats, units, event, comment)
        return
    mo = _METRIC_ONLY.match(line)
    if mo:
        v = _num(mo.group("value"))
        if v is not None:
            name = mo.group("name").strip()
            key = f"{name} %" if mo.group("pct") else name
            stats[key] = v
            if mo.group("pct"):
                units[key] = "%"


def _derived(stats: dict, units: dict, event: str, comment: str) -> None:
    d = _DERIVED.match(comment.strip())
    if not d:
        return
    v = _num(d.group("value"))
    name = d.group("name").strip()
    if v is None or not name:
        return
    if d.group("pct"):
        key = f"{name} %"
        if name.startswith("of all "):
            key = f"{event} %"  # 0.15% of all branches → branch-misses %
        stats[key] = v
        units[key] = "%"
    elif name in _RATE_UNITS:
        stats[f"{event} {name}"] = v
        units[f"{event} {name}"] = name
    else:
        stats[name] = v  # "insn per cycle", "CPUs utilized", "frontend cycles idle", …
