"""Side B against side A: one row per metric, with its direction, and the hot spots matched by name.

A row's verdict, from :class:`nodes.compare.stats.Difference`:

* ``better`` / ``worse`` — the change is significant (or, with one run per side, simply nonzero:
  the row then says there is no interval), in the metric's direction (:mod:`nodes.compare.keys`);
* ``no significant change`` — inside the noise of the runs;
* ``unchanged`` — the same number on both sides;
* ``changed`` — a count with no better direction (frames drawn);
* ``only in A`` / ``only in B`` — the other side's data lacks the metric (missing, not zero).

Hot spots (overall, self time) are matched by name: ``new`` (only in B), ``gone`` (only in A),
``grew`` / ``shrank`` (self time, significant or one run per side), else "no significant change".
A side's hot-spot list is its top rows only, so "new" means "not among A's top hot spots".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from nodes.compare import stats
from nodes.compare.keys import FAMILIES, format_key, info, parse_key
from nodes.compare.samples import Samples, extract, hotspot_places
from nodes.compare.sides import Side

#: Most hot-spot rows a comparison lists (the union of both sides' heaviest).
MAX_HOTSPOT_ROWS = 20
#: Families compared in the metric table (hot spots have their own; raw stats only when shared).
TABLE_FAMILIES = ("startup", "frames", "main_thread", "page", "art", "memory", "cpu", "power", "blocking",
                  "scroll", "duration_ms", "stats")


class MismatchError(ValueError):
    """The two sides hold different kinds of data: nothing to compare (bad usage)."""


@dataclass
class Row:
    key: str
    family: str
    label: str
    unit: str
    direction: str | None
    a: list[float]
    b: list[float]
    verdict: str
    diff: dict[str, Any] | None = None
    #: hot spots: where it is (file:line), and new/gone/grew/shrank
    place: str | None = None
    status: str | None = None


@dataclass
class Comparison:
    a_label: str
    b_label: str
    a_runs: list[str]
    b_runs: list[str]
    rows: list[Row] = field(default_factory=list)
    hotspots: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changes(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {"better": [], "worse": []}
        for r in self.rows + self.hotspots:
            if r.verdict in out:
                out[r.verdict].append(r.key)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Comparison":
        """The comparison back from its JSON (the graph state keeps it as JSON)."""
        return cls(d["a"]["label"], d["b"]["label"], list(d["a"]["runs"]), list(d["b"]["runs"]),
                   [Row(**r) for r in d.get("rows") or []], [Row(**r) for r in d.get("hotspots") or []],
                   list(d.get("warnings") or []))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "perfscout.compare/1",
            "a": {"label": self.a_label, "runs": self.a_runs},
            "b": {"label": self.b_label, "runs": self.b_runs},
            "rows": [asdict(r) for r in self.rows],
            "hotspots": [asdict(r) for r in self.hotspots],
            "summary": {**{k: len(v) for k, v in self.changes.items()}, "worse_keys": self.changes["worse"],
                        "better_keys": self.changes["better"]},
            "warnings": self.warnings,
        }


def side_samples(side: Side, jank_types: Sequence[str] = ()) -> Samples:
    """The samples of every run of a side, pooled per key (one value per run, per launch for start-up).

    ``jank_types``: FrameTimeline jank types seen anywhere in the comparison; a run whose frames
    carry FrameTimeline verdicts and do not name one of them had none of it (0, not missing).
    """
    out: Samples = {}
    for run in side.runs:
        got = extract(run.analysis)
        fr = run.analysis.get("frames") or {}
        if jank_types and isinstance(fr.get("jank_types"), dict) and fr["jank_types"]:
            for k in jank_types:
                got.setdefault(k, [0.0])
        for k, vals in got.items():
            out.setdefault(k, []).extend(vals)
    return out


def _jank_type_keys(*sides: Side) -> list[str]:
    keys: set[str] = set()
    for side in sides:
        for run in side.runs:
            keys |= {k for k in extract(run.analysis) if k.startswith("frames.jank_types.")}
    return sorted(keys)


def verdict(direction: str | None, d: stats.Difference) -> str:
    if d.delta == 0:
        return "unchanged"
    if d.significant is False:
        return "no significant change"
    if direction is None:
        return "changed"
    worse = d.delta > 0 if direction == "lower" else d.delta < 0
    return "worse" if worse else "better"


def compare_values(key: str, a: Sequence[float], b: Sequence[float]) -> Row:
    segs = parse_key(key)
    mi = info(segs)
    if not a or not b:
        return Row(key, mi.family, mi.label, mi.unit, mi.direction, list(a), list(b), "only in A" if a else "only in B")
    d = stats.compare(a, b)
    return Row(key, mi.family, mi.label, mi.unit, mi.direction, list(a), list(b), verdict(mi.direction, d), d.to_dict())


def _kind(s: Samples) -> set[str]:
    return {parse_key(k)[0] for k in s} - {"duration_ms", "stats"}


def _describe(side: Side, s: Samples) -> str:
    fmts = sorted({str(r.analysis.get("format")) for r in side.runs})
    fams = sorted(_kind(s)) or ["no metrics"]
    return f"{'/'.join(fmts)} data with {', '.join(fams)}"


def launch_kinds(side: Side) -> set[str]:
    """The kinds (cold / warm / hot) of a side's launches that the data classifies."""
    return {str(r.get("kind")) for run in side.runs for r in ((run.analysis.get("startup") or {}).get("runs") or [])
            if isinstance(r, dict) and str(r.get("kind")) in ("cold", "warm", "hot")}


def check_kinds(a: Side, b: Side, sa: Samples, sb: Samples) -> None:
    """Raise MismatchError when the sides hold different kinds of data: no metric family in common
    (a gfxinfo dump vs a py-spy profile), or launches of different kinds only (warm vs cold: a
    warm start skips process creation, so the difference says nothing about the change)."""
    ka, kb = _kind(sa), _kind(sb)
    if not ka & kb:
        raise MismatchError(f"mismatched kinds: {a.spec} is {_describe(a, sa)}, {b.spec} is {_describe(b, sb)} "
                            "— nothing to compare")
    la, lb = launch_kinds(a), launch_kinds(b)
    if la and lb and not la & lb:
        raise MismatchError(f"mismatched kinds: the launches of {a.spec} are {'/'.join(sorted(la))}, those of "
                            f"{b.spec} {'/'.join(sorted(lb))} — compare launches of one kind")


def _family_order(key: str) -> tuple[int, str]:
    fam = parse_key(key)[0]
    return (FAMILIES.index(fam) if fam in FAMILIES else 99, key)


def compare_sides(a: Side, b: Side) -> Comparison:
    """The comparison of B against A (see the module docstring). Raises MismatchError."""
    jt = _jank_type_keys(a, b)
    sa, sb = side_samples(a, jt), side_samples(b, jt)
    check_kinds(a, b, sa, sb)
    cmp = Comparison(a.spec, b.spec, [r.label for r in a.runs], [r.label for r in b.runs])
    keys = sorted(set(sa) | set(sb), key=_family_order)
    for k in keys:
        fam = parse_key(k)[0]
        if fam not in TABLE_FAMILIES:
            continue
        if fam == "stats" and not (k in sa and k in sb):
            continue  # raw tool counters: only the ones both sides report
        segs = parse_key(k)
        if fam == "memory" and len(segs) == 4 and segs[3] in ("start", "end"):
            continue  # a series' peak and growth say it; start and end stay budgetable
        cmp.rows.append(compare_values(k, sa.get(k, []), sb.get(k, [])))
    cmp.hotspots = _hotspot_rows(a, b, sa, sb)
    kinds_a, kinds_b = launch_kinds(a), launch_kinds(b)
    if kinds_a and kinds_b and kinds_a != kinds_b:
        cmp.warnings.append(
            f"the launches differ in kind ({', '.join(sorted(kinds_a))} vs {', '.join(sorted(kinds_b))}): "
            "compare the per-kind rows (startup.cold.*, startup.warm.*), not the pooled ones")
    for side in (a, b):
        fmts = {str(r.analysis.get("format")) for r in side.runs}
        if len(fmts) > 1:
            cmp.warnings.append(f"{side.spec}: runs of different formats ({', '.join(sorted(fmts))})")
    return cmp


def _hotspot_rows(a: Side, b: Side, sa: Samples, sb: Samples) -> list[Row]:
    def names(s: Samples) -> dict[str, float]:
        out: dict[str, float] = {}
        for k, v in s.items():
            segs = parse_key(k)
            if segs[0] == "hotspots" and segs[2] == "self_pct":
                out[segs[1]] = max(v)
        return out

    na, nb = names(sa), names(sb)
    ranked = sorted(set(na) | set(nb), key=lambda n: -max(na.get(n, 0.0), nb.get(n, 0.0)))[:MAX_HOTSPOT_ROWS]
    places: dict[str, str] = {}
    for side in (b, a):
        for run in side.runs:
            for n, p in hotspot_places(run.analysis).items():
                places.setdefault(n, p)
    rows = []
    for n in ranked:
        key = format_key(("hotspots", n, "self_ms"))
        row = compare_values(key, sa.get(key, []), sb.get(key, []))
        pct_key = format_key(("hotspots", n, "self_pct"))
        row.label = n
        row.place = places.get(n)
        if not row.a:
            row.status = "new"
        elif not row.b:
            row.status = "gone"
        elif row.verdict in ("worse", "better"):
            row.status = "grew" if row.verdict == "worse" else "shrank"
        else:
            row.status = row.verdict
        row.diff = {**(row.diff or {}), "self_pct_a": _median(sa.get(pct_key)), "self_pct_b": _median(sb.get(pct_key))}
        rows.append(row)
    return rows


def _median(v: Sequence[float] | None) -> float | None:
    if not v:
        return None
    import statistics

    return statistics.median(v)
