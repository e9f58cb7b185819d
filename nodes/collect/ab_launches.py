"""Which of two programs starts faster: N launches of each, interleaved A B A B …, and the ratio
with its interval.

Interleaving, not blocks: hyperfine runs all of A, then all of B, so a machine that drifts (a
build finishing on the other core, a thermal step, the page cache filling) shifts one program's
numbers and not the other's. Launched in turns, both see the same drift, and the difference left
is the programs'. The first pair is kept and reported like the others; each launch is timed as
``nodes.collect.launches`` times one (to exit, or to "ready"), with the same limits.

The answer is hyperfine's sentence with our statistics (nodes/compare/stats.py): "new.py starts
1.28× faster than old.py (95 % CI 1.21–1.35×, Mann–Whitney p = 0.0002; 10 launches each,
interleaved)", or "no significant difference" when the interval holds 1.

``measure_ab`` takes the launcher as a parameter so tests give it a deterministic stand-in:
no test decides anything by timing a real program.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from nodes.collect.documents import write_startup
from nodes.collect.launches import ReadyWatch, _check, _launch
from nodes.collect.options import CollectOptions
from nodes.collect.rundir import write_json
from nodes.collect.target import Target
from nodes.compare import stats

#: Launches of each program when the options do not say (more than a single-program measurement:
#: a ratio needs both sides' noise).
DEFAULT_AB_RUNS = 10

Launcher = Callable[[Target, int], float]  # (target, launch index) -> seconds to exit / ready


def interleaved(n: int) -> list[str]:
    """The launch order: A B A B … (n of each)."""
    return [side for _ in range(n) for side in ("a", "b")]


@dataclass
class ABResult:
    a: str
    b: str
    order: list[str]
    a_ms: list[float] = field(default_factory=list)
    b_ms: list[float] = field(default_factory=list)
    ratio: float | None = None  # median B / median A
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    significant: bool | None = None
    sentence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict(a: str, b: str, a_ms: Sequence[float], b_ms: Sequence[float], lang: str = "en") -> ABResult:
    """The ratio of the two programs' launch times and the sentence that says it (en / zh)."""
    zh = lang.startswith("zh")
    r = stats.ratio(a_ms, b_ms)
    res = ABResult(a, b, [], list(a_ms), list(b_ms), r.ratio, r.ci_low, r.ci_high, r.p_value, r.significant)
    if zh:
        n = f"各 {len(a_ms)} 次" if len(a_ms) == len(b_ms) else f"{len(a_ms)} 次和 {len(b_ms)} 次"
    else:
        n = f"{len(a_ms)} and {len(b_ms)} launches" if len(a_ms) != len(b_ms) else f"{len(a_ms)} launches each"
    ma, mb = statistics.median(a_ms), statistics.median(b_ms)
    if r.ci_low is None:
        faster, slower, x = (b, a, ma / mb) if mb < ma else (a, b, mb / ma)
        res.sentence = (f"{faster} 启动比 {slower} 快 {x:.2f} 倍（{n}：每边一次，没有区间）" if zh else
                        f"{faster} started {x:.2f}× faster than {slower} ({n}: no interval with one launch each)")
        return res
    if not r.significant:
        res.sentence = (f"没有显著差别：{b} / {a} = {r.ratio:.2f}×（95 % 置信区间 {r.ci_low:.2f}–{r.ci_high:.2f}×，"
                        f"Mann–Whitney p = {r.p_value:.2g}；{n}，交替启动）" if zh else
                        f"no significant difference: {b} / {a} = {r.ratio:.2f}× (95 % CI {r.ci_low:.2f}–{r.ci_high:.2f}×, "
                        f"Mann–Whitney p = {r.p_value:.2g}; {n}, interleaved)")
        return res
    if r.ratio < 1:  # B faster: say it as "B is X times faster than A", with the interval inverted
        fast, slow, x, lo, hi, mf, ms_ = b, a, 1 / r.ratio, 1 / r.ci_high, 1 / r.ci_low, mb, ma
    else:
        fast, slow, x, lo, hi, mf, ms_ = a, b, r.ratio, r.ci_low, r.ci_high, ma, mb
    res.sentence = (f"{fast} 启动比 {slow} 快 {x:.2f} 倍（95 % 置信区间 {lo:.2f}–{hi:.2f}×，Mann–Whitney p = {r.p_value:.2g}；"
                    f"中位数 {mf:.1f} ms 对 {ms_:.1f} ms；{n}，交替启动）" if zh else
                    f"{fast} starts {x:.2f}× faster than {slow} (95 % CI {lo:.2f}–{hi:.2f}×, Mann–Whitney p = {r.p_value:.2g}; "
                    f"median {mf:.1f} ms vs {ms_:.1f} ms; {n}, interleaved)")
    return res


def real_launcher(opts: CollectOptions, where: str) -> Launcher:
    """Launch a program once as nodes.collect.launches does (limits, ready, exit status checked)."""
    watch = ReadyWatch(opts)

    def launch(target: Target, i: int) -> float:
        watch.check_port_free()
        res = _launch(list(target.argv), target, opts, watch)
        _check(res, target, opts, watch, f"launch {i + 1} of {target.display}", where)
        return res.wall_s

    return launch


def measure_ab(a: Target, b: Target, run_dir: Path, opts: CollectOptions, *, runs: int | None = None,
               launch: Launcher | None = None, labels: tuple[str, str] | None = None, lang: str = "en") -> dict[str, Any]:
    """Launch ``a`` and ``b`` ``runs`` times each, interleaved; the ``collected`` dict.

    Writes ``a/startup-runs.json`` and ``b/startup-runs.json`` (each side readable by the analyzer
    and by ``perfscout compare``) and ``ab.json`` with the order, the times and the verdict.
    A failing launch raises ToolFailure as a single-program measurement does.
    """
    n = runs or max(DEFAULT_AB_RUNS, opts.startup_runs)
    launch = launch or real_launcher(opts, f"run recorded in {run_dir}")
    order = interleaved(n)
    times: dict[str, list[float]] = {"a": [], "b": []}
    targets = {"a": a, "b": b}
    for side in order:
        i = len(times[side])
        times[side].append(round(launch(targets[side], i) * 1000.0, 3))
    la, lb = labels or (a.display, b.display)
    res = verdict(la, lb, times["a"], times["b"], lang)
    res.order = order
    paths = {}
    for side in ("a", "b"):
        t = targets[side]
        rows = [{"index": i, "total_ms": ms, "kind": "unknown", "ready_by": "exit", "command": t.display}
                for i, ms in enumerate(times[side])]
        (run_dir / side).mkdir(parents=True, exist_ok=True)
        paths[side] = write_startup(run_dir / side / "startup-runs.json", rows, target=t.display)
    write_json(run_dir / "ab.json", res.to_dict())
    from graph.enums import CollectionKind
    from graph.payloads import collection

    return collection(CollectionKind.COMPARE, paths=paths, files={**paths, "ab": str(run_dir / "ab.json")},
                      summary={**res.to_dict(), "labels": {"a": la, "b": lb}}, source=f"{a.display} vs {b.display}")


