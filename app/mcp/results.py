"""Shaping results: every tool returns a bounded structured result (app/mcp/bound.py), the same
JSON as its text content; lists are sorted worst-first and only their first items are kept."""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent

from app.mcp.bound import MAX_RESULT_CHARS, bound
from app.mcp.options import ServerOptions

#: Items of each list kept before the size bound applies (results are sorted, first = worst).
TOP_FINDINGS, TOP_HOTSPOTS = 12, 15
#: The field of the graph's question that asks to confirm a proposed command
#: (nodes/run_stages/local_run.py); the key of that question in ``input_requests`` too.
CONFIRM_KEY = "confirm_run"


def result(payload: dict[str, Any]) -> CallToolResult:
    """The bounded structured result, with the same JSON as its text content."""
    body = bound(payload, MAX_RESULT_CHARS)
    text = json.dumps(body, ensure_ascii=False, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=body)


def written_paths(written: dict[str, Any]) -> dict[str, str]:
    """The files a report writer returned (``{"markdown": path, …}``), its other entries dropped."""
    return {k: v for k, v in written.items() if isinstance(v, str)}


def finding(f: dict[str, Any]) -> dict[str, Any]:
    out = {k: f.get(k) for k in ("title", "severity", "detail") if f.get(k) is not None}
    ev = {k: v for k, v in (f.get("evidence") or {}).items() if v not in (None, [], "")}
    if ev:
        out["evidence"] = ev
    if f.get("metric"):
        out["metric"] = f["metric"]
    for k in ("suggestion", "suggestions", "fix"):
        if f.get(k):
            out[k] = f[k]
    return out


def hotspot(h: dict[str, Any]) -> dict[str, Any]:
    return {k: h.get(k) for k in ("name", "file", "line", "self_ms", "total_ms", "self_pct", "thread", "kind") if h.get(k) is not None}


#: The sections each lens returns (graph.enums.Lens; the old focus values are trimmed to these).
LENS_SECTIONS = {"overview": {"startup", "frames", "hotspots", "web"}, "startup": {"startup"}, "frames": {"frames"},
                 "scroll": {"frames"}, "cpu": {"hotspots"}, "page": {"web"}, "memory": set(), "power": set(),
                 "blocking": set()}


def sections(data: dict[str, Any], lens: str) -> dict[str, Any]:
    """The sections ``lens`` asks for; a section the data cannot give says so (never estimated)."""
    out: dict[str, Any] = {}
    want = LENS_SECTIONS.get(lens, LENS_SECTIONS["overview"])
    if "startup" in want:
        out["startup"] = data.get("startup") or {"missing": "no app launch in this data (a startup trace or `perfscout ask` on a script measures one)"}
    if "frames" in want:
        frames = data.get("frames")
        out["frames"] = frames or {"missing": "no frames in this data (needs a trace with frame timeline or a Chrome trace of a page)"}
        if data.get("long_tasks"):
            out["long_tasks"] = data["long_tasks"][:10]
    if "hotspots" in want:
        hs = [hotspot(h) for h in (data.get("hotspots") or []) if h.get("thread") is None and h.get("process") is None][:TOP_HOTSPOTS]
        out["hotspots"] = hs or {"missing": "no hot spots: the data has no slices or samples with durations"}
        if data.get("threads"):
            out["threads"] = data["threads"][:10]
    if "web" in want:
        web = {k: data[k] for k in ("web", "web_vitals", "vitals") if data.get(k)}
        out["web"] = web or {"missing": "no web vitals in this data (they come from a Chrome trace of a page load)"}
    return out


def turn_status(ps: Any, r: Any) -> str:
    """The turn's status; ``incomplete`` when it stopped before a node (cancelled, crashed)."""
    if r.status in ("done", "skipped"):
        try:
            snap = ps.graph.get_state(ps.config(r.thread_id))
        except Exception:
            return r.status
        if snap.next:
            return "incomplete"
    return r.status


def _last_error(ps: Any, thread: str) -> dict[str, Any]:
    try:
        values = ps.graph.get_state(ps.config(thread)).values or {}
    except Exception:
        return {}
    err = values.get("last_error")
    return dict(err) if isinstance(err, dict) else {}


def turn_payload(tool: str, ps: Any, r: Any, opts: ServerOptions) -> dict[str, Any]:
    """An AskResult as the structured result of ask / resume / continue."""
    status = turn_status(ps, r)
    out: dict[str, Any] = {"tool": tool, "status": status, "thread_id": r.thread_id, "route": r.route}
    info = {k: r.route_info.get(k) for k in ("tier", "confidence", "reason") if r.route_info.get(k) is not None}
    if info:
        out["route_info"] = info
    if r.answer:
        out["answer"] = r.answer
    if r.question:
        q = {k: v for k, v in r.question.items() if k in ("field", "prompt", "choices", "argv", "outside_workspace", "for_node")}
        if q.get("field") == CONFIRM_KEY:
            q["how_to_answer"] = (
                "only a person can confirm this command: the server asks them through the client "
                f"(MCP elicitation); call continue({r.thread_id!r}) to ask again"
            )
        else:
            q["how_to_answer"] = f"call resume({r.thread_id!r}, ANSWER)"
        out["question"] = q
    if r.findings:
        out["findings"] = [finding(f) for f in r.findings[:TOP_FINDINGS]]
    if r.hotspots:
        out["hotspots"] = [hotspot(h) for h in r.hotspots[:TOP_HOTSPOTS]]
    if r.attribution:
        out["attribution"] = r.attribution[:TOP_HOTSPOTS]
    for key in ("skipped", "diagnosis", "exploration"):
        value = getattr(r, key, None)
        if value:
            out[key] = value
    if r.report_paths:
        out["report_paths"] = r.report_paths
        out["report_resource"] = f"perfscout://report/{r.thread_id}"
    if status == "incomplete":
        out["next"] = f"the turn stopped before a node; call continue({r.thread_id!r}) to go on"
    out["permission"] = opts.describe()
    err = _last_error(ps, r.thread_id) if status == "failed" else {}
    if err.get("kind"):
        out["error_kind"] = err["kind"]  # typed (graph.enums.ErrorKind), unlike the message
    if err.get("kind") == "permission":
        # The graph's wording names the CLI's flags; say what works over MCP.
        out["how_to_allow"] = (
            "call again with allow_run=true" if opts.runs_anything
            else "this server runs no program: the person who configured it can restart it with --allow-run or --allow PROG"
        )
    return out
