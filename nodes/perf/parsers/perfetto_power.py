"""ODPM power rails and battery counters (``power_rails`` and ``battery`` packets).

Read as trace_processor imports them (``src/trace_processor/importers/proto/
android_probes_module.cc`` in the perfetto repository):

* a ``RailDescriptor`` names rail ``index`` (``rail_name``, ``subsys_name``); the counter track
  is ``power.rails.<friendly>`` for the rails trace_processor knows (:data:`FRIENDLY_RAILS`),
  ``power.<rail_name>_uws`` otherwise. Descriptors are global, not scoped to a sequence.
* each ``EnergyData`` is one reading of a rail's energy counter (µWs since boot), stamped
  ``timestamp_ms × 10⁶`` ns when it has ``timestamp_ms``, else with its packet's time.
* ``BatteryCounters`` become the counters ``batt.charge_uah``, ``batt.capacity_pct``,
  ``batt.current_ua``, ``batt.current.avg_ua``, ``batt.voltage_uv``, ``batt.energy_counter_uwh``
  (with ``.<name>`` appended when the packet names its battery).

Bad input is counted, never fatal: readings of a rail that no descriptor named are kept under
``power.rail<index>`` and reported; a descriptor index trace_processor would reject (> 256)
is skipped and reported.
"""

from __future__ import annotations

from array import array
from nodes.perf.model import PerfData, PowerRail
from nodes.perf.units import counted

#: Rail names trace_processor maps to friendly counter names (MapToFriendlyPowerRailName).
FRIENDLY_RAILS: dict[str, str] = {
    "S4M_VDD_CPUCL0": "cpu.little",
    "S3M_VDD_CPUCL1": "cpu.mid",
    "S2M_VDD_CPUCL2": "cpu.big",
    "S5M_VDD_INT": "system.fabric",
    "S10M_VDD_TPU": "tpu",
    "PPVAR_VSYS_PWR_DISP": "display",
    "VSYS_PWR_DISPLAY": "display",
    "VSYS_PWR_MODEM": "modem",
    "S1M_VDD_MIF": "memory.interface",
    "VSYS_PWR_WLAN_BT": "wifi.bt",
    "L2S_VDD_AOC_RET": "aoc.memory",
    "S9S_VDD_AOC": "aoc.logic",
    "S5S_VDDQ_MEM": "ddr.a",
    "S10S_VDD2L": "ddr.b",
    "S4S_VDD2H_MEM": "ddr.c",
    "S2S_VDD_G3D": "gpu",
    "L9S_GNSS_CORE": "gps",
    "VSYS_PWR_RFFE": "radio.frontend",
}
#: trace_processor skips descriptors with a larger index.
MAX_RAIL_INDEX = 256
#: At most this many readings are kept per rail (bounded memory; a 1 kHz rail for an hour).
MAX_RAIL_POINTS = 200_000

#: BatteryCounters field → trace_processor's counter name and its unit.
BATTERY_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("charge_counter_uah", "batt.charge_uah", "µAh"),
    ("capacity_percent", "batt.capacity_pct", "%"),
    ("current_ua", "batt.current_ua", "µA"),
    ("current_avg_ua", "batt.current.avg_ua", "µA"),
    ("voltage_uv", "batt.voltage_uv", "µV"),
    ("energy_counter_uwh", "batt.energy_counter_uwh", "µWh"),
)


def track_name(rail_name: str) -> str:
    """The counter track trace_processor gives a rail."""
    friendly = FRIENDLY_RAILS.get(rail_name)
    return f"power.rails.{friendly}" if friendly else f"power.{rail_name}_uws"


class PowerState:
    """Rail descriptors and readings, and battery counters, until :meth:`finish`."""

    def __init__(self) -> None:
        #: index → (rail_name, subsys_name)
        self.descriptors: dict[int, tuple[str, str]] = {}
        #: index → (ts_ns column, energy column)
        self.readings: dict[int, tuple[array, array]] = {}
        self.battery: dict[str, list[tuple[int, float]]] = {}
        self.bad_index = 0
        self.dropped = 0
        self.packets = 0

    def rails(self, rails, packet_ts: int, to_ns) -> None:
        """One ``PowerRails`` packet; ``to_ns(ns)`` maps a boot-clock time onto the trace clock."""
        self.packets += 1
        for d in rails.rail_descriptor:
            if d.index > MAX_RAIL_INDEX:
                self.bad_index += 1
                continue
            self.descriptors[d.index] = (d.rail_name, d.subsys_name)
        for e in rails.energy_data:
            ts = to_ns(e.timestamp_ms * 1_000_000) if e.HasField("timestamp_ms") else packet_ts
            cols = self.readings.get(e.index)
            if cols is None:
                cols = self.readings[e.index] = (array("q"), array("d"))
            if len(cols[0]) >= MAX_RAIL_POINTS:
                self.dropped += 1
                continue
            cols[0].append(ts)
            cols[1].append(float(e.energy))

    def battery_packet(self, b, ts: int) -> None:
        suffix = f".{b.name}" if b.name else ""
        for field, name, _unit in BATTERY_COUNTERS:
            if b.HasField(field):
                self.battery.setdefault(name + suffix, []).append((ts, float(getattr(b, field))))

    def finish(self, data: PerfData) -> None:
        undescribed: list[int] = []
        for index in sorted(self.readings):
            ts, energy = self.readings[index]
            order = sorted(range(len(ts)), key=ts.__getitem__)
            desc = self.descriptors.get(index)
            if desc is None:
                undescribed.append(index)
                raw, subsystem, name = f"rail{index}", "", f"power.rail{index}"
            else:
                raw, subsystem = desc
                name = track_name(raw)
            data.add_power_rail(PowerRail(
                name=name, raw_name=raw, subsystem=subsystem, described=desc is not None,
                ts_us=array("d", [ts[i] / 1000.0 for i in order]),
                energy_uws=array("d", [energy[i] for i in order]),
            ))
            if ts:
                data.extend_bounds(ts[order[0]] / 1000.0, ts[order[-1]] / 1000.0)
        units = {name: unit for _f, name, unit in BATTERY_COUNTERS}
        for name, pts in sorted(self.battery.items()):
            unit = next((u for n, u in units.items() if name == n or name.startswith(n + ".")), None)
            for ts_ns, value in sorted(pts):
                data.add_counter(name, ts_ns / 1000.0, value, unit)
        if undescribed:
            data.warn(
                f"power rails: {counted(len(undescribed), 'rail')} had readings but no descriptor "
                f"(index {', '.join(map(str, undescribed[:8]))}): kept as power.rail<index>, no category"
            )
        if self.bad_index:
            data.warn(f"power rails: {counted(self.bad_index, 'descriptor')} with an index above {MAX_RAIL_INDEX} were skipped")
        if self.dropped:
            data.warn(f"power rails: {self.dropped:,} readings beyond {MAX_RAIL_POINTS:,} per rail were not kept")
        data.meta.note("perfetto.power_rails", str(len(data.power_rails)))

