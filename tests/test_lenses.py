"""The lens mechanism's pure parts: the lens of a message (both languages, the scope rules), the
lens table and its recipes (each Perfetto config parses with the ``perfetto`` package's
TraceConfig proto), rule 8 on a thread, the route policy and the replay of older decision logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import text_format
from perfetto.protos.perfetto.trace import perfetto_trace_pb2

from app.replay import replay
from graph.enums import LENS_ALIASES, Lens, Node, lens_named
from graph.policy import GuardView, RouteView, choose_next_after_orchestrator, replay_decision
from nodes.perf.containers import CONTAINERS, is_container
from nodes.perf.lenses import LENSES, in_lens, spec
from nodes.perf.recipes import RECIPES
from nodes.routing import route_message
from nodes.routing.lens import lens_of
from nodes.routing.thread_rule import applies

ROOT = Path(__file__).resolve().parent.parent

CASES = [
    # the questions
    ("分析一下这份启动 trace，启动为什么慢", Lens.STARTUP),
    ("这个页面加载为什么慢？", Lens.PAGE),
    ("這個頁面載入為什麼慢？", Lens.PAGE),
    ("why is scrolling janky?", Lens.SCROLL),
    ("where does the CPU time go?", Lens.CPU),
    ("这次测试耗电多少，哪个部件最耗电？", Lens.POWER),
    ("這次測試耗電多少？", Lens.POWER),
    ("why is the thread blocked?", Lens.BLOCKING),
    ("那内存呢？", Lens.MEMORY),
    ("那記憶體呢？", Lens.MEMORY),
    ("and the CPU?", Lens.CPU),
    ("what about power during the test?", Lens.POWER),
    ("最慢的一帧是哪一帧", Lens.FRAMES),
    ("測一下FPS", Lens.FRAMES),
    ("what is the total blocking time of the page?", Lens.PAGE),
    ("主线程在等什么锁？", Lens.BLOCKING),
    # a metric asked about during a phase: the metric
    ("启动时的 CPU 占用", Lens.CPU),
    ("memory while scrolling", Lens.MEMORY),
    # scope: a set-aside lens does not count
    ("不用管启动，看看内存", Lens.MEMORY),
    ("not the CPU, the frames", Lens.FRAMES),
    ("别看内存了，看看启动", Lens.STARTUP),
    ("skip the startup, how is the battery?", Lens.POWER),
    # nothing named
    ("分析一下 trace.json", Lens.OVERVIEW),
    ("帮我全面分析一下 examples/slow_app.py", Lens.OVERVIEW),
    ("", Lens.OVERVIEW),
]


@pytest.mark.parametrize("text,lens", CASES)
def test_the_lens_of_a_message(text, lens):
    assert lens_of(text) is lens


def test_route_records_the_lens_and_leaves_the_label_alone():
    info = route_message("不用管启动，看看内存")
    assert info["lens"] == "memory" and info["route"] == "android"  # rule 5 off a thread
    assert route_message("分析一下这份启动 trace，启动为什么慢")["route"] == "analyze"


def test_every_lens_has_one_row_with_a_reader_and_a_recipe_that_exists():
    assert set(LENSES) == set(Lens)
    for lens, row in LENSES.items():
        assert row.lens is lens and row.metrics and row.needs and callable(row.read)
        if lens is not Lens.OVERVIEW:
            assert row.words and row.recipe is not None and row.recipe.key in RECIPES and row.families
    assert spec("web").lens is Lens.PAGE and spec("nonsense").lens is Lens.OVERVIEW
    assert in_lens("page", "page") and not in_lens("hotspots", "page") and not in_lens(None, "cpu")


def test_old_focus_names_are_lenses():
    assert {k: v.value for k, v in LENS_ALIASES.items()} == {"web": "page", "all": "overview", "hotspots": "cpu"}
    assert lens_named(" Memory ") is Lens.MEMORY
    with pytest.raises(ValueError):
        lens_named("everything")


@pytest.mark.parametrize("key", sorted(k for k, r in RECIPES.items() if r.config))
def test_each_perfetto_config_parses_with_the_trace_config_proto(key):
    cfg = text_format.Parse(RECIPES[key].config, perfetto_trace_pb2.TraceConfig())
    names = [ds.config.name for ds in cfg.data_sources]
    assert names and cfg.duration_ms > 0
    text = RECIPES[key].text()
    assert text.startswith("# save as config.pbtx") and "adb shell perfetto --txt -c -" in text


def test_the_recipes_record_what_their_lens_needs():
    def cfg(key):
        return text_format.Parse(RECIPES[key].config, perfetto_trace_pb2.TraceConfig())

    assert "am" in cfg("startup").data_sources[0].config.ftrace_config.atrace_categories
    assert any(ds.config.name == "android.surfaceflinger.frametimeline" for ds in cfg("frames").data_sources)
    power = next(ds.config for ds in cfg("power").data_sources if ds.config.name == "android.power")
    assert power.android_power_config.collect_power_rails
    assert "sched/sched_blocked_reason" in cfg("blocking").data_sources[0].config.ftrace_config.ftrace_events
    assert "kmem/rss_stat" in cfg("memory").data_sources[0].config.ftrace_config.ftrace_events


def test_every_system_trace_recipe_has_the_shared_stanzas():
    """What nodes/perf/recipes.py's config builder writes into every recipe: one ring buffer, the
    process list polled, and atrace for every app wherever atrace categories are recorded."""
    for key, recipe in RECIPES.items():
        if not recipe.config:
            continue
        cfg = text_format.Parse(recipe.config, perfetto_trace_pb2.TraceConfig())
        assert [b.fill_policy for b in cfg.buffers] == [perfetto_trace_pb2.TraceConfig.BufferConfig.RING_BUFFER], key
        by_name = {ds.config.name: ds.config for ds in cfg.data_sources}
        assert len(by_name) == len(cfg.data_sources), key  # no source twice
        if "track_event" not in by_name:  # the system's own sources, not Chrome's
            assert by_name["linux.process_stats"].process_stats_config.scan_all_processes_on_start, key
        ftrace = by_name.get("linux.ftrace")
        if ftrace is not None and ftrace.ftrace_config.atrace_categories:
            assert list(ftrace.ftrace_config.atrace_apps) == ["*"], key


def test_containers_are_task_runners_and_a_frame_is_not_one():
    for name in ("RunTask", "ThreadControllerImpl::RunTask", "ThreadPool_RunTask", "MessageLoop::RunTask",
                 "TaskQueueManager::ProcessTaskFromWorkQueue", "Scheduler::RunNextTask", "Looper.dispatchMessage"):
        assert is_container(name) and CONTAINERS[name]
    assert not is_container("Choreographer#doFrame") and not is_container("DrawFrame")


_INFO_END = {"route": "end", "tier": "rule", "lens": "memory"}


@pytest.mark.parametrize("text,info,kw,expected", [
    ("那内存呢？", {"route": "android", "tier": "rule", "lens": "memory"}, {}, True),
    ("and the CPU?", {"route": "end", "tier": "default", "lens": "cpu"}, {}, True),
    ("最慢的一帧是哪一帧", {"route": "end", "tier": "rule", "lens": "frames"}, {"followup": True}, True),
    # no analysis on the thread: rules 1–7 decide
    ("那内存呢？", {"route": "android", "tier": "rule", "lens": "memory"}, {"has_analysis": False}, False),
    # collecting on the device stays the device's
    ("采集一下内存", {"route": "android", "tier": "rule", "lens": "memory"}, {}, False),
    ("dump meminfo of com.demo.shop", {"route": "android", "tier": "rule", "lens": "memory"}, {"names_target": True}, False),
    ("现在手机上的内存", {"route": "android", "tier": "rule", "lens": "memory"}, {}, False),
    # rule 1 and rule 2 come first
    ("搜一下内存相关的代码", {"route": "explorer", "tier": "rule", "lens": "memory"}, {}, False),
    ("看看 other.pftrace 的内存", {"route": "analyze", "tier": "rule", "lens": "memory"}, {"names_data": True}, False),
    # advice is about the world, not this data
    ("怎么优化内存", {"route": "end", "tier": "rule", "lens": "memory"}, {}, False),
    # a measurement the user asks for is no follow-up
    ("measure the startup again", {"route": "startup", "tier": "rule", "lens": "startup"}, {}, False),
    ("再跑一次启动", {"route": "end", "tier": "classifier", "lens": "startup"}, {}, False),
    # no other aspect, no recognised question
    ("你好", {"route": "end", "tier": "rule", "lens": "overview"}, {}, False),
])
def test_rule_8_on_a_thread(text, info, kw, expected):
    args = {"has_analysis": True, "names_data": False, "names_target": False, "followup": False, **kw}
    assert applies(info, text, **args) is expected


def test_an_analyze_turn_on_the_threads_data_goes_straight_to_the_reporter():
    guard = GuardView(1, 24, ("orchestrator:analyze",))
    assert choose_next_after_orchestrator(RouteView("analyze", guard, thread_data=True)).step is Node.REPORTER
    assert choose_next_after_orchestrator(RouteView("analyze", guard)).step is Node.DATA_LOCATOR
    assert choose_next_after_orchestrator(RouteView("android", guard, thread_data=True)).step is Node.ANDROID_EXPERT


def test_decision_logs_before_the_lens_still_replay():
    # the migration fixture: records of schemas 1–3, written before "lens" and "thread_data"
    records = [json.loads(x) for x in (ROOT / "tests/data/migration/decisions.jsonl").read_text().splitlines() if x.strip()]
    rep = replay(records)
    assert rep.checked == len(records) and rep.unreadable == 0
    old = next(r for r in records if r["policy"] == "choose_next_after_orchestrator")
    assert "thread_data" not in old["input"] and "lens" not in old
    new = {**old["input"], "route": "analyze", "thread_data": True}
    assert replay_decision("choose_next_after_orchestrator", new).step is Node.REPORTER


def test_docs_list_every_lens_recipe_and_container():
    doc = (ROOT / "docs/analyzer.md").read_text(encoding="utf-8")
    for lens in Lens:
        assert f"| `{lens.value}` |" in doc
    for key in RECIPES:
        assert f"`{key}`:" in doc
    for name in CONTAINERS:
        assert f"| `{name}` |" in doc


@pytest.fixture(scope="module")
def warm():
    """The analysis of a real warm-start capture (tests/data/perfetto/SOURCES.md)."""
    from nodes.perf.analysis import analyze_paths

    return analyze_paths([str(ROOT / "tests/data/perfetto/api32_startup_warm.perfetto-trace")])


def test_a_capture_without_the_launch_answers_from_the_apps_own_sections(warm):
    from nodes.perf import lens_readers as rd

    import msgspec

    app_only = msgspec.structs.replace(warm, startup=msgspec.structs.replace(
        warm.startup, runs=[r for r in warm.startup.runs if not r.package], median_ms=None))
    r = rd.startup(app_only)
    assert r.lead.startswith("This trace cannot tell the launch time: no launch events") and r.recipe == "startup"
    assert r.partial[0].startswith("the app's first traced section is activityDestroy at 478 ms")
    assert r.partial[-1] == "first frames: at 613 ms (10.8 ms), at 636 ms (2.33 ms)"
    assert not r.numbers  # nothing estimated
    # with the launch, the lens leads with Macrobenchmark's numbers (../shared/traces/REFERENCE.md)
    assert rd.startup(warm).numbers["ttid_ms"] == pytest.approx(154.63, rel=0.01)


def test_every_reader_answers_or_says_what_is_missing(warm):
    for lens, row in LENSES.items():
        r = row.read(warm)
        if lens is Lens.OVERVIEW:
            assert r is None
            continue
        assert r.lens == lens.value and r.lead and "\n" not in r.lead
        assert r.numbers or r.missing or r.not_read, lens  # never silent
        if r.missing and not r.numbers:
            assert r.recipe in RECIPES
