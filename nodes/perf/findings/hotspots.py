"""Hot-spot rules: one function or slice that takes a large share of the time by itself."""

from __future__ import annotations

from collections import defaultdict

from nodes.perf.findings.common import finding
from nodes.perf.metrics.common import _fms, _fpct, shown_path
from nodes.perf.model import Finding, Hotspot

#: A hot spot's own share of its kind's time from which it is a finding, and "high".
HOT_SPOT_PCT = 20.0
HOT_SPOT_HIGH_PCT = 40.0
#: An import is a finding from this much own time, whatever its share.
HOT_IMPORT_MS = 50.0
#: Aggregate rows that are no function of the program.
NOT_A_FUNCTION = ("(program)", "(root)", "(idle)")
#: A slice hot spot of the app (AnalysisResult.app): its share is of the app's threads only.
_APP_WHAT = "of the app's traced thread time"
_WHAT = {"slice": "of the traced thread time", "sample": "of the sampled time",
         "call": "of the profiled time", "import": "of the import time"}


def family_of(kind: str) -> str:
    """Sampled or profiled functions are where the CPU went ("cpu"); a slice's self time is
    traced thread time, which may be sleep or a wait ("hotspots")."""
    return "cpu" if kind in ("sample", "call") else "hotspots"


def hot_spots(hotspots: list[Hotspot], duration_ms: float, source: str | None, root: str | None) -> list[Finding]:
    """The top overall hot spot of each kind (slice, sample, call, import) when it is large;
    file paths relative to ``root`` (the workspace) when inside it."""
    by_kind: dict[str, list[Hotspot]] = defaultdict(list)
    for h in hotspots:
        if h.overall:
            by_kind[h.kind].append(h)
    out = []
    for kind, hs in by_kind.items():
        hs = [h for h in hs if h.name not in NOT_A_FUNCTION]
        if not hs:
            continue
        h = hs[0]
        if h.self_pct >= HOT_SPOT_PCT or (kind == "import" and h.self_ms >= HOT_IMPORT_MS):
            sev = "high" if h.self_pct >= HOT_SPOT_HIGH_PCT else "medium"
            f = shown_path(h.file, root) if h.file else None
            where = f" ({f}:{h.line})" if f and h.line else (f" ({f})" if f else "")
            out.append(finding(
                f"Hot spot: {h.name}", sev,
                f"{h.name}{where} takes {_fpct(h.self_pct)} "
                f"{_APP_WHAT if h.scope == 'app' and kind == 'slice' else _WHAT.get(kind, '')} by itself "
                f"({_fms(h.self_ms)} self, {_fms(h.total_ms)} with callees).",
                source, start_ms=0.0, end_ms=duration_ms, events=[h.name],
                metric={"self_ms": h.self_ms, "self_pct": h.self_pct, "kind": kind}, family=family_of(kind),
            ))
    return out
