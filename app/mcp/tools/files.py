"""``analyze`` (a trace or profile inside the workspace) and ``report`` (the Markdown report of
a thread, a report folder, or a file), and the report resource ``perfscout://report/THREAD``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Sequence

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from app.mcp.cancellation import in_thread
from app.mcp.errors import fail
from app.mcp.results import TOP_FINDINGS, finding, sections, written_paths
from app.mcp.tools import WRITES, respond, tool
from app.mcp.workspace import Workspace, check_thread

#: The lens of the question (graph.enums.Lens), and the names ``focus`` had before lenses
#: (web → page, all → overview, hotspots → cpu: graph.enums.LENS_ALIASES), still accepted.
Focus = Literal["overview", "startup", "frames", "scroll", "cpu", "memory", "power", "blocking", "page",
                "hotspots", "web", "all"]


def analysis_payload(ws: Workspace, real: Path, path: str, focus: str, named: Sequence[str] = ()) -> dict[str, Any]:
    """Analyse ``real`` (a file inside the workspace), write its report, and shape the result:
    the report's verdict sentences (answering the lens ``focus`` names), findings with evidence,
    the lens's own answer and the sections it returns; ``named``: slice names measured as
    power and CPU windows of their own (``perfscout analyze --section``)."""
    from graph.enums import lens_named
    from app.analyze_cmd import to_json
    from nodes.perf.analysis import analyze_paths, module_search_path
    from nodes.perf.errors import PerfDataError
    from nodes.report.output import report_dir
    from nodes.report.render import write_report
    from nodes.report.view import build_view

    settings = ws.settings()
    try:
        a = analyze_paths([str(real)], root=str(ws.root), search_path=module_search_path(str(ws.root)),
                          limits=settings.read_limits(), sections=named)
        collected = {"kind": "file", "paths": {"data": str(real)}, "source": str(real)}
        lens = lens_named(focus).value
        if named and lens == "overview":  # as perfscout analyze --section: the power answer leads
            lens = "power"
        view = build_view(a, collected=collected, route="analyze", question=f"analyze {path}", root=str(ws.root),
                          lens=lens)
        written = write_report(view, report_dir(None, str(settings.runs_dir), "mcp"))
    except PerfDataError as e:
        raise fail(str(e).splitlines()[0] if str(e) else f"{path}: unreadable data") from None
    data, summary, lens_answer = to_json(a), view.summary_sentences(), view.lens_section()
    payload: dict[str, Any] = {
        "tool": "analyze",
        "source": str(real.relative_to(ws.root)),
        "format": data.get("format"),
        "duration_ms": data.get("duration_ms"),
        "headline": summary[0] if summary else None,
        "summary": summary[1:],
        "findings": [finding(f) for f in (data.get("findings") or [])[:TOP_FINDINGS]],
    }
    payload["lens"] = lens
    if lens_answer is not None:
        payload["lens_answer"] = lens_answer
    payload.update(sections(data, lens))
    if data.get("warnings"):
        payload["warnings"] = data["warnings"][:10]
    payload["report_paths"] = written_paths(written)
    return payload


def newest_report(folder: Path) -> Path | None:
    found = list(folder.glob("*/report.md")) + list(folder.glob("*/*/report.md")) + list(folder.glob("report.md"))
    return max(found, key=lambda p: (p.stat().st_mtime, str(p))) if found else None


def _markdown(md: Path) -> tuple[str, dict[str, str]]:
    """A report's text and its path, as ``report`` returns them."""
    return md.read_text(encoding="utf-8", errors="replace"), {"markdown": str(md)}


def thread_report(thread: str, settings: Any) -> tuple[str, dict[str, str]]:
    """The newest Markdown report of ``thread`` in the runs folder."""
    from nodes.report.output import safe_component

    folder = Path(settings.runs_dir) / safe_component(thread)
    md = newest_report(folder) if folder.is_dir() else None
    if md is None:
        raise fail(f"no report of a thread {thread!r} (in {settings.runs_dir})")
    return _markdown(md)


def report_markdown(ws: Workspace, target: str) -> tuple[str, dict[str, str]]:
    """What ``report`` returns: a thread's newest report, a report folder's, or a new one of a file."""
    from app.report_cmd import run_report
    from nodes.perf.errors import PerfDataError
    from nodes.report.view import ReportInputError

    settings = ws.settings()
    if not ws.names_path(target):
        return thread_report(target, settings)
    real = ws.readable(target)
    if real.is_dir():
        md = real / "report.md" if (real / "report.md").is_file() else newest_report(real)
        if md is None:
            raise fail(f"{target}: a folder with no report.md in it")
        return _markdown(md)
    if not real.is_file():
        raise fail(f"{target}: no such file in the workspace {ws.root}")
    if real.name == "report.md":
        return _markdown(real)
    try:
        written = run_report(str(real), runs_dir=str(settings.runs_dir), limits=settings.read_limits())
    except (ReportInputError, PerfDataError) as e:
        raise fail(str(e).splitlines()[0]) from None
    return _markdown(Path(written["markdown"]))[0], written_paths(written)


def report_payload(ws: Workspace, target: str) -> dict[str, Any]:
    md, paths = report_markdown(ws, target)
    return {"tool": "report", "markdown": md, "paths": paths}


def register(server: Any, ws: Workspace) -> None:
    @tool(server, WRITES)
    async def analyze(
        ctx: Context,
        path: Annotated[str, Field(description="The file, relative to the workspace (or absolute inside it)", min_length=1)],
        focus: Annotated[Focus, Field(description="The lens of the question: the headline answers it and only its "
                                                  "sections are returned (old names: web, hotspots, all)")] = "all",
        sections: Annotated[list[str], Field(description="Slice names to measure as power and CPU windows of their "
                                                         "own, beside the whole trace and measureBlock")] = [],
    ) -> CallToolResult:
        """Analyse a trace or profile inside the workspace (Perfetto, Chrome Trace Event JSON,
        py-spy speedscope, cProfile, adb dumps): headline, findings with evidence, and the
        startup / frames / hot spots / web sections; writes a report and returns its paths."""
        real = ws.file(path)
        return await respond(lambda: analysis_payload(ws, real, path, focus, sections), ctx,
                             before=f"analyze: reading {real.name} ({real.stat().st_size} bytes)",
                             after="analyze: report written")

    @tool(server, WRITES)
    async def report(
        path_or_thread: Annotated[str, Field(description="A thread id, or a path inside the workspace", min_length=1)],
    ) -> CallToolResult:
        """The Markdown report of a thread (its newest), of a report folder, or of a trace or
        profile inside the workspace (rendered first)."""
        return await respond(lambda: report_payload(ws, path_or_thread))

    @server.resource(
        "perfscout://report/{thread}",
        name="report",
        title="PerfScout report",
        description="The newest Markdown report of a thread",
        mime_type="text/markdown",
    )
    async def report_resource(thread: str) -> str:
        check_thread(thread)
        md, _ = await in_thread(lambda: thread_report(thread, ws.settings()))
        return md
