"""Attribution accuracy: the share of hot spots resolved to the right file and line.

Run: ``.venv/bin/python -m benchmarks.attribution``

Profiles: the py-spy speedscope profiles stored in ``tests/data/attrib/profiles`` (a real
open-source library, sortedcontainers 2.4.0, and a small frame parser), plus fresh py-spy
profiles of ``examples/*.py`` when py-spy can run here. For each profile the top hot spots by
self time are attributed three ways:

* ``as recorded``: name, absolute file and line as py-spy wrote them;
* ``moved checkout``: the same with every path moved under another root, as when a profile
  comes from another machine — the attributor must map paths by suffix;
* ``name only``: only the qualified name (``SortedList.add``), as a trace without locations
  gives it — the attributor must find the definition; the right answer is the ``def`` line,
  found independently with ``ast``.

The baseline, measured in the same run, is the naive resolver: the profile's path taken
literally (exists in the workspace or not), and for names the first ``def <name>`` rg finds.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any

from nodes.code.attribute import Attributor
from nodes.code.rg import find_rg
from nodes.perf.model import AnalysisResult, Hotspot

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "attrib"
TOP = 15


def analysis_from_speedscope(path: str | os.PathLike[str], top: int = TOP) -> AnalysisResult:
    """An AnalysisResult whose hot spots are the leaf frames with the most self time.

    A minimal reading of py-spy's speedscope output (sampled profiles with shared frames),
    enough to feed the attributor with real names, files and lines.
    """
    doc = json.loads(Path(path).read_text())
    frames = doc["shared"]["frames"]
    self_w: dict[int, float] = defaultdict(float)
    total_w: dict[int, float] = defaultdict(float)
    count: dict[int, int] = defaultdict(int)
    grand = 0.0
    for prof in doc["profiles"]:
        weights = prof.get("weights") or [1.0] * len(prof["samples"])
        for stack, w in zip(prof["samples"], weights):
            if not stack:
                continue
            grand += w
            self_w[stack[-1]] += w
            count[stack[-1]] += 1
            for i in set(stack):
                total_w[i] += w
    unit = 1000.0 if doc["profiles"] and doc["profiles"][0].get("unit") == "seconds" else 1.0
    ranked = sorted(self_w, key=lambda i: -self_w[i])[:top]
    hotspots = [
        Hotspot(
            name=frames[i]["name"],
            file=frames[i].get("file"),
            line=frames[i].get("line"),
            self_ms=self_w[i] * unit,
            total_ms=total_w[i] * unit,
            self_pct=100.0 * self_w[i] / grand if grand else 0.0,
            total_pct=100.0 * total_w[i] / grand if grand else 0.0,
            count=count[i],
            kind="sample",
        )
        for i in ranked
    ]
    return AnalysisResult(format="speedscope", source=str(path), hotspots=hotspots)


def def_line(workspace: Path, rel: str, qualname: str) -> int | None:
    """The line of ``def`` for ``qualname`` (``Class.method`` or ``func``) in a Python file."""
    try:
        tree = ast.parse((workspace / rel).read_text("utf-8"))
    except (OSError, SyntaxError):
        return None
    want = qualname.split(".")

    def walk(node: ast.AST, prefix: list[str]) -> int | None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + [child.name]
                if q == want or (len(want) == 1 and child.name == want[0] and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))):
                    return child.lineno
                found = walk(child, q)
                if found:
                    return found
        return None

    return walk(tree, [])


def cases(workspace: Path, recorded_under: str, analysis: AnalysisResult) -> list[dict[str, Any]]:
    """Hot spots with their expected answer: a workspace file and line, or "system"."""
    out = []
    prefix = recorded_under.rstrip("/") + "/"
    for h in analysis.hotspots:
        if h.file and h.file.startswith(prefix) and not _looks_system(h.model_dump()):
            rel = h.file[len(prefix):]
            out.append({"hotspot": h.model_dump(), "file": rel, "line": h.line, "def": def_line(workspace, rel, h.name)})
        else:
            out.append({"hotspot": h.model_dump(), "system": True})
    return out


def naive(workspace: Path, h: dict[str, Any], rg: str) -> tuple[str | None, int | None]:
    """The baseline: the literal path if it exists, else the first ``def <name>`` rg finds."""
    f = h.get("file")
    if f and h.get("line"):
        p = Path(f)
        if p.is_absolute() and p.is_file() and workspace in p.resolve().parents:
            return p.resolve().relative_to(workspace).as_posix(), h["line"]
        if not p.is_absolute() and (workspace / p).is_file():
            return p.as_posix(), h["line"]
        return None, None
    bare = re.split(r"[.:]", h["name"])[-1]
    r = subprocess.run(
        [rg, "--no-config", "-n", "--sort=path", "-m1", "-e", rf"def\s+{re.escape(bare)}\b", "--", "."],
        cwd=workspace, capture_output=True, text=True,
    )
    first = r.stdout.splitlines()[0] if r.stdout else ""
    m = re.match(r"^(.*?):(\d+):", first)
    return (PurePosixPath(m.group(1)).as_posix().removeprefix("./"), int(m.group(2))) if m else (None, None)


def score_run(workspace: Path, items: list[dict[str, Any]], mode: str, rg: str) -> dict[str, Any]:
    att = Attributor(workspace)
    ours = base = n = 0
    t_ours = t_base = 0.0
    misses = []
    for c in items:
        h = dict(c["hotspot"])
        if mode == "name only":
            if c.get("system") or not c.get("def"):
                continue
            h["file"] = h["line"] = None
            want = (c["file"], c["def"])
        elif c.get("system"):
            want = ("system", None)
        else:
            want = (c["file"], c["line"])
            if mode == "moved checkout":
                h["file"] = "/elsewhere/checkout/" + c["file"]
        n += 1
        t0 = time.perf_counter()
        r = att.attribute(h)
        t_ours += time.perf_counter() - t0
        got = ("system", None) if r["status"] == "system" else (r["file"], r["line"])
        ours += got == want
        if got != want:
            misses.append(f"{h['name']}: want {want}, got {got} ({r['reason']})")
        t0 = time.perf_counter()
        b = ("system", None) if _looks_system(h) else naive(workspace, h, rg)
        t_base += time.perf_counter() - t0
        base += b == want
    return {"n": n, "ours": ours, "base": base, "t_ours": t_ours, "t_base": t_base, "misses": misses}


def _looks_system(h: dict[str, Any]) -> bool:
    """The baseline's one rule for library code: a path with site-packages or lib/python."""
    f = h.get("file") or ""
    return "site-packages" in f or "/lib/python" in f


def _record_examples(rg: str) -> list[tuple[str, Path, str, AnalysisResult]]:
    """Fresh py-spy profiles of examples/*.py (skipped, with a message, where py-spy cannot run)."""
    spy = Path(sys.executable).parent / "py-spy"
    examples = sorted((ROOT / "examples").glob("*.py"))
    if not spy.exists() or not examples:
        print("examples: none profiled (no py-spy next to the interpreter or no examples/*.py)")
        return []
    out = []
    tmp = Path(tempfile.mkdtemp(prefix="perfscout-attrib-"))
    try:
        for ex in examples:
            prof = tmp / f"{ex.stem}.json"
            try:
                subprocess.run(
                    [str(spy), "record", "-r", "200", "-d", "4", "-f", "speedscope", "-o", str(prof), "--", sys.executable, str(ex)],
                    cwd=ROOT, capture_output=True, timeout=30,
                )
            except subprocess.TimeoutExpired:
                continue
            if prof.exists():
                out.append((f"examples/{ex.name}", ROOT, str(ROOT), analysis_from_speedscope(prof)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main() -> int:
    rg = find_rg()
    runs: list[tuple[str, Path, str, AnalysisResult]] = []
    recorded_under = json.loads((FIXTURE / "profiles" / "RECORDED.json").read_text())["recorded_under"]
    for prof in sorted((FIXTURE / "profiles").glob("*.speedscope.json")):
        runs.append((f"fixture {prof.name}", FIXTURE, recorded_under, analysis_from_speedscope(prof)))
    runs += _record_examples(rg)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    print(f"{'profile':44} {'mode':15} {'hot spots':>9} {'ours':>6} {'naive':>6} {'ms/spot':>8}")
    for label, ws, under, analysis in runs:
        items = cases(ws, under, analysis)
        for mode in ("as recorded", "moved checkout", "name only"):
            s = score_run(ws, items, mode, rg)
            if not s["n"]:
                continue
            t = totals[mode]
            t[0] += s["n"]
            t[1] += s["ours"]
            t[2] += s["base"]
            print(
                f"{label:44} {mode:15} {s['n']:>9} {s['ours'] / s['n']:>6.0%} {s['base'] / s['n']:>6.0%} "
                f"{1000 * s['t_ours'] / s['n']:>8.1f}"
            )
            for m in s["misses"][:3]:
                print(f"    miss: {m}")
    print()
    for mode, (n, ours, base) in totals.items():
        ratio = f"{ours / base:.2f}x" if base else "∞ (naive resolved none)"
        print(f"overall {mode:15}: {ours}/{n} = {ours / n:.0%} right file:line (naive {base}/{n} = {base / n:.0%}; ratio {ratio})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
