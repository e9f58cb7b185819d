"""Energy per rail and per category from ODPM power rails, as androidx Macrobenchmark's
``PowerMetric`` defines it.

Macrobenchmark (``benchmark/benchmark-macro/src/main/java/androidx/benchmark/macro/perfetto/
PowerQuery.kt``, ``PowerCategory.kt``, ``BatteryDischargeQuery.kt`` in androidx) takes, for
every ``power.*`` counter track, the readings with ``ts`` inside the window ``[start, end]``:

* energy (µWs) = the counter's increase over those readings (``max(value) - min(value)``);
* a rail's power = energy / the time between its first and last reading in the window;
* a component is named from the track: ``power.rails.cpu.big`` → ``CpuBig``;
* a category holds the components whose name contains one of its subsystems (CPU: ``Cpu``;
  DISPLAY: ``Display``; GPU: ``Gpu``; GPS: ``Gps``; MEMORY: ``Ddr``, ``MemoryInterface``;
  MACHINE_LEARNING: ``Tpu``; NETWORK: ``Aoc``, ``Radio``, ``VsysPwrMmwave``, ``Wifi``, ``Modem``;
  UNCATEGORIZED: none of them); its energy and power are sums over its components.

Where we differ, on purpose: Macrobenchmark divides µWs by whole milliseconds and calls the
result "Uw" (numerically mW); ``power_uw`` here is µWs / s, µW proper — 1000 × its number (the
truncation of the span to whole ms aside). A counter that goes backwards (a reset) would make
``max - min`` count energy that was never used: the increase is summed reading to reading and a
decrease adds nothing (counted in ``resets`` and the warnings); without resets the two agree.

Windows: the whole trace (``trace``), then every Macrobenchmark measure section
(:data:`SECTION_NAMES`) in order, then every slice the user named (``--section NAME``).
"""

from __future__ import annotations

from nodes.perf.metrics.slice_find import find_slices, name_ids, named_sections
from nodes.perf.model import MissingData, PerfData, PowerRail, PowerStats, PowerWindow

#: Macrobenchmark's PowerMetric.MEASURE_BLOCK_SECTION_NAME: the section it measures.
SECTION_NAMES = ("measureBlock",)

#: PowerMetric categories → the subsystem names a component's name is matched against (PowerQuery).
CATEGORY_SUBSYSTEMS: dict[str, tuple[str, ...]] = {
    "CPU": ("Cpu",),
    "DISPLAY": ("Display",),
    "GPU": ("Gpu",),
    "GPS": ("Gps",),
    "MEMORY": ("Ddr", "MemoryInterface"),
    "MACHINE_LEARNING": ("Tpu",),
    "NETWORK": ("Aoc", "Radio", "VsysPwrMmwave", "Wifi", "Modem"),
    "UNCATEGORIZED": (),
}

CAPTURE = """data_sources { config { name: "android.power"
  android_power_config { battery_poll_ms: 250 collect_power_rails: true
    battery_counters: BATTERY_COUNTER_CHARGE battery_counters: BATTERY_COUNTER_CURRENT } } }"""


def component_name(track: str) -> str:
    """Macrobenchmark's name for a rail's track: ``power.rails.cpu.big`` → ``CpuBig``; a rail
    trace_processor has no friendly name for keeps its own (``power.L15M_VDD_SLC_M_uws`` →
    ``L15M_VDD_SLC_M``)."""
    if track.startswith("power.rails."):
        return "".join(p[:1].upper() + p[1:] for p in track[len("power.rails."):].split(".") if p)
    name = track[len("power."):] if track.startswith("power.") else track
    return name[: -len("_uws")] if name.endswith("_uws") else name


def category_of(component: str) -> str:
    for category, subsystems in CATEGORY_SUBSYSTEMS.items():
        if any(s in component for s in subsystems):
            return category
    return "UNCATEGORIZED"


def _sections(pd: PerfData) -> list[tuple[str, float, float]]:
    """(name, start µs, end µs) of every measure section, thread or async, by start."""
    ids = name_ids(pd, lambda s: s in SECTION_NAMES)
    return [(pd.strings[n], ts, ts + dur) for _k, ts, dur, n in find_slices(pd, ids, thread=True, async_=True)]


def _rail_energy(rail: PowerRail, start: float, end: float) -> tuple[float, float, int] | None:
    """(energy µWs, reading span s, resets) of one rail over [start, end] µs; None with < 2 readings."""
    prev = None
    first = last = None
    energy = 0.0
    resets = 0
    for ts, v in zip(rail.ts_us, rail.energy_uws):
        if ts < start:
            continue
        if ts > end:
            break
        if prev is not None:
            if v >= prev:
                energy += v - prev
            else:
                resets += 1
        else:
            first = ts
        prev, last = v, ts
    if first is None or last is None or last <= first:
        return None
    return energy, (last - first) / 1e6, resets


def _battery(pd: PerfData, start: float, end: float) -> tuple[float, float] | None:
    vals = [v for ts, v in pd.counters.get("batt.charge_uah", []) if start <= ts <= end]
    if not vals:
        return None
    return max(vals) / 1000.0, min(vals) / 1000.0


def window(pd: PerfData, name: str, start: float, end: float, t0: float,
           resets: dict[str, int] | None = None) -> PowerWindow | None:
    """One window's energy; None when no rail has two readings inside it and no battery charge."""
    rails: dict[str, float] = {}
    categories: dict[str, float] = {}
    category_power: dict[str, float] = {}
    total_power = 0.0
    spans: list[float] = []
    for rail in pd.power_rails:
        got = _rail_energy(rail, start, end)
        if got is None:
            continue
        energy, span_s, n_resets = got
        comp = component_name(rail.name)
        if n_resets and resets is not None:
            resets[comp] = max(resets.get(comp, 0), n_resets)
        power = energy / span_s
        spans.append(span_s * 1000.0)
        rails[comp] = round(energy, 3)
        cat = category_of(comp) if rail.described else "UNCATEGORIZED"
        categories[cat] = round(categories.get(cat, 0.0) + energy, 3)
        category_power[cat] = round(category_power.get(cat, 0.0) + power, 3)
        total_power += power
    battery = _battery(pd, start, end)
    if not rails and battery is None:
        return None
    w = PowerWindow(
        name=name, start_ms=round((start - t0) / 1000.0, 3), dur_ms=round((end - start) / 1000.0, 3),
        energy_uws=round(sum(rails.values()), 3), power_uw=round(total_power, 3),
        reading_span_ms=(round(min(spans), 3), round(max(spans), 3)) if spans else None,
        categories=dict(sorted(categories.items(), key=lambda kv: -kv[1])),
        category_power_uw=dict(sorted(category_power.items(), key=lambda kv: -kv[1])),
        rails=dict(sorted(rails.items(), key=lambda kv: -kv[1])),
    )
    if battery is not None:
        w.battery_start_mah, w.battery_end_mah = round(battery[0], 3), round(battery[1], 3)
        w.battery_diff_mah = round(battery[0] - battery[1], 3)
    return w


def _reading_interval_ms(pd: PerfData) -> float | None:
    """The median time between a rail's readings (the first rail with several), ms."""
    for rail in pd.power_rails:
        ts = sorted(set(rail.ts_us))
        if len(ts) > 1:
            gaps = sorted(b - a for a, b in zip(ts, ts[1:]))
            return gaps[len(gaps) // 2] / 1000.0
    return None


def power(ctx) -> PowerStats | None:
    """The power lens: None when the data holds neither rails nor battery counters and is not a
    Perfetto trace (where their absence is worth saying)."""
    pd: PerfData = ctx.pd
    has_battery = "batt.charge_uah" in pd.counters
    if not pd.power_rails and not has_battery:
        if pd.format != "perfetto":
            return None
        return PowerStats(missing=[MissingData(
            what="energy per rail and category",
            why="the trace has no power_rails packets (ODPM) and no battery counters",
            capture=CAPTURE,
        )])
    out = PowerStats()
    for rail in pd.power_rails:
        out.rails[component_name(rail.name)] = [rail.name, rail.raw_name, rail.subsystem]
    start = pd.start_us if pd.start_us is not None else 0.0
    end = pd.end_us if pd.end_us is not None else start
    w = window(pd, "trace", start, end, ctx.t0, out.resets)
    if w is not None:
        out.windows.append(w)
    named, unknown = named_sections(pd, [n for n in ctx.sections if n not in SECTION_NAMES])
    for name, s, e in _sections(pd):
        w = window(pd, name, s, e, ctx.t0, out.resets)
        if w is not None:
            out.windows.append(w)
    short: dict[str, str] = {}
    for name, s, e in named:
        w = window(pd, name, s, e, ctx.t0, out.resets)
        if w is not None and (w.rails or not pd.power_rails):
            out.windows.append(w)
        else:  # a slice shorter than the rails' reading interval: no energy can be read for it
            every = _reading_interval_ms(pd)
            span = f"{(e - s) / 1000.0:.1f} ms at {(s - ctx.t0) / 1000.0:.1f} ms"
            few = f"fewer than two readings of any rail{f' (they come every {every:.0f} ms)' if every else ''}"
            short.setdefault(name, f"its {span} hold {few}")
            ctx.res.warnings.append(f"power: section {name!r} ({span}) holds {few}; no energy for it")
    measured = {w.name for w in out.windows}
    for name in ctx.sections:
        if name in measured:
            out.named[name] = None
        elif name in unknown or name in SECTION_NAMES:
            out.named[name] = "no slice of that name in the trace"
        else:
            out.named[name] = short.get(name, "no energy could be read for it")
    if out.resets:
        named = ", ".join(f"{k} ×{v}" for k, v in sorted(out.resets.items()))
        ctx.res.warnings.append(f"power rails: counter went backwards (reset) in {named}; "
                                "the energy across a reset is not counted")
    if not pd.power_rails:
        out.missing.append(MissingData(what="energy per rail and category",
                                       why="the trace has battery counters but no power rails (ODPM)",
                                       capture=CAPTURE))
    return out


def lead_window(p: PowerStats) -> PowerWindow | None:
    """The window the power answer leads with: the first section the user named that was
    measured, else Macrobenchmark's measureBlock (the first section), else the whole trace."""
    for name, why in p.named.items():
        if why is None:
            w = next((x for x in p.windows if x.name == name), None)
            if w is not None:
                return w
    return next((x for x in p.windows if x.name != "trace"), p.windows[0] if p.windows else None)


def _window_sentence(w: PowerWindow) -> str:
    if not w.categories:
        return (f"{w.name}: battery {w.battery_start_mah} → {w.battery_end_mah} mAh "
                f"({w.battery_diff_mah} mAh used); no power rails recorded")
    top = ", ".join(f"{k} {v / 1e6:.3f} J" for k, v in list(w.categories.items())[:4])
    # PowerMetric's mean power divides each rail's energy by the time between its first and last
    # reading in the window (androidx PowerQuery.kt), not by the window: say which span it is, or
    # "1.198 J in 1.84 s, 745.8 mW" reads as arithmetic that does not add up.
    over = ""
    if w.reading_span_ms is not None and abs(w.reading_span_ms[1] - w.dur_ms) > 0.005 * w.dur_ms:
        lo, hi = w.reading_span_ms
        span = f"{hi / 1000:.2f} s" if round(lo / 10) == round(hi / 10) else f"{lo / 1000:.2f}–{hi / 1000:.2f} s"
        over = f" over the {span} between the rails' first and last readings in it"
    return (f"{w.name} ({w.dur_ms / 1000:.2f} s): {w.energy_uws / 1e6:.3f} J, "
            f"{w.power_uw / 1000:.1f} mW on average{over}; by category {top}")


def summarize_power(p: PowerStats | None) -> str:
    """One sentence with the numbers: the lead window's energy by category (a lens can lead
    with it). A section the user named comes first — its energy, or why there is none — and
    then the window the answer would have led with."""
    if p is None or not p.windows:
        return "No power data: the trace has no power rails or battery counters."
    w = lead_window(p)
    first_named = next(iter(p.named.items()), None)
    if first_named is not None and first_named[1] is not None:  # named, but no energy for it
        name, why = first_named
        return f"{name}: no energy — {why}; {_window_sentence(w)}."
    s = _window_sentence(w)
    if first_named is not None and w.name == first_named[0]:
        other = next((x for x in p.windows if x.name != "trace" and x.name != w.name), None) or \
            next((x for x in p.windows if x.name == "trace"), None)
        if other is not None:
            s += f"; {other.name} ({other.dur_ms / 1000:.2f} s): {other.energy_uws / 1e6:.3f} J"
    return s + "."
