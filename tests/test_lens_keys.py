"""The lens keys of ``perfscout compare`` / ``check``: cpu."<process>".<field>,
power."<window>".<field>, memory."<process>".rss_max_mb, blocking.<field> — named, quoted and
directed as nodes/compare/keys.py does for hot spots."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app import check_cmd
from nodes.compare.budgets import parse_budgets
from nodes.compare.keys import KeyError_, info, parse_key
from nodes.compare.samples import extract, process_names

DATA = Path(__file__).parent / "data" / "perfetto"
WARM = DATA / "api32_startup_warm.perfetto-trace"
APP = "androidx.benchmark.integration.macrobenchmark.target"


@pytest.mark.parametrize("key, unit", [
    ('cpu."system_server".running_ms', "ms"),
    ('cpu."com.app".share_of_cpus', "ratio"),
    ('power."measureBlock".energy_uws', "µWs"),
    ("power.trace.power_uw", "µW"),
    ('power.trace.categories."CPU"', "µWs"),
    ('memory."com.app".rss_max_mb', "MB"),
    ('memory."com.app".gc_ms', "ms"),
    ('memory."com.app".gc_pause_ms', "ms"),
    ('memory."com.app".gc_wait_ms', "ms"),
    ('memory."com.app"."mem.rss.anon".growth', ""),
    ("blocking.binder_ms", "ms"),
    ("blocking.io_wait_ms", "ms"),
    ("scroll.janky_ratio", "ratio"),
    ("scroll.latency_p99_ms", "ms"),
])
def test_lens_keys_are_known_and_lower_is_better(key, unit):
    mi = info(parse_key(key))
    assert (mi.direction, mi.unit) == ("lower", unit)


@pytest.mark.parametrize("key", ['cpu."x".busy_ms', "cpu.running_ms", 'power."trace".joules', "blocking.gc_ms",
                                 'memory."x"."mem.rss".max'])
def test_a_typo_in_a_lens_key_is_bad_usage(key):
    with pytest.raises(KeyError_):
        info(parse_key(key))


def test_process_names_get_their_pid_only_where_names_repeat():
    rows = [{"pid": 1, "name": "a"}, {"pid": 2, "name": "b"}, {"pid": 3, "name": "a"}]
    assert process_names(rows) == ["a (1)", "b", "a (3)"]


@pytest.fixture(scope="module")
def warm_json():
    from nodes.perf.analysis import analyze_file

    return analyze_file(str(WARM)).model_dump(mode="json")


def test_extracted_values_are_the_analysis_numbers(warm_json):
    s = extract(warm_json)
    mb = next(w for w in warm_json["power"]["windows"] if w["name"] == "measureBlock")
    assert s['power.measureBlock.energy_uws'] == [mb["energy_uws"]]
    assert s["power.measureBlock.categories.CPU"] == [mb["categories"]["CPU"]]
    app_cpu = next(p for p in warm_json["cpu"]["processes"] if p["name"] == APP)
    assert s[f'cpu."{APP}".running_ms'] == [app_cpu["running_ms"]]
    app_mem = warm_json["memory"]["processes"][0]
    assert s[f'memory."{APP}".rss_max_mb'] == [app_mem["rss_max_mb"]]
    assert f'memory."{APP}"."Heap size (KB)".peak' in s
    assert s["blocking.binder_ms"] == [warm_json["blocking"]["binder_ms"]]
    # bounded: the app and the five busiest other processes
    assert len({k.split(".")[1] for k in s if k.startswith("cpu.")}) <= 6


def test_check_budgets_on_lens_keys(tmp_path):
    f = tmp_path / "b.toml"
    f.write_text(
        '[budgets]\n'
        "'power.\"measureBlock\".energy_uws' = 2000000\n"
        "'power.measureBlock.categories.CPU' = 100\n"
        f"'cpu.\"{APP}\".running_ms' = 1000\n"
        f"[budgets.memory.\"{APP}\"]\nrss_max_mb = 200\n"
        "[budgets.blocking]\nbinder_ms = 100\n"
    )
    assert {b.key for b in parse_budgets(__import__("tomllib").loads(f.read_text())["budgets"], str(f)).items} >= {
        f'memory."{APP}".rss_max_mb', "blocking.binder_ms"}
    out = io.StringIO()
    code = check_cmd.run(str(WARM), stdout=out, budgets_file=str(f), as_json=True)
    got = {r["key"]: r["status"] for r in json.loads(out.getvalue())["results"]}
    assert code == 1
    assert got == {
        "power.measureBlock.energy_uws": "pass", "power.measureBlock.categories.CPU": "fail",
        f'cpu."{APP}".running_ms': "pass", f'memory."{APP}".rss_max_mb': "pass", "blocking.binder_ms": "pass",
    }


def test_a_collection_keeps_the_lens_fields_of_its_trace():
    from nodes.perf.analysis import analyze_paths

    res = analyze_paths([str(WARM), str(Path(__file__).parent / "data" / "perf" / "slowapp.pstats")])
    assert res.power is not None and res.power.windows[0].name == "trace"
    assert res.cpu is not None and res.memory is not None and res.blocking is not None


def test_scroll_keys_from_the_chrome_capture():
    from nodes.perf.analysis import analyze_file

    a = analyze_file(str(Path(__file__).parent / "data" / "web" / "scroll.trace.json.gz")).model_dump(mode="json")
    s = extract(a)
    assert s["scroll.janky_frames"] == [a["scroll"]["janky_frames"]]
    assert s["scroll.latency_p99_ms"] == [a["scroll"]["latency_p99_ms"]]
    assert info(parse_key("scroll.update_count")).direction is None


def test_gc_pause_and_wait_keys_are_the_gc_summarys():
    """api24's one GC (tests/test_lens_memory.py checks its numbers against the decoded capture)."""
    from nodes.perf.analysis import analyze_file

    js = analyze_file(str(DATA / "api24_startup_cold.perfetto-trace")).model_dump(mode="json")
    gc = next(p for p in js["memory"]["processes"] if p["gc"])
    s = extract(js)
    name = gc["name"]
    assert s[f'memory."{name}".gc_pause_ms'] == [gc["gc"]["pause_ms"]] and gc["gc"]["pause_ms"] > 0
    assert s[f'memory."{name}".gc_wait_ms'] == [gc["gc"]["main_thread_wait_ms"]]
