"""One view of a finished analysis that every output format renders.

The Markdown page, the HTML page and the JSON export all read this object, so they show the
same verdict, the same ranking and the same provenance. Nothing here calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

from pydantic import ValidationError

from nodes.perf.model import AnalysisResult, Finding, Hotspot
from nodes.report import fmt
from nodes.report.fmt import Provenance

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2, "info": 3}

#: Verdict headline for the worst severity found.
VERDICTS = {
    "high": "Needs attention",
    "medium": "Worth a look",
    "low": "Mostly fine",
    "info": "No problems found",
    None: "No problems found",
}


class ReportInputError(ValueError):
    """The state or file handed to the reporter is not an analysis it can render (one line)."""


@dataclass
class ReportView:
    analysis: AnalysisResult
    prov: Provenance
    attribution: list[dict[str, Any]] = field(default_factory=list)
    collected: dict[str, Any] = field(default_factory=dict)
    route: str | None = None
    route_info: dict[str, Any] = field(default_factory=dict)
    question: str = ""
    generated_at: str = ""
    #: A model-written narrative, when a model is configured; None otherwise.
    narrative: str | None = None
    #: Numbers in the narrative that appear nowhere in the computed facts.
    narrative_unverified: list[str] = field(default_factory=list)
    narrative_note: str | None = None
    #: Export file names written next to the report (filled by the writer).
    exports: dict[str, str] = field(default_factory=dict)

    # --- derived --------------------------------------------------------------------------
    @property
    def worst_severity(self) -> str | None:
        sev = [f.severity for f in self.analysis.findings]
        return min(sev, key=lambda s: SEVERITY_ORDER.get(s, 9)) if sev else None

    @property
    def verdict(self) -> str:
        return VERDICTS.get(self.worst_severity, VERDICTS[None])

    def ranked_findings(self) -> list[Finding]:
        """Findings by severity, then by the size of their main metric (stable otherwise)."""
        def key(item: tuple[int, Finding]) -> tuple[int, float, int]:
            i, f = item
            size = 0.0
            for v in f.metric.values():
                if isinstance(v, (int, float)):
                    size = max(size, float(v))
            return (SEVERITY_ORDER.get(f.severity, 9), -size, i)

        return [f for _, f in sorted(enumerate(self.analysis.findings), key=key)]

    def attribution_for(self, h: Hotspot) -> dict[str, Any] | None:
        best = None
        for a in self.attribution:
            if a.get("name") != h.name:
                continue
            if h.file and a.get("file") and str(a["file"]).endswith(str(h.file).lstrip("./")):
                return a
            best = best or a
        return best

    def collection_summary(self) -> list[tuple[str, str]]:
        """The collector's own scalar summary (peak RSS, CPU, notes), as printable pairs."""
        out = []
        for k, x in (self.collected.get("summary") or {}).items():
            if isinstance(x, bool) or x is None:
                continue
            if isinstance(x, (int, float)):
                out.append((str(k), fmt.metric(x)))
            elif isinstance(x, str):
                out.append((str(k), x))
            elif isinstance(x, list) and all(isinstance(i, str) for i in x) and x:
                out.append((str(k), "; ".join(x[:5])))
        return out[:20]

    def summary_sentences(self) -> list[str]:
        """The verdict in two or three sentences, each with its key numbers."""
        a = self.analysis
        out: list[str] = []
        what = f"{a.format} data from {a.source}"
        if a.duration_ms:
            what += f" covering {fmt.ms(a.duration_ms)}"
        ranked = self.ranked_findings()
        if ranked and ranked[0].severity in ("high", "medium"):
            n_serious = sum(1 for f in ranked if f.severity in ("high", "medium"))
            out.append(
                f"{self.verdict}: {n_serious} serious finding{'s' if n_serious != 1 else ''} in {what}; "
                f"first: {ranked[0].title}."
            )
        else:
            out.append(f"{self.verdict} in {what}.")
        facts: list[str] = []
        fr = a.frames
        if fr and fr.count:
            s = f"{fr.count:,} frames"
            if fr.fps:
                s += f" at {fr.fps:.1f} FPS"
            if fr.jank_ratio is not None:
                s += f", {fmt.ratio_pct(fr.jank_ratio)} over the {fmt.ms(fr.budget_ms)} budget"
            if fr.p90_ms is not None:
                s += f" (p90 {fmt.ms(fr.p90_ms)})"
            facts.append(s)
        st = a.startup
        if st and (st.median_ms is not None or st.runs):
            if st.median_ms is not None:
                s = f"launch median {fmt.ms(st.median_ms)} over {len(st.runs) or 1} run{'s' if len(st.runs) != 1 else ''}"
                if st.spread_ms is not None and len(st.runs) > 1:
                    s += f" (spread {fmt.ms(st.spread_ms)})"
                facts.append(s)
        if a.hotspots:
            h = max(a.hotspots, key=lambda h: h.self_pct)
            facts.append(f"the top hot spot {h.name} holds {fmt.pct(h.self_pct)} of self time ({fmt.ms(h.self_ms)})")
        if a.long_tasks:
            worst = max(a.long_tasks, key=lambda t: t.dur_ms)
            facts.append(f"{len(a.long_tasks)} long task{'s' if len(a.long_tasks) != 1 else ''} (longest {fmt.ms(worst.dur_ms)} on {worst.thread})")
        if facts:
            out.append("Key numbers: " + "; ".join(facts[:3]) + ".")
        if a.partial or a.warnings:
            out.append(
                "Some input was skipped or incomplete"
                + (f" ({len(a.warnings)} warning{'s' if len(a.warnings) != 1 else ''})" if a.warnings else "")
                + ": see Warnings."
            )
        return out[:3]

    def facts(self) -> dict[str, Any]:
        """The computed findings a narrative may be written from (small, JSON-able)."""
        a = self.analysis
        d: dict[str, Any] = {
            "source": a.source,
            "format": a.format,
            "duration_ms": round(a.duration_ms, 1),
            "verdict": self.verdict,
            "findings": [
                {"severity": f.severity, "title": f.title, "detail": f.detail, "metric": f.metric}
                for f in self.ranked_findings()[:8]
            ],
            "hotspots": [
                {"name": h.name, "self_ms": round(h.self_ms, 2), "self_pct": round(h.self_pct, 1), "file": h.file, "line": h.line}
                for h in a.hotspots[:8]
            ],
        }
        if a.frames:
            d["frames"] = a.frames.model_dump(include={"count", "fps", "jank_ratio", "budget_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms"})
        if a.startup:
            d["startup"] = a.startup.model_dump(include={"median_ms", "min_ms", "max_ms", "spread_ms", "first_ms", "kind"})
        if a.long_tasks:
            d["long_tasks"] = [t.model_dump() for t in a.long_tasks[:8]]
        return d


def _coerce_analysis(raw: Any) -> AnalysisResult:
    if isinstance(raw, AnalysisResult):
        return raw
    if not isinstance(raw, Mapping):
        raise ReportInputError(f"analysis is {type(raw).__name__}, not an analysis result object")
    try:
        return AnalysisResult.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
        raise ReportInputError(f"analysis is not a valid result: {loc}: {first.get('msg')}") from None


def build_view(
    analysis: Any,
    *,
    attribution: list[dict[str, Any]] | None = None,
    collected: Mapping[str, Any] | None = None,
    route: str | None = None,
    route_info: Mapping[str, Any] | None = None,
    question: str = "",
    now: datetime | None = None,
) -> ReportView:
    """Validate the inputs and assemble the view (raises ReportInputError on bad input)."""
    a = _coerce_analysis(analysis)
    attr = [x for x in (attribution or []) if isinstance(x, Mapping)]
    now = now or datetime.now(timezone.utc)
    return ReportView(
        analysis=a,
        prov=Provenance(a, collected),
        attribution=[dict(x) for x in attr],
        collected=dict(collected or {}),
        route=route,
        route_info=dict(route_info or {}),
        question=question or "",
        generated_at=now.strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
