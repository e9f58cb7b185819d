"""``compare`` (what changed from A to B, and whether it is real) and ``check`` (runs against
performance budgets): the two questions of a build, as ``perfscout compare`` / ``check`` answer
them (app/compare_cmd.py, app/check_cmd.py, docs/compare.md).

A side (``a``, ``b``, ``run``, ``baseline``) names what the CLI's does — a capture, a report
folder, an analysis JSON, a folder or glob of runs, or a thread (its newest report) — with the
server's rule on top: every file it reads lies inside the workspace (or is one of the server's
own reports). A path or pattern that leads out is refused before anything is read; a folder or
glob whose files lead out (a symlink) is refused once it is planned, before any file is analysed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from app.mcp.errors import fail
from app.mcp.results import written_paths
from app.mcp.tools import READ_ONLY, WRITES, respond, tool
from app.mcp.workspace import Workspace, check_thread

_MAGIC = "*?["
#: Verdicts in the order results list them: what got worse first (the size bound keeps first items).
_ORDER = {"worse": 0, "better": 1}
#: Check results in the order listed: failures first.
_STATUS_ORDER = {"fail": 0, "missing": 1, "pass": 2}


def side_spec(ws: Workspace, spec: str) -> str:
    """``spec`` as :func:`nodes.compare.sides.load_side` takes it, held to the workspace: a path
    or pattern made absolute inside it, a thread name as its newest report (never looked up in
    the server's own working folder)."""
    from nodes.compare.sides import thread_report

    own = ws.own_output(spec)
    if own is not None:
        return str(own)
    root = ws.root
    if any(ch in spec for ch in _MAGIC):
        parts = Path(spec).parts
        if ".." in parts:
            raise fail(f"{spec}: a pattern with '..' is refused (patterns stay inside the workspace {root})")
        literal = []
        for part in parts:
            if any(ch in part for ch in _MAGIC):
                break
            literal.append(part)
        ws.inside(str(Path(*literal)) if literal else ".")  # its fixed part lies inside
        return str(Path(spec) if Path(spec).is_absolute() else root / spec)
    if ws.names_path(spec):
        real = ws.inside(spec)
        if not real.exists():
            raise fail(f"{spec}: no such file or folder in the workspace {root}")
        return str(real)
    check_thread(spec)
    report = thread_report(spec, str(ws.settings().runs_dir))
    if report is None:
        raise fail(f"{spec}: no such file or folder in the workspace {root}, and no report of a thread {spec!r}")
    return str(report)


def load(ws: Workspace, spec: str) -> Any:
    """The side ``spec`` names, every file it reads checked; labelled as the agent named it."""
    from nodes.compare.sides import SideError, load_side

    resolved = side_spec(ws, spec)
    try:
        side = load_side(resolved, runs_dir=str(ws.settings().runs_dir), confine=ws.readable)
    except SideError as e:
        raise fail(str(e).replace(resolved, spec)) from None  # named as the agent named it
    side.spec = spec
    return side


def _row(r: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return {k: v for k, v in asdict(r).items() if v is not None}


def compare_payload(ws: Workspace, a: str, b: str) -> dict[str, Any]:
    """Compare A with B, write compare.md / .html / .json (like ``perfscout compare``), and shape
    the result: the headline, the rows (worse first, then better, then the rest), hot spots."""
    from nodes.compare.diff import MismatchError, compare_sides
    from nodes.compare.render import headline, write_comparison
    from nodes.report.output import report_dir

    side_a, side_b = load(ws, a), load(ws, b)
    try:
        cmp = compare_sides(side_a, side_b)
    except MismatchError as e:
        raise fail(str(e)) from None
    written = write_comparison(cmp, report_dir(None, str(ws.settings().runs_dir), "compare"))
    doc = cmp.to_dict()
    rank = lambda r: _ORDER.get(r.verdict, 2)  # noqa: E731
    return {
        "tool": "compare",
        "headline": headline(cmp),
        "a": doc["a"],
        "b": doc["b"],
        "summary": doc["summary"],
        "rows": [_row(r) for r in sorted(cmp.rows, key=rank)],
        "hotspots": [_row(r) for r in sorted(cmp.hotspots, key=rank)],
        "warnings": doc["warnings"],
        "report_paths": written_paths(written),
    }


def _budgets(ws: Workspace, budgets: str | None) -> Any:
    """The budgets: the file named (inside the workspace), else perfscout.toml / pyproject.toml
    at the workspace's root, as ``perfscout check`` finds them in its working folder."""
    from nodes.compare.budgets import BudgetError, load_budgets

    if budgets is not None:
        path = str(ws.file(budgets))
    else:
        path = None
        for name in ("perfscout.toml", "pyproject.toml"):
            if (ws.root / name).exists() or (ws.root / name).is_symlink():
                ws.inside(name)
    try:
        return load_budgets(path, str(ws.root))
    except BudgetError as e:
        if path is None and str(e).startswith("no budgets"):
            raise fail(
                "no budgets: pass budgets (a TOML file in the workspace with a [budgets] table), or write "
                f"[budgets] in perfscout.toml or [tool.perfscout.budgets] in pyproject.toml at the workspace root {ws.root}"
            ) from None
        raise fail(str(e)) from None


def check_payload(ws: Workspace, run: str, budgets: str | None, baseline: str | None, allow_missing: bool) -> dict[str, Any]:
    """Every budget on every run of ``run`` (and ``regression.max_pct`` against ``baseline``), as
    ``perfscout check --json`` reports them; failures first."""
    from app.check_cmd import CheckError, evaluate
    from nodes.compare.budgets import failed

    table = _budgets(ws, budgets)
    if table.regression_max_pct is not None and baseline is None:
        raise fail(f"{table.source}: regression.max_pct needs a baseline (the baseline argument)")
    side = load(ws, run)
    base = load(ws, baseline) if baseline is not None else None
    try:
        results = evaluate(side, table, base, allow_missing)
    except CheckError as e:
        raise fail(str(e)) from None
    counts = {s: sum(1 for r in results if r.status == s) for s in ("pass", "fail", "missing")}
    n_bad = counts["fail"] + (0 if allow_missing else counts["missing"])
    summary = f"{len(results) - n_bad} of {len(results)} budgets hold ({table.source})" + (f"; {n_bad} failed" if n_bad else "")
    return {
        "tool": "check",
        "passed": not failed(results, allow_missing),
        "summary": summary,
        "budgets": table.source,
        "run": run,
        "baseline": baseline,
        "counts": counts,
        "results": [r.to_dict() for r in sorted(results, key=lambda r: _STATUS_ORDER.get(r.status, 3))],
    }


#: What a side may name (the tools' argument descriptions; module-level: the SDK evaluates the
#: annotations in this module's namespace).
SIDE = "a capture, report folder, analysis JSON, folder or glob of runs inside the workspace, or a thread id"


def register(server: Any, ws: Workspace) -> None:
    @tool(server, WRITES)
    async def compare(
        ctx: Context,
        a: Annotated[str, Field(description=f"Before: {SIDE}", min_length=1, max_length=4_000)],
        b: Annotated[str, Field(description=f"After: {SIDE}", min_length=1, max_length=4_000)],
    ) -> CallToolResult:
        """What changed from A (before) to B (after): every metric both sides have, better/worse with
        a bootstrap interval and a Mann–Whitney test when a side has several runs, hot spots that
        grew, shrank, appeared or went; writes compare.md/.html/.json and returns their paths."""
        return await respond(lambda: compare_payload(ws, a, b), ctx, before=f"compare: reading {a} and {b}",
                             after="compare: report written")

    @tool(server, READ_ONLY)
    async def check(
        ctx: Context,
        run: Annotated[str, Field(description=f"What to check: {SIDE}", min_length=1, max_length=4_000)],
        budgets: Annotated[
            str | None,
            Field(description="A TOML file in the workspace with [budgets] (default: perfscout.toml or pyproject.toml at its root)"),
        ] = None,
        baseline: Annotated[str | None, Field(description=f"Runs to compare with, for regression.max_pct: {SIDE}")] = None,
        allow_missing: Annotated[bool, Field(description="A metric the data lacks does not fail")] = False,
    ) -> CallToolResult:
        """Check runs against performance budgets (a [budgets] TOML table: upper/lower bounds per
        metric, regression.max_pct against a baseline): passed, and every budget's status, value
        and bound, failures first. Writes nothing."""
        return await respond(lambda: check_payload(ws, run, budgets, baseline, allow_missing), ctx,
                             before=f"check: reading {run}")
