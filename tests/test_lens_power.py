"""The power lens: ODPM rails → energy per rail and category, as Macrobenchmark's PowerMetric.

The reference for the shared capture is computed here, independently of the reader and the
metric: the trace is decoded packet by packet with the ``perfetto`` wheel's protos, and each
rail's energy is ``max - min`` of its readings (Macrobenchmark's PowerQuery SQL). androidx's own
PowerMetricTest asset (``api32_odpm_rails``) is not reachable, so its published numbers cannot
be asserted byte for byte; docs/analyzer.md says so.
"""

from __future__ import annotations

import os

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from nodes.perf.analysis import analyze_file
from tests.helpers.traces import trace_packets as _packets
from tests.helpers.traces import trace_start_ns as _trace_start_ns
from nodes.perf.metrics.power import category_of, component_name, summarize_power

DATA = os.path.join(os.path.dirname(__file__), "data", "perfetto")


def _shared(name: str) -> str:
    return os.path.join(DATA, name)  # tests/data/perfetto/SOURCES.md


def _reference_rails(path: str, start_ns: int | None = None, end_ns: int | None = None):
    """rail_name → max - min of its readings in [start, end] (all when None)."""
    names: dict[int, str] = {}
    values: dict[int, list[float]] = {}
    for p in _packets(path):
        if not p.HasField("power_rails"):
            continue
        for d in p.power_rails.rail_descriptor:
            names[d.index] = d.rail_name
        for e in p.power_rails.energy_data:
            ts = e.timestamp_ms * 1_000_000
            if start_ns is not None and not (start_ns <= ts <= end_ns):
                continue
            values.setdefault(e.index, []).append(float(e.energy))
    return {names[i]: max(v) - min(v) for i, v in values.items() if len(v) >= 2}


def test_component_names_and_categories_follow_power_query():
    assert component_name("power.rails.cpu.big") == "CpuBig"
    assert component_name("power.rails.memory.interface") == "MemoryInterface"
    assert component_name("power.rails.wifi.bt") == "WifiBt"
    assert component_name("power.L15M_VDD_SLC_M_uws") == "L15M_VDD_SLC_M"
    assert category_of("CpuLittle") == "CPU"
    assert category_of("DdrA") == category_of("MemoryInterface") == "MEMORY"
    assert category_of("AocLogic") == category_of("WifiBt") == category_of("RadioFrontend") == "NETWORK"
    assert category_of("Tpu") == "MACHINE_LEARNING"
    assert category_of("SystemFabric") == "UNCATEGORIZED"


def test_shared_capture_energy_per_rail_equals_an_independent_decode():
    path = _shared("api32_startup_warm.perfetto-trace")
    res = analyze_file(path)
    ref = _reference_rails(path)
    assert res.power is not None and res.power.windows[0].name == "trace"
    whole = res.power.windows[0]
    by_raw = {res.power.rails[c][1]: e for c, e in whole.rails.items()}
    assert set(by_raw) == set(ref)
    for rail, energy in ref.items():
        assert by_raw[rail] == pytest.approx(energy, rel=0.01), rail
    assert whole.energy_uws == pytest.approx(sum(ref.values()), rel=0.01)
    # the CPU category is the three CPU clusters' rails
    cpu = sum(ref[r] for r in ("S2M_VDD_CPUCL2", "S3M_VDD_CPUCL1", "S4M_VDD_CPUCL0"))
    assert whole.categories["CPU"] == pytest.approx(cpu, rel=0.01)
    assert whole.rails["CpuLittle"] == pytest.approx(ref["S4M_VDD_CPUCL0"], rel=0.01)
    # the battery did not move in 2 s: 4430 mAh at both ends
    assert (whole.battery_start_mah, whole.battery_end_mah, whole.battery_diff_mah) == (4430.0, 4430.0, 0.0)
    assert "power rails" not in res.meta.get("perfetto.not_read", "")


def test_measure_block_window_is_the_section_and_its_readings():
    path = _shared("api32_startup_warm.perfetto-trace")
    res = analyze_file(path)
    names = [w.name for w in res.power.windows]
    assert names == ["trace", "measureBlock"]
    mb = res.power.windows[1]
    stat = next(s for s in res.slice_stats if s.name == "measureBlock" and s.scope == "all")
    assert mb.start_ms == pytest.approx(stat.first_start_ms, abs=0.01)
    assert mb.dur_ms == pytest.approx(stat.first_ms, abs=0.01)
    # the readings inside the section, decoded independently (section bounds from the result)
    t0_ns = _trace_start_ns(res)
    start = t0_ns + mb.start_ms * 1e6
    ref = _reference_rails(path, start, start + mb.dur_ms * 1e6)
    total = sum(ref.values())
    assert mb.energy_uws == pytest.approx(total, rel=0.01)
    # power = energy / span of the readings: 6 readings 250 ms apart in the window ≈ 1.6 s
    assert 0.5e6 < mb.power_uw < 1e6
    assert sum(mb.category_power_uw.values()) == pytest.approx(mb.power_uw, rel=0.001)
    text = summarize_power(res.power)
    assert text.startswith("measureBlock (1.84 s)") and "CPU" in text and " J" in text


# --- bad input --------------------------------------------------------------------------


def _rails_trace(tmp_path, slice_ms: tuple[int, int] | None = None) -> str:
    """Three described rails and one without a descriptor, read at 1000…1300 ms; with
    ``slice_ms`` also a thread slice "scrollList" over that span (a section the user names)."""
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.timestamp, p.trusted_packet_sequence_id = 1_000_000_000, 3
    for index, name, sub in ((0, "S4M_VDD_CPUCL0", "CPU(LITTLE)"), (1, "VSYS_PWR_DISPLAY", "Display"),
                             (300, "S2S_VDD_G3D", "GPU")):
        d = p.power_rails.rail_descriptor.add()
        d.index, d.rail_name, d.subsys_name = index, name, sub
    readings = {
        0: [(1000, 100.0), (1100, 200.0), (1200, 50.0), (1300, 80.0)],  # reset at 1200
        1: [(1000, 10.0), (1300, 40.0)],
        7: [(1000, 5.0), (1300, 9.0)],  # no descriptor
    }
    for ms in (1000, 1100, 1200, 1300):
        p = b.add_packet()
        p.timestamp, p.trusted_packet_sequence_id = ms * 1_000_000, 3
        for index, pts in readings.items():
            for t, v in pts:
                if t == ms:
                    e = p.power_rails.energy_data.add()
                    e.index, e.timestamp_ms, e.energy = index, t, int(v)
    if slice_ms is not None:
        p = b.add_packet()
        p.trusted_packet_sequence_id = 4
        p.track_descriptor.uuid = 42
        p.track_descriptor.thread.pid, p.track_descriptor.thread.tid = 300, 300
        p.track_descriptor.thread.thread_name = "app"
        for ms, kind in zip(slice_ms, (pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END)):
            p = b.add_packet()
            p.timestamp, p.trusted_packet_sequence_id = ms * 1_000_000, 4
            p.track_event.type, p.track_event.track_uuid = kind, 42
            if kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
                p.track_event.name = "scrollList"
    path = tmp_path / "rails.perfetto-trace"
    path.write_bytes(b.serialize())
    return str(path)


def test_reset_undescribed_rail_and_bad_index_are_counted_and_the_rest_answered(tmp_path):
    res = analyze_file(_rails_trace(tmp_path))
    w = res.power.windows[0]
    # CpuLittle: +100 then a reset (nothing), then +30
    assert w.rails["CpuLittle"] == 130.0
    assert w.rails["Display"] == 30.0
    assert w.rails["rail7"] == 4.0 and w.categories["UNCATEGORIZED"] == 4.0
    assert w.categories["CPU"] == 130.0 and w.categories["DISPLAY"] == 30.0
    assert w.energy_uws == 164.0
    # power: CpuLittle 130 µWs over 0.3 s
    assert w.category_power_uw["CPU"] == pytest.approx(130 / 0.3, rel=1e-3)
    assert res.power.resets == {"CpuLittle": 1}
    text = " | ".join(res.warnings)
    assert "reset" in text and "CpuLittle" in text
    assert "no descriptor" in text and "index 7" in text
    assert "index above 256" in text


def test_a_trace_without_rails_says_what_is_missing(tmp_path):
    b = TraceProtoBuilder()
    p = b.add_packet()
    p.timestamp, p.trusted_packet_sequence_id = 1000, 3
    pr = p.process_tree.processes.add()
    pr.pid = 1
    pr.cmdline.append("init")
    path = tmp_path / "none.perfetto-trace"
    path.write_bytes(b.serialize())
    res = analyze_file(str(path))
    assert res.power is not None and not res.power.windows
    assert "power_rails" in res.power.missing[0].why and "collect_power_rails" in res.power.missing[0].capture


# --- a section the user names (perfscout analyze --section NAME) ---------------------------


def test_a_named_slice_gets_its_own_window_and_an_unknown_name_is_warned(tmp_path):
    res = analyze_file(_rails_trace(tmp_path, slice_ms=(1050, 1300)), sections=["scrollList", "noSuchSlice"])
    names = [w.name for w in res.power.windows]
    assert names == ["trace", "scrollList"]
    w = res.power.windows[1]
    # CpuLittle inside [1050, 1300]: 200 → 50 (a reset, nothing) → 80: +30; the other rails
    # have one reading inside: no energy
    assert w.rails == {"CpuLittle": 30.0} and w.energy_uws == 30.0 and w.categories == {"CPU": 30.0}
    assert (w.start_ms, w.dur_ms) == (50.0, 250.0)
    assert any("'noSuchSlice'" in x and "no slice of that name" in x for x in res.warnings)
    assert analyze_file(_rails_trace(tmp_path, slice_ms=(1050, 1300))).power.windows[-1].name == "trace"


def test_named_sections_on_the_shared_capture_power_cpu_and_the_cli(capsys):
    import json

    from app.analyze_cmd import run

    path = _shared("api32_startup_warm.perfetto-trace")
    assert run([path], as_json=True, sections=["startActivityAndWait", "measureBlock", "noSuchSlice"]) == 0
    data = json.loads(capsys.readouterr().out)
    stat = next(s for s in data["slice_stats"] if s["name"] == "startActivityAndWait")
    # the CPU section is the slice's span, its processes' time inside it
    sec = next(s for s in data["cpu"]["sections"] if s["name"] == "startActivityAndWait")
    assert sec["start_ms"] == pytest.approx(stat["first_start_ms"], abs=0.01)
    assert sec["dur_ms"] == pytest.approx(stat["max_ms"], abs=0.01)
    assert 0 < sum(p["running_ms"] for p in sec["processes"]) <= sec["dur_ms"] * data["cpu"]["cpu_count"]
    # measureBlock named again is not measured twice; the rails read every 250 ms, and the
    # 536 ms slice holds two readings with one timestamp: no energy, said so
    assert [w["name"] for w in data["power"]["windows"]] == ["trace", "measureBlock"]
    warned = " | ".join(data["warnings"])
    assert "section 'noSuchSlice': no slice of that name" in warned
    assert "power: section 'startActivityAndWait' (536.2 ms at 252.8 ms) holds fewer than two readings" in warned


# --- the power answer leads with the section the user named ------------------------------------


def test_the_answer_leads_with_the_named_section_then_the_others(tmp_path):
    import io

    from app.analyze_cmd import run

    path = _rails_trace(tmp_path, slice_ms=(1050, 1300))
    out = io.StringIO()
    assert run([path], sections=["scrollList"], out=out, err=io.StringIO()) == 0  # no --focus: power leads
    first = out.getvalue().splitlines()[0]
    # CpuLittle inside [1050, 1300]: +30 µWs over 250 ms (test above); the whole trace after it
    assert first.startswith("Energy: scrollList (0.25 s): 0.000 J") and "; trace (" in first
    res = analyze_file(path, sections=["scrollList"])
    assert res.power.named == {"scrollList": None}
    assert analyze_file(path).power.named == {}
    assert summarize_power(analyze_file(path).power).startswith("trace (")  # nothing named: as before


def test_a_named_section_without_energy_says_why_first_on_the_shared_capture():
    import io

    from app.analyze_cmd import run

    out = io.StringIO()
    path = _shared("api32_startup_warm.perfetto-trace")
    assert run([path], sections=["startActivityAndWait"], out=out, err=io.StringIO()) == 0
    first = out.getvalue().splitlines()[0]
    # the rails are read every ~250 ms; the 536 ms slice holds two readings with one timestamp
    assert first.startswith("Energy: startActivityAndWait: no energy — its 536.2 ms at 252.8 ms hold fewer than two "
                            "readings of any rail (they come every 251 ms); measureBlock (1.84 s): 1.198 J")
    res = analyze_file(path, sections=["noSuchSlice", "measureBlock"])
    assert res.power.named == {"noSuchSlice": "no slice of that name in the trace", "measureBlock": None}
    assert summarize_power(res.power).startswith("noSuchSlice: no energy — no slice of that name in the trace; "
                                                 "measureBlock (1.84 s): 1.198 J")
