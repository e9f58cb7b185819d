"""Thread labels (nodes/perf/model.py ``PerfData.thread_label``): a process's main thread whose
name is only the process name cut to Linux's 15-character comm reads "main thread (<process>
<pid>)", not "enchmark.target (androidx.benchmark.integration.macrobenchmark.target 7694)"."""

from __future__ import annotations

from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from nodes.perf import formats
from nodes.perf.model import PerfData

COLD = Path(__file__).parent / "data" / "perfetto" / "api24_startup_cold.perfetto-trace"


def _pd(procs: dict[int, str], threads: dict[tuple[int, int], str | None]) -> PerfData:
    pd = PerfData("t", "t")
    for pid, name in procs.items():
        pd.set_process_name(pid, name)
    for (pid, tid), name in threads.items():
        pd.thread(pid, tid)
        if name is not None:
            pd.set_thread_name(pid, tid, name)
    return pd


@pytest.mark.parametrize("proc, thread, want", [
    ("androidx.benchmark.integration.macrobenchmark.target", "enchmark.target", "main thread"),  # Android: last 15
    ("com.android.systemui", "ndroid.systemui", "main thread"),
    ("/usr/bin/python3.11-with-a-long-name", "/usr/bin/python", "main thread"),  # exec: first 15
    ("system_server", "system_server", "main thread"),
    ("system_server", None, "main thread"),
    ("Browser", "CrBrowserMain", "CrBrowserMain"),  # a name of its own stays
    ("python", "MainThread", "MainThread"),
    ("androidx.benchmark.integration.macrobenchmark.target", "benchmark.target", "benchmark.target"),  # 16 chars
])
def test_a_main_thread_named_only_by_its_cut_process_name_is_the_main_thread(proc, thread, want):
    pd = _pd({7: proc}, {(7, 7): thread, (7, 8): "RenderThread"})
    assert pd.thread_label(7, 7) == f"{want} ({proc} 7)"
    assert pd.thread_label(7, 8) == f"RenderThread ({proc} 7)"  # not the main thread: its own name


def test_without_a_process_name_the_thread_keeps_its_own():
    pd = _pd({}, {(7, 7): "enchmark.target"})
    assert pd.thread_label(7, 7) == "enchmark.target (7)"


def test_the_cold_start_capture_labels_its_apps_main_threads_by_their_process():
    """The launched app and System UI: their main threads' comm is the package's last 15
    characters; the package (cmdline) is read from the raw process tree here."""
    t = pb.Trace()
    t.ParseFromString(COLD.read_bytes())
    cmdline = {p.pid: p.cmdline[0] for pk in t.packet if pk.HasField("process_tree")
               for p in pk.process_tree.processes if p.cmdline}
    pd = formats.load(str(COLD))
    for pkg in ("androidx.benchmark.integration.macrobenchmark.target", "com.android.systemui"):
        pid = next(p for p, c in cmdline.items() if c == pkg)
        assert pd.threads[(pid, pid)].name == pkg[-15:]
        assert pd.thread_label(pid, pid) == f"main thread ({pkg} {pid})"
