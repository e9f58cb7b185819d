"""One view of a finished analysis that every output format renders.

The Markdown page, the HTML page and the JSON export all read this object, so they show the
same verdict, the same ranking and the same provenance. Nothing here calls a model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping

import msgspec

from graph.enums import AttributionStatus
from nodes.collect.run_limit import raise_limit_hint
from nodes.perf.units import SEVERITY_ORDER
from nodes.perf.model import FRAME_CAUSE_LABELS, AnalysisResult, Finding, FrameCause, Hotspot
from nodes.perf.result import error_location
from nodes.report import excerpt, fmt
from nodes.report.fmt import Provenance
from nodes.report.tables import HOTSPOT_ROWS, Cell, Code, Muted


#: Verdict headline for the worst severity found.
#: How PerfScout's own janky share was judged, by ``FrameStats.jank_source`` (nodes/perf/metrics/frames.py).
_JUDGED_BY = {
    "frame timeline": "their FrameTimeline jank type",
    "reported": "the jank flag of each frame's row",
    "over budget": "their duration against the frame budget",
}

VERDICTS = {
    "high": "Needs attention",
    "medium": "Worth a look",
    "low": "Mostly fine",
    "info": "No problems found",
    None: "No problems found",
}


class ReportInputError(ValueError):
    """The state or file handed to the reporter is not an analysis it can render (one line)."""


#: The report's sections, in the order both renderers write them. The data sections are built
#: once, as blocks, by nodes/report/content.py (``ReportView.section``) and only laid out by the
#: renderers; the text sections (``TEXT_SECTIONS``) have one writer in each renderer. A new data
#: section is one more id here and a function in content.py; ``ReportView.sections()`` may
#: reorder them for a report (tests/test_report_tables.py).
SECTIONS: tuple[str, ...] = ("summary", "lens", "narrative", "first", "hotspots", "stacks", "frames", "timeline", "startup",
                             "threads", "other_lenses", "counters", "stats", "sources")
#: The sections whose sentences each renderer writes itself (from this view's methods).
TEXT_SECTIONS: tuple[str, ...] = ("summary", "lens", "narrative", "other_lenses")

#: How a model's narrative is labelled (bold part, the rest), and the line under it that lists
#: the numbers it cites that the computed facts do not hold.
NARRATIVE_LABEL = ("Narrative written by a language model",
                   "from the computed findings below. It adds no measurement; where it disagrees with them, the "
                   "findings are right.")
NARRATIVE_UNVERIFIED = "Numbers not found in the computed findings: "


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
    #: The workspace: paths under it are shown relative to it.
    root: str = ""
    #: The aspect the question asks about (graph.enums.Lens value): the answer leads with it.
    lens: str = "overview"

    # --- the lens ---------------------------------------------------------------------------
    def lens_reading(self):
        """The lens's numbers or what the data lacks (nodes/perf/lens_readers.py); None for the
        overview, which keeps the data-led headline."""
        from nodes.perf.lenses import spec

        if not hasattr(self, "_reading"):
            # a startup question on data whose own lead is the launch (an app startup of a system
            # trace, a measured program launch) keeps that lead: it already answers, with more
            self._reading = (None if self.lens == "startup" and (self.app_startup is not None or self.is_startup)
                             else spec(self.lens).read(self.analysis))
        return self._reading

    @property
    def lensed(self) -> bool:
        """Whether the question asked about one aspect (any lens but ``overview``): then only that
        lens's findings make the verdict, and the others follow as "also"."""
        return bool(self.lens) and self.lens != "overview"

    def in_lens(self, f: Finding) -> bool:
        from nodes.perf.lenses import in_lens

        return in_lens(f.family, self.lens)

    def lens_section(self) -> dict[str, Any] | None:
        """The report's first section for a lens question: title, sentences, the recipe to record
        what is missing (copy-pasteable), what this data can say instead."""
        from nodes.perf.lenses import spec
        from nodes.perf.recipes import RECIPES

        r = self.lens_reading()
        if r is None:
            return None
        row = spec(self.lens)
        lines = [r.lead]
        if r.not_read:
            lines.append(f"Not read yet: {r.not_read}.")
        recipe = RECIPES[r.recipe] if r.recipe else None
        return {"lens": self.lens, "title": _LENS_TITLES.get(self.lens, self.lens), "lines": lines,
                "missing": r.missing, "partial": list(r.partial), "metrics": row.metrics, "needs": row.needs,
                "recipe": recipe.text() if recipe else None, "recipe_what": recipe.what if recipe else None,
                "numbers": r.numbers, "fine": r.fine}

    # --- derived --------------------------------------------------------------------------
    @property
    def worst_severity(self) -> str | None:
        """The worst severity of the findings the verdict is about: a lens question's own
        findings only (a finding outside the lens cannot make a fast page "need attention")."""
        fs = self.analysis.findings
        if self.lensed:
            fs = [f for f in fs if self.in_lens(f)]
        sev = [f.severity for f in fs]
        return min(sev, key=lambda s: SEVERITY_ORDER.get(s, 9)) if sev else None

    def sections(self) -> list[str]:
        """The ids of this report's sections, in order (``SECTIONS``)."""
        return list(SECTIONS)

    @property
    def verdict(self) -> str:
        return VERDICTS.get(self.worst_severity, VERDICTS[None])

    def ranked_findings(self) -> list[Finding]:
        """Findings by severity, then by the size of their main metric (stable otherwise) — after
        the findings of the family the data is about (a startup trace: the startup's), which
        lead whatever their severity (nodes/perf/findings/__init__.py, lead_family)."""
        from nodes.perf.findings import lead_family

        lensed = self.lens_reading() is not None
        lead = None if lensed else lead_family(self.analysis)

        def key(item: tuple[int, Finding]) -> tuple[bool, int, float, int]:
            i, f = item
            size = 0.0
            for v in f.metric.values():
                if isinstance(v, (int, float)):
                    size = max(size, float(v))
            outside = (not self.in_lens(f)) if lensed else (lead is not None and f.family != lead)
            return (outside, SEVERITY_ORDER.get(f.severity, 9), -size, i)

        return [f for _, f in sorted(enumerate(self.analysis.findings), key=key)]

    def findings_to_act_on(self) -> list[Finding]:
        """The "What to look at first" order: by severity, info last (nodes/perf/findings, to_act_on)."""
        from nodes.perf.findings import lead_family, to_act_on

        return to_act_on(list(self.analysis.findings), lead_family(self.analysis))

    def legend(self) -> list[str]:
        """How to read the findings: the severities, what the verdict counts as serious, and —
        when the data carries both — why the tool's own jank figure and PerfScout's differ."""
        out = [
            "Severity: high — users notice it (janky frames, a slow start, a dominant hot spot); "
            "medium — worth fixing, a smaller cost; low — minor; info — a measured fact or data the "
            "capture lacks, nothing to fix. The verdict counts high and medium findings as serious "
            "and names the most severe one to look at first: Needs attention (a high one), Worth a look "
            "(medium at worst), Mostly fine (low at worst), No problems found (facts only).",
        ]
        fs = self.analysis.frames
        reported = (fs.reported or {}) if fs is not None else {}
        if fs is not None and fs.count and any(k in reported for k in ("janky_pct", "janky_frames")):
            out.append(
                f"Two jank figures: \u201cthe tool reports\u201d is the capture tool's own count (gfxinfo: "
                f"all frames since its statistics were last reset, by its own rules — missed vsync, slow UI "
                f"thread, …); PerfScout's janky share is over the {fs.count:,} frames it has rows for, "
                f"judged by {_JUDGED_BY.get(fs.jank_source or '', _JUDGED_BY['over budget'])}. "
                "Different frames and different rules: the two can differ."
            )
        return out

    def untraced_sentence(self) -> str:
        """Task runners' self time, said as what it is (nodes/perf/containers.py), not ranked."""
        from nodes.perf.containers import UNTRACED_LABEL

        rows = self.analysis.untraced_in_tasks[:4]
        total = sum(h.self_ms for h in self.analysis.untraced_in_tasks)
        return (f"{UNTRACED_LABEL[0].upper()}{UNTRACED_LABEL[1:]}: {fmt.dur(total)} — the self time of task runners, "
                "which no traced slice inside them covers (not a function): "
                + ", ".join(f"{h.name} {fmt.dur(h.self_ms)}" for h in rows) + ".")

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
            if isinstance(x, int) and (k == "pid" or str(k).endswith(("_pid", "exit_code"))):
                out.append((str(k), str(x)))  # an id, not a quantity: no thousands separator
            elif isinstance(x, (int, float)):
                out.append((str(k), fmt.metric(x)))
            elif isinstance(x, str):
                out.append((str(k), x))
            elif isinstance(x, list) and all(isinstance(i, str) for i in x) and x:
                out.append((str(k), "; ".join(x[:5])))
        return out[:20]

    # --- the verdict ----------------------------------------------------------------------
    @property
    def title(self) -> str:
        """The report's title: ``PerfScout report — <what was measured>``."""
        return f"PerfScout report — {self.subject}"

    @property
    def subject(self) -> str:
        """What was measured, short: the script or command that ran, else the data file(s).

        The full paths and the command line stay in the Sources section; this is for the
        title and the first sentence.
        """
        summary = self.collected.get("summary") or {}
        kind = self.collected.get("kind")
        if kind in ("profile", "startup"):
            script = summary.get("script")
            if isinstance(script, str) and script:
                return _relative(script, self.root)
            cmd = summary.get("command") or self.collected.get("source")
            if isinstance(cmd, str) and cmd.strip():
                return _short_command(cmd)
        if kind == "android" and isinstance(summary.get("package"), str) and summary["package"]:
            return str(summary["package"])
        names = [os.path.basename(p.strip()) or p.strip() for p in self.analysis.source.split(", ") if p.strip()]
        if not names:
            return "the data"
        return ", ".join(names) if len(names) <= 2 else f"{names[0]} and {len(names) - 1} more files"

    @property
    def ran_program(self) -> bool:
        return self.collected.get("kind") in ("profile", "startup") and bool((self.collected.get("summary") or {}).get("command"))

    @property
    def wall_ms(self) -> float | None:
        """The collector's own clock for the whole run (launch to exit), when a program ran.

        It is longer than the data: the profiler attaches after the launch and the series
        samples on a period, so it is labelled "wall time" wherever it is shown.
        """
        wall = (self.collected.get("summary") or {}).get("wall_s")
        if self.ran_program and isinstance(wall, (int, float)) and not isinstance(wall, bool) and wall > 0:
            return 1000.0 * float(wall)
        return None

    @property
    def stopped_at_limit_s(self) -> float | None:
        """The run limit (seconds) when the program was stopped there rather than exiting."""
        limit = (self.collected.get("summary") or {}).get("stopped_at_limit_s")
        if self.ran_program and isinstance(limit, (int, float)) and not isinstance(limit, bool):
            return float(limit)
        return None

    def hotspot_base(self) -> tuple[float, str] | None:
        """The time the top hot spot's share is a share of, and its label.

        A sampled profile covers less than the wall time, an import hot spot is a share of the
        import time only; naming the base keeps "94 %" from reading as 94 % of the run.
        """
        h = self.top_hotspot()
        if h is None or h.self_pct <= 0 or h.self_ms <= 0:
            return None
        label = _BASE_LABEL.get(h.kind)
        return (100.0 * h.self_ms / h.self_pct, label) if label else None

    @property
    def is_startup(self) -> bool:
        """A startup measurement (the startup route, or the collector's startup runs): its
        report leads with the launch figure."""
        st = self.analysis.startup
        return (self.collected.get("kind") == "startup" or self.route == "startup") and bool(
            st and st.median_ms is not None and st.runs)

    @property
    def app_startup(self):
        """The first app startup read from an Android system trace, when there is one: such a
        trace's report leads with it (TTID/TTFD, the biggest part of the breakdown, the first
        suggestion) whatever else the trace holds."""
        st = self.analysis.startup
        return next((r for r in (st.runs if st else []) if r.package), None)

    def top_hotspot(self) -> Hotspot | None:
        """The hot spot with the largest self share over all threads (per-thread rows only if
        the data has no overall ones)."""
        hs = [h for h in self.analysis.hotspots if h.overall] or list(self.analysis.hotspots)
        hs = [h for h in hs if h.self_ms > 0] or hs
        return max(hs, key=lambda h: h.self_pct) if hs else None

    def location(self, h: Hotspot) -> tuple[str | None, str | None]:
        """``file:line`` of a hot spot as the attributor found it (else as the profile said),
        and the hot line's code when the attributor showed it."""
        att = self.attribution_for(h)
        if att and att.get("status") == AttributionStatus.FOUND.value and att.get("file"):
            loc = f"{att['file']}:{att['line']}" if att.get("line") else str(att["file"])
            return loc, excerpt.snippet(excerpt.parse(att.get("excerpt"), att.get("line")))
        if h.file:
            f = _relative(h.file, self.root)
            return (f"{f}:{h.line}" if h.line else f), None
        return None, None

    def hotspot_source(self, h: Hotspot) -> tuple[Cell, str | None]:
        """A hot-spot row's source cell, and the profile's own location when that cell names no
        file: where the attributor found it, else why not (system code, not in the workspace),
        else the profile's ``file:line``."""
        att = self.attribution_for(h)
        own = (f"{h.file}:{h.line}" if h.line else h.file) if h.file else None
        if att and att.get("status") == AttributionStatus.FOUND.value:
            return Code(f"{att.get('file')}:{att.get('line')}" if att.get("line") else str(att.get("file"))), None
        if att:
            label = ("system / library code" if att.get("status") == AttributionStatus.SYSTEM.value
                     else "not found in the workspace")
            return Muted(label + (f" ({att['reason']})" if att.get("reason") else "")), own
        return (Code(own) if own else "–"), None

    def excerpt_rows(self) -> list[tuple[Hotspot, dict[str, Any], excerpt.Excerpt, str, str]]:
        """``excerpts()`` with each one's ``file:line`` and its share ("12.5 % self")."""
        out = []
        for h, att, ex in self.excerpts():
            loc = f"{att.get('file')}:{att.get('line')}" if att.get("line") else str(att.get("file"))
            share = f"{fmt.pct(h.self_pct)} self" if h.self_ms > 0 else f"{fmt.pct(h.total_pct)} with callees"
            out.append((h, att, ex, loc, share))
        return out

    def section(self, sid: str):
        """A data section of ``SECTIONS`` (nodes/report/content.py), built once for every
        renderer; None when the data has nothing for it."""
        from nodes.report.content import DATA_SECTIONS

        cache = self.__dict__.setdefault("_sections", {})
        if sid not in cache:
            cache[sid] = DATA_SECTIONS[sid](self)
        return cache[sid]

    def lens_answer(self):
        """The lens answer's section (``lens_section``) as blocks, or None for the overview."""
        from nodes.report.content import CodeBlock, Items, Note, Section

        lens = self.lens_section()
        if lens is None:
            return None
        blocks: list[Any] = [Note(line) for line in lens["lines"]]
        if lens["missing"]:
            blocks.append(Note(f"{lens['missing']}.", label="Missing"))
        if lens["partial"]:
            blocks += [Note("What this data can say:"), Items(tuple(lens["partial"]))]
        if lens["recipe"]:
            blocks += [Note(f"To record {lens['recipe_what']}:"), CodeBlock(lens["recipe"])]
        blocks.append(Note(f"This lens reads: {lens['metrics']}; it needs {lens['needs']}.", quiet=True))
        return Section("lens", lens["title"], blocks)

    def lens_blocks(self, asked: bool):
        """The lens data sections (``lens_sections``) as blocks: the question's lens's own one
        (``asked``, shown under its answer) or the others, in their order."""
        from nodes.report.content import lens_section

        mine = None if self.lens in (None, "overview") else self.lens
        return [lens_section(s, mine) for s in self.lens_sections() if (s.lens == mine) == asked]

    def tiles(self) -> list[tuple[str, str, str]]:
        """The key figures the page shows as tiles under the verdict: (value, label, source)."""
        a = self.analysis
        out: list[tuple[str, str, str]] = []
        src = self.prov.text()
        if self.wall_ms is not None:  # one duration on the page; the others are labelled in Sources
            out.append((fmt.dur(self.wall_ms), "wall time of the run", f"{src} · the collector's clock, launch to exit"))
        elif a.duration_ms:
            out.append((fmt.ms(a.duration_ms), "capture length", src))
        fr = a.frames
        if fr and fr.count:
            tip = self.prov.text(sections=("frames",))
            if fr.fps:
                out.append((f"{fr.fps:.1f}", "frames per second", tip))
            if fr.jank_ratio is not None:
                out.append((fmt.ratio_pct(fr.jank_ratio), f"janky (> {fr.budget_ms:.2f} ms)", tip))
            if fr.p90_ms is not None:
                out.append((fmt.ms(fr.p90_ms), "frame time p90", tip))
        if a.startup and a.startup.median_ms is not None:
            out.append((fmt.ms(a.startup.median_ms), f"launch median ({len(a.startup.runs)} runs)",
                        self.prov.text(sections=("startup",))))
        if a.hotspots:
            h = max(a.hotspots, key=lambda h: h.self_pct)
            of = {"sample": "sampled time", "import": "import time"}.get(h.kind, "self time")
            out.append((fmt.pct(h.self_pct), f"{of} in {h.name}", self.prov.text(sections=("hot spots",))))
        if a.long_tasks:
            out.append((str(a.long_tasks_seen()), "long tasks (≥ 50 ms)", self.prov.text(sections=("long tasks",))))
        return out

    @staticmethod
    def finding_metrics(f: Finding) -> str:
        """A finding's metric values on one line: ``median_ms = 812.5, runs = 5``."""
        return ", ".join(f"{k} = {fmt.metric(x)}" for k, x in f.metric.items())

    def excerpts(self, limit: int = 5) -> list[tuple[Hotspot, dict[str, Any], excerpt.Excerpt]]:
        """The source excerpts worth showing: hot spots of the table with self time, one per location."""
        hs = list(self.analysis.hotspots[:HOTSPOT_ROWS])
        # callers with no self time (main, <module>) only when nothing has self time
        ordered = [h for h in hs if h.self_ms > 0] or hs
        out: list[tuple[Hotspot, dict[str, Any], excerpt.Excerpt]] = []
        seen: set[tuple[Any, Any]] = set()
        for h in ordered:
            att = self.attribution_for(h)
            if not att or att.get("status") != AttributionStatus.FOUND.value:
                continue
            ex = excerpt.parse(att.get("excerpt"), att.get("line"))
            key = (att.get("file"), att.get("line"))
            if ex is None or key in seen:
                continue
            seen.add(key)
            out.append((h, att, ex))
            if len(out) >= limit:
                break
        return out

    def _facts(self) -> list[tuple[str, str]]:
        """(kind, clause) of the key numbers, most telling first."""
        a = self.analysis
        out: list[tuple[str, str]] = []
        fr = a.frames
        if fr and fr.count:
            s = f"{fr.count:,} frames" + (f" of {fr.process}" if fr.process else "")
            if fr.fps:
                s += f" at {fr.fps:.1f} FPS"
            if fr.jank_ratio is not None:
                if fr.jank_source == "frame timeline":  # FrameTimeline's own verdicts (docs/analyzer.md)
                    s += f", {fmt.ratio_pct(fr.jank_ratio)} janky"
                else:
                    s += f", {fmt.ratio_pct(fr.jank_ratio)} over the {fmt.ms(fr.budget_ms)} budget"
            if fr.p90_ms is not None:
                s += f" (p90 {fmt.ms(fr.p90_ms)})"
            if fr.causes and fr.jank_count:
                cause = next(iter(fr.causes))
                s += f", mostly late because of {FRAME_CAUSE_LABELS[FrameCause(cause)]}"
            out.append(("frames", s))
        st = a.startup
        if st and st.median_ms is not None:
            n = len(st.runs) or 1
            s = f"launch median {fmt.ms(st.median_ms)} over {n} run{'s' if n != 1 else ''}"
            if st.spread_ms is not None and len(st.runs) > 1:
                s += f" (spread {fmt.ms(st.spread_ms)})"
            out.append(("startup", s))
        h = self.top_hotspot()
        if h is not None and h.self_ms > 0:
            loc, code = self.location(h)
            where = ""
            if loc:
                where = f" ({loc}: {_code_span(code)})" if code else f" ({loc})"
            base = self.hotspot_base()
            if h.kind == "import":
                of = f"of the {fmt.dur(base[0])} import time" if base else "of the import time"
                out.append(("hotspot", f"slowest import {h.name}{where}: {fmt.dur(h.self_ms)} by itself, "
                                       f"{fmt.pct(h.self_pct)} {of}"))
            else:
                if self.ran_program and base and base[1] == "sampled":
                    # not "of the 1.11 s sampled" beside "ran 996 ms": a sampler's time is its
                    # sample count × its nominal interval, which a loaded machine moves either way
                    share = "of the samples"
                elif self.ran_program and base:
                    share = f"of the {fmt.dur(base[0])} {base[1]}"
                else:
                    share = "of the profiled time" if self.ran_program else "of self time"
                out.append(("hotspot", f"{fmt.pct(h.self_pct)} {share} in {h.name}{where}"))
        if a.long_tasks:
            worst = max(a.long_tasks, key=lambda t: t.dur_ms)
            n = a.long_tasks_seen()
            out.append(("long_tasks", f"{n} long task{'s' if n != 1 else ''} (longest {fmt.ms(worst.dur_ms)} on {worst.thread})"))
        if self.ran_program:  # a profiled program: where the time went leads
            out.sort(key=lambda kv: kv[0] != "hotspot")
        return out

    def _lead(self) -> tuple[str, list[tuple[str, str]]]:
        """What was measured and for how long, and the key facts left to tell after it.

        A startup report leads with the launch figure (median over the runs, the first, cold
        run apart), so the launch clause is not repeated among the facts.
        """
        a = self.analysis
        facts = self._facts()
        st = a.startup
        run = self.app_startup
        if run is not None:
            return self._app_startup_lead(run, [f for f in facts if f[0] != "startup"])
        facts = self._jank_lead(facts)
        if self.is_startup and st is not None and st.median_ms is not None:
            n = len(st.runs)
            ready = {r.ready_by for r in st.runs}
            until = ""
            if len(ready) == 1 and next(iter(ready)):
                r = next(iter(ready))
                until = ", measured to exit" if r == "exit" else f", measured until {r}"
            first = f"; first run {fmt.ms(st.first_ms)}" if st.first_ms is not None and n > 1 else ""
            what = f"{self.subject} launches in {fmt.ms(st.median_ms)} (median of {n} run{'s' if n != 1 else ''}{until}{first})"
            return what, [f for f in facts if f[0] != "startup"]
        wall = self.wall_ms
        limit = self.stopped_at_limit_s
        if limit is not None:
            what = (f"{self.subject} was still running at the {limit:g} s run limit and was stopped there; "
                    f"the profile covers its first {fmt.dur(1000.0 * limit)}")
        elif wall is not None:
            what = f"{self.subject} ran {fmt.dur(wall)} (wall time)"
        elif self.ran_program and a.duration_ms:
            what = f"{self.subject} ran {fmt.dur(a.duration_ms)}"
        elif a.duration_ms:
            what = f"{self.subject} covers {fmt.dur(a.duration_ms)} of {a.format} data"
        else:
            what = f"{self.subject}: {a.format} data"
        return what, facts

    def _jank_lead(self, facts: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """On a jank trace (the app's frames are janky, no startup: lead_family "frames") the
        frames clause — the app, its janky share, the main cause — then the first frame
        suggestion lead the other facts."""
        from nodes.perf.findings import lead_family

        if lead_family(self.analysis) != "frames":
            return facts
        lead = [f for f in facts if f[0] == "frames"] + self._first_suggestion("frames")
        return lead + [f for f in facts if f[0] != "frames"]

    def _first_suggestion(self, family: str) -> list[tuple[str, str]]:
        """("suggestion", "first suggestion: …") of the family's first ranked finding that has one."""
        first = next((f for f in self.ranked_findings() if f.family == family and f.suggestion), None)
        if first is None:
            return []
        return [("suggestion", f"first suggestion: {first.suggestion}" + (f" ({first.link})" if first.link else ""))]

    def _app_startup_lead(self, run, facts: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]]:
        """"<package> cold start: TTID …, TTFD …", then the biggest part of the breakdown and
        the first suggestion before the other facts."""
        from nodes.perf.findings.startup import biggest_part_words, display_times, vitals_verdict

        shown = display_times(run)
        n = len(self.analysis.startup.runs) if self.analysis.startup else 1
        more = f" (first of {n} launches)" if n > 1 else ""
        what = (f"{run.package} {run.kind} start{more}: {', '.join(shown)}; the launch took {fmt.ms(run.total_ms)} "
                f"({vitals_verdict(run)})")
        lead: list[tuple[str, str]] = []
        if (part := biggest_part_words(run)) is not None:
            lead.append(("startup", part))
        return what, lead + self._first_suggestion("startup") + facts

    def headline(self) -> str:
        """One sentence: what was measured, for how long, and where the time went (with the
        source line the attributor found) — for a lens question, the lens's own sentence."""
        r = self.lens_reading()
        if r is not None:
            return r.lead
        what, facts = self._lead()
        if facts:
            return f"{what}; {facts[0][1]}."
        return f"{what}."

    def summary_sentences(self) -> list[str]:
        """The verdict in two or three sentences: the headline, what to look at first, and the
        other key numbers. Paths and commands are left to the Sources lines."""
        a = self.analysis
        if self.lens_reading() is not None:
            return self._lens_sentences()
        out = [self.headline()]
        ranked = self.ranked_findings()
        from nodes.perf.findings import SERIOUS, lead_family, look_first

        mine = [f for f in ranked if self.in_lens(f)] if self.lensed else ranked
        serious = [f for f in mine if f.severity in SERIOUS]
        first = look_first(mine, lead_family(a))
        if serious and first is not None:
            n = len(serious)
            verdict = f'{self.verdict}: {n} serious finding{"s" if n != 1 else ""}; look first at "{first.title}"'
        elif self.lensed:
            # A lens question whose own findings are under every threshold: its numbers (the
            # headline) are the answer, with no verdict word (docs/analyzer.md, "Lenses").
            verdict = ""
        elif ranked and self.worst_severity == "low":
            low = [f for f in self.findings_to_act_on() if f.severity == "low"]
            n = len(low)
            verdict = f'{self.verdict}: {n} minor finding{"s" if n != 1 else ""}; the first is "{low[0].title}"'
        else:
            verdict = self.verdict
        if a.partial or a.warnings:
            w = len(a.warnings)
            note = "some input was skipped or incomplete" + (f", {w} warning{'s' if w != 1 else ''}" if w else "") + ": see Warnings"
            verdict = f"{verdict} ({note})" if verdict else note[0].upper() + note[1:]
        if verdict:
            out.append(verdict + ".")
        if self.lensed:
            others = [f for f in ranked if not self.in_lens(f) and f.severity in SERIOUS]
            if others:
                out.append("Also, outside this question: " + "; ".join(f'"{f.title}"' for f in others[:3]) + ".")
        rest = [clause for _, clause in self._lead()[1][1:3]]
        if rest:
            out.append("Also: " + "; ".join(rest) + ".")
        if self.stopped_at_limit_s is not None:
            out.append(raise_limit_hint(self.stopped_at_limit_s) + ".")
        return out

    def answer_lines(self) -> list[str]:
        """The summary sentences as the user reads them in a terminal: the recipe (indented,
        copy-pasteable) right after the sentence that introduces it."""
        section = self.lens_section() or {}
        out: list[str] = []
        for s in self.summary_sentences():
            out.append(s)
            if s.startswith((RECIPE_LEAD, RECIPE_ALSO)) and section.get("recipe"):
                out += ["    " + x for x in section["recipe"].splitlines()]
        return out

    def _lens_sentences(self) -> list[str]:
        """A lens question's answer: the lens's sentence first; what is missing, what this data can
        say and how to record what is missing; the lens's verdict (from its findings only); the
        other topics after, as "also", without a verdict word."""
        r = self.lens_reading()
        out = [r.lead]
        if r.recipe:
            from nodes.perf.recipes import RECIPES

            # a lead that answered (it has numbers) and lacks a part: the recipe records the rest
            out.append(f"{RECIPE_ALSO if r.numbers else RECIPE_LEAD} {RECIPES[r.recipe].what}:")
        if r.partial:
            out.append("What this data can say: " + "; ".join(r.partial) + ".")
        elif r.missing and not r.numbers:
            out.append("This data holds nothing else on it.")
        mine = [f for f in self.ranked_findings() if self.in_lens(f)]
        serious = [f for f in mine if f.severity in ("high", "medium")]
        if serious:
            n = len(serious)
            out.append(f'{self.verdict}: {n} serious finding{"s" if n != 1 else ""}; look first at "{serious[0].title}".')
        others = [f for f in self.ranked_findings() if not self.in_lens(f) and f.severity in ("high", "medium")]
        if others:
            titles = "; ".join(f'"{f.title}"' for f in others[:3])
            out.append(f"Also, outside this question: {titles}.")
        a = self.analysis
        if a.partial or a.warnings:
            w = len(a.warnings)
            out.append("Some input was skipped or incomplete" + (f" ({w} warning{'s' if w != 1 else ''})" if w else "")
                       + ": see Warnings.")
        return out

    def source_rows(self) -> list[tuple[str, str, str]]:
        """The Sources table as (label, value, style) rows, style "code", "text" or "link".

        A value already shown is not repeated (the collector, the readers and the merge each
        record the command or a file name): the first row that shows it stays.
        """
        a = self.analysis
        rows: list[tuple[str, str, str]] = []
        shown: list[tuple[str, str]] = []

        def base(label: str) -> str:
            return label.split(": ", 1)[-1].split(" (", 1)[0]

        def add(label: str, value: Any, style: str = "text", dedupe: bool = False) -> None:
            v = str(value)
            # the same fact under the same name, or a path/command already inside a longer one
            if dedupe and any((base(label) == b and v == s) or (len(v) >= 6 and v in s) for b, s in shown):
                return
            rows.append((label, v, style))
            shown.append((base(label), v))

        paths = {k: str(x) for k, x in (self.collected.get("paths") or {}).items()}
        files = [p.strip() for p in a.source.split(", ") if p.strip()]
        if not files or not set(files) <= set(paths.values()):
            add("data file" if len(files) <= 1 else "data files", a.source, "code")
        for k, x in paths.items():
            add(f"collected: {k}", x, "code")
        add("format", a.format)
        if self.wall_ms is not None:
            add("wall time of the run", f"{fmt.dur(self.wall_ms)} — the collector's clock, launch to exit")
        add("time range", (fmt.span(0.0, a.duration_ms) or "–")
            + (" — the data's span (the longest data file)" if self.wall_ms is not None else ""))
        share_of = self.hotspot_base()
        if share_of:
            if share_of[1] == "sampled":
                add("sampled for", f"{fmt.dur(share_of[0])} — the samples × the sampling interval, what the hot "
                                   "spot shares are shares of; a sampler that falls behind on a busy machine takes "
                                   "fewer samples (or catches up with more), so this differs from the wall time")
            else:
                add(share_of[1], f"{fmt.dur(share_of[0])} — what the hot spot shares are shares of")
        if self.prov.command:
            add("command", self.prov.command, "code")
        for k, x in self.collection_summary():
            if k == "wall_s" and self.wall_ms is not None:
                continue  # shown above, labelled
            add(f"collection: {k}", x, dedupe=True)
        if self.route:
            add("route", self.route + (f" — {self.route_info['reason']}" if self.route_info.get("reason") else ""))
        if self.question:
            add("request", self.question)
        for k, x in sorted(a.meta.items()):
            add(k, x, dedupe=True)
        for label, name in self.exports.items():
            add(f"export: {label}", name, "link")
        add("generated", self.generated_at)
        return rows

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
            launches = [r for r in a.startup.runs if r.package][:4]
            if launches:
                d["startup"]["launches"] = [
                    {"package": r.package, "kind": r.kind, "total_ms": r.total_ms, "ttid_ms": r.ttid_ms, "ttfd_ms": r.ttfd_ms,
                     "breakdown": [b.model_dump(include={"reason", "dur_ms"}) for b in r.breakdown[:5]],
                     "slow_reasons": [x.id for x in r.slow_reasons]}
                    for r in launches]
        if a.long_tasks:
            d["long_tasks"] = [t.model_dump() for t in a.long_tasks[:8]]
        return d

    def lens_sections(self):
        """The lens sections the data has (nodes/report/lens_sections.py), built once for both
        renderers: the question's lens first when the view has one."""
        if not hasattr(self, "_lens_sections"):
            from nodes.report.lens_sections import lead_with, lens_sections

            self._lens_sections = lead_with(lens_sections(self.analysis), self.lens)
        return self._lens_sections


#: How the sentence before a recipe starts (the reporter prints the recipe after it).
RECIPE_LEAD = "To record a trace that can answer it, capture"
RECIPE_ALSO = "To record a trace that also has what this one lacks, capture"

#: The section title of each lens (the report opens with it).
_LENS_TITLES = {"startup": "Startup", "frames": "Frames and jank", "scroll": "Scrolling and input", "cpu": "CPU",
                "memory": "Memory", "power": "Power", "blocking": "Blocking (binder, locks, IO)", "page": "Page load"}

#: What the hot spot shares of each profile kind are shares of (a trace's slices: none here).
_BASE_LABEL = {"sample": "sampled", "call": "profiled", "import": "import time"}


def _relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` when it lies inside it, else unchanged."""
    if not root or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _short_command(cmd: str) -> str:
    """``/venv/bin/python /src/app.py --n 5`` → ``python app.py --n 5`` (the full one is in Sources)."""
    words = [w.rsplit("/", 1)[-1] if "/" in w and not w.startswith("-") else w for w in cmd.split()]
    s = " ".join(w for w in words if w)
    return s if len(s) <= 80 else s[:79] + "…"


def _code_span(s: str) -> str:
    """Inline code that survives a backtick inside (Markdown's rule: a longer fence, padded)."""
    return f"`` {s} ``" if "`" in s else f"`{s}`"


def _coerce_analysis(raw: Any) -> AnalysisResult:
    if isinstance(raw, AnalysisResult):
        return raw
    if not isinstance(raw, Mapping):
        raise ReportInputError(f"analysis is {type(raw).__name__}, not an analysis result object")
    try:
        return AnalysisResult.model_validate(raw)
    except msgspec.ValidationError as e:
        loc, msg = error_location(e)
        raise ReportInputError(f"analysis is not a valid result: {loc or '(root)'}: {msg}") from None


def build_view(
    analysis: Any,
    *,
    attribution: list[dict[str, Any]] | None = None,
    collected: Mapping[str, Any] | None = None,
    route: str | None = None,
    route_info: Mapping[str, Any] | None = None,
    question: str = "",
    now: datetime | None = None,
    root: str | None = None,
    lens: str | None = None,
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
        root=os.path.abspath(root) if root else os.getcwd(),
        lens=_lens_value(lens),
    )


def _lens_value(lens: str | None) -> str:
    """A lens value (old ``focus`` aliases too); anything else is the overview."""
    from graph.enums import Lens, lens_named

    try:
        return lens_named(lens).value if lens else Lens.OVERVIEW.value
    except ValueError:
        return Lens.OVERVIEW.value
