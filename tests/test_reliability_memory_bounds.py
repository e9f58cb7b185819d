"""Issue 14 item 4: memory without bound. Every reader's peak RSS on hostile input < 300 MB
(issue 14 set 1 GB; issue 25 item 4 lowered it).

Each hostile input is read in a child process that reports its own peak RSS (``VmHWM``, as in
tests/test_reliability_hostile.py) with the *default* limits, installed from the environment
the way the CLI passes them (``Settings.from_env().read_limits()``):

* the issue's case: a few MB of gzip that inflate to 1 GiB of valid tiny Trace Event events
  (before: 6.5 GB peak, exit 0 with no word of it) — now the reader stops at the event cap
  and the result says it is partial and which setting raises the cap; the analysis of the
  3 M slices it keeps stays under the same bound;
* a gzip bomb (valid instant events, which are not stored past MAX_INSTANTS, so only the
  inflate cap ends the read) beyond the default cap: one line naming the cap and its setting;
* a gzip bomb of whitespace between events and after the last one: the same line;
* a speedscope file of empty stacks just under the whole-file cap (the JSON reader's worst
  bytes-to-objects ratio);
* a Perfetto trace with more events than the cap: partial, with the cap named;
* ``perfscout route --jsonl`` on ``/dev/zero`` (before: past 10 GB), on stdin fed from it,
  and on one very long line.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PERFSCOUT = ROOT / ".venv" / "bin" / "perfscout"
#: The bound every reader keeps on hostile input (issue 14 set 1 GB; issue 25 lowered it), the
#: analysis included: the 3 M slices the default event cap keeps on one thread peak at ~165 MB
#: in the reader and ~190 MB in the C slice walk (nodes/perf/metrics/_metricsc.c, hotspots._native_walk),
#: which no longer copies its input nor writes sorted copies it does not keep (455 MB before).
RSS_BOUND_MB = 300

CHILD = textwrap.dedent(
    """
    import json, sys, time
    def peak_rss_mb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    from app.settings import Settings
    bounds = Settings.from_env().read_limits()
    from nodes.perf.errors import PerfDataError
    from nodes.perf.analysis import analyze_file
    t0 = time.monotonic()
    try:
        res = analyze_file(sys.argv[1], limits=bounds)
        out = {"ok": True, "partial": res.partial, "warnings": res.warnings}
    except PerfDataError as e:
        out = {"ok": False, "error": str(e)}
    out.update(seconds=round(time.monotonic() - t0, 2), rss_mb=round(peak_rss_mb(), 1))
    print(json.dumps(out))
    """
)

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc (VmHWM)")


def _analyze_in_child(path: Path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PERFSCOUT_MAX")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=900, env=dict(clean, PYTHONPATH=str(ROOT), **env))
    assert out.returncode == 0, f"the reader crashed instead of refusing: {out.stderr[-2000:]}"
    res = json.loads(out.stdout.strip().splitlines()[-1])
    print(path.name, res)  # the figures docs/reliability.md quotes (pytest -s)
    if not res["ok"]:
        assert "\n" not in res["error"] and res["error"].strip()
    return res


def _tiny_events_gzip(path: Path, inflated_bytes: int) -> int:
    """Valid tiny X events inflating to ``inflated_bytes``: one compressed block of 100 000
    events written again and again (concatenated gzip members are one gzip stream)."""
    events = b"".join(b'{"name":"t","ph":"X","ts":%d,"dur":1,"pid":1,"tid":1},' % (i % 100) for i in range(100_000))
    block = gzip.compress(events, compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"traceEvents":['))
        for _ in range(inflated_bytes // len(events)):
            f.write(block)
        f.write(gzip.compress(b'{"name":"t","ph":"X","ts":0,"dur":1,"pid":1,"tid":1}]}'))
    return inflated_bytes // len(events) * 100_000


@pytest.mark.slow
def test_one_gib_of_tiny_events_in_a_small_gzip_stops_at_the_event_cap_under_1_gb(tmp_path):
    p = tmp_path / "tiny.json.gz"
    n = _tiny_events_gzip(p, 1024**3)
    assert p.stat().st_size < 8 * 1024**2 and n > 15_000_000
    res = _analyze_in_child(p)
    assert res["ok"] and res["partial"], res
    assert any("PERFSCOUT_MAX_EVENTS" in w for w in res["warnings"]), res
    assert res["rss_mb"] < RSS_BOUND_MB, res


def test_the_event_cap_is_a_setting(tmp_path):
    p = tmp_path / "small.json.gz"
    _tiny_events_gzip(p, 30 * 1024**2)  # ~550 000 events
    capped = _analyze_in_child(p, PERFSCOUT_MAX_EVENTS="100000")
    assert capped["ok"] and capped["partial"], capped
    assert any("100000 events" in w for w in capped["warnings"]), capped
    whole = _analyze_in_child(p)
    assert whole["ok"] and not whole["partial"], whole


def _instant_bomb(path: Path, inflated: int) -> None:
    """Valid instant events (kept only up to MAX_INSTANTS, so the event cap never stops the read):
    only the inflate cap ends it."""
    events = b'{"name":"x","ph":"i","ts":1,"pid":1,"tid":1,"s":"t"},' * 100_000
    block = gzip.compress(events, compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"traceEvents": ['))
        for _ in range(inflated // len(events) + 1):
            f.write(block)
        f.write(gzip.compress(b'{"name":"x","ph":"i","ts":1,"pid":1,"tid":1,"s":"t"}]}'))


@pytest.mark.slow
def test_a_gzip_bomb_stops_at_the_default_inflate_cap_which_the_error_names(tmp_path):
    p = tmp_path / "bomb.json.gz"
    _instant_bomb(p, int(1.25 * 1024**3))
    assert p.stat().st_size < 8 * 1024**2
    res = _analyze_in_child(p)
    assert not res["ok"], res
    assert "1 GiB" in res["error"] and "PERFSCOUT_MAX_DECOMPRESSED" in res["error"], res
    assert res["rss_mb"] < RSS_BOUND_MB, res


def _whitespace_bomb(path: Path, before: bytes, after: bytes, inflated: int) -> None:
    """``before``, then ``inflated`` bytes of blanks (one compressed 64 MiB member written
    again and again), then ``after``."""
    spaces = gzip.compress(b" " * (64 << 20), compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(before))
        for _ in range(inflated // (64 << 20)):
            f.write(spaces)
        f.write(gzip.compress(after))


EVENT = b'{"name":"t","ph":"X","ts":1,"dur":1,"pid":1,"tid":1}'


@pytest.mark.slow
@pytest.mark.parametrize("where, before, after", [
    ("between events", b'{"traceEvents": [' + EVENT + b",", EVENT + b"]}"),
    ("after the last event", b'{"traceEvents": [' + EVENT + b"]", b"}"),
])
def test_a_whitespace_gzip_bomb_stops_at_the_inflate_cap_in_bounded_memory(tmp_path, where, before, after):
    """Blanks mean nothing between JSON tokens; before, the Trace Event reader buffered them
    while looking for the next event boundary, doubling its block to 256 MB (~590 MB peak)."""
    p = tmp_path / "blanks.json.gz"
    _whitespace_bomb(p, before, after, int(1.25 * 1024**3))
    assert p.stat().st_size < 4 * 1024**2
    res = _analyze_in_child(p)
    assert not res["ok"], res
    assert "1 GiB" in res["error"] and "PERFSCOUT_MAX_DECOMPRESSED" in res["error"], res
    assert res["rss_mb"] < RSS_BOUND_MB, (where, res)


@pytest.mark.slow
def test_a_speedscope_of_empty_stacks_at_the_whole_file_cap_stays_under_the_bound(tmp_path):
    """``[]`` is 3 bytes of JSON and a 56-byte Python list: the worst ratio a JSON reader meets
    (715 MB peak when the reader held every stack as a list; its samples are now decoded a
    block at a time, nodes/perf/parsers/speedscope_samples.py)."""
    from nodes.perf.limits import DEFAULT

    n = (DEFAULT.max_whole_file_bytes - 400) // 5
    p = tmp_path / "empty-stacks.speedscope.json"
    with open(p, "wb") as f:
        f.write(b'{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},'
                b'"profiles":[{"type":"sampled","name":"p","unit":"milliseconds","startValue":0,"endValue":1,'
                b'"samples":[' + b"[]," * (n - 1) + b'[]],"weights":[' + b"0," * (n - 1) + b"0]}]}")
    assert p.stat().st_size <= DEFAULT.max_whole_file_bytes
    res = _analyze_in_child(p)
    assert res["rss_mb"] < RSS_BOUND_MB, res
    # One byte over the cap is refused, naming it.
    with open(p, "ab") as f:
        f.write(b" " * (DEFAULT.max_whole_file_bytes - p.stat().st_size + 1))
    res = _analyze_in_child(p)
    assert not res["ok"] and "PERFSCOUT_MAX_WHOLE_FILE" in res["error"], res


def _perfetto_with_slices(path: Path, packets: int, per_packet: int) -> None:
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    b = TraceProtoBuilder()
    ts = 1000
    for _ in range(packets):
        pkt = b.add_packet()
        pkt.trusted_packet_sequence_id = 7
        bundle = pkt.ftrace_events
        bundle.cpu = 0
        for _ in range(per_packet):
            for line in ("B|100|s", "E|100"):
                e = bundle.event.add()
                e.timestamp, e.pid = ts, 100
                e.print.buf = line + "\n"
                ts += 10
    path.write_bytes(b.serialize())


def test_a_perfetto_trace_beyond_the_event_cap_is_partial_and_says_so(tmp_path):
    p = tmp_path / "many.perfetto-trace"
    _perfetto_with_slices(p, packets=300, per_packet=200)  # 120 000 events, 60 000 slices
    res = _analyze_in_child(p, PERFSCOUT_MAX_EVENTS="20000")
    assert res["ok"] and res["partial"], res
    assert any("PERFSCOUT_MAX_EVENTS" in w for w in res["warnings"]), res
    whole = _analyze_in_child(p)
    assert whole["ok"] and not whole["partial"], whole


# --- perfscout route --jsonl --------------------------------------------------------------------

CHILD_ROUTE_RSS = textwrap.dedent(
    """
    import os, resource, subprocess, sys
    # Run the CLI and report its peak RSS (RUSAGE_CHILDREN: the waited-for child's maximum).
    p = subprocess.run(sys.argv[1:], stdin=open(os.environ["ROUTE_STDIN"], "rb") if os.environ.get("ROUTE_STDIN") else None,
                       capture_output=True, text=True, timeout=300)
    kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    import json
    print(json.dumps({"rc": p.returncode, "stdout": p.stdout[-2000:], "stderr": p.stderr[-2000:], "rss_mb": kb / 1024}))
    """
)


def _route(tmp_path: Path, *args: str, stdin: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PERFSCOUT_HOME=str(tmp_path / "home"))
    if stdin:
        env["ROUTE_STDIN"] = stdin
    out = subprocess.run([sys.executable, "-c", CHILD_ROUTE_RSS, str(PERFSCOUT), "route", "--offline", *args],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=400)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    print(args, stdin, {k: res[k] for k in ("rc", "rss_mb")}, res["stderr"].strip())
    assert "Traceback" not in res["stderr"]
    return res


def test_route_jsonl_on_dev_zero_is_refused_in_one_line(tmp_path):
    res = _route(tmp_path, "--jsonl", "/dev/zero")
    # The classifier's load-time line (app/route_cmd.py: said when loading took >= 100 ms, as on a
    # loaded machine) comes before any input is read; the refusal itself is one line.
    errors = [x for x in res["stderr"].strip().splitlines() if not x.startswith("routing classifier ")]
    assert res["rc"] == 2 and len(errors) == 1 and "/dev/zero" in errors[0], res
    assert res["rss_mb"] < RSS_BOUND_MB


def test_route_jsonl_on_stdin_from_dev_zero_ends_with_bounded_memory(tmp_path):
    res = _route(tmp_path, "--jsonl", "-", stdin="/dev/zero")
    assert res["rc"] == 2 and "no end" in res["stderr"], res
    assert res["rss_mb"] < RSS_BOUND_MB, res


def test_route_jsonl_a_huge_line_is_that_lines_error_and_the_next_line_routes(tmp_path):
    p = tmp_path / "lines.jsonl"
    with open(p, "wb") as f:
        f.write(b'{"text": "' + b"a" * (50 * 1024**2) + b'"}\n')
        f.write("搜一下启动相关的代码\n".encode())
    res = _route(tmp_path, "--jsonl", str(p))
    lines = [json.loads(x) for x in res["stdout"].splitlines()]
    assert lines[0]["line"] == 1 and "longer than" in lines[0]["error"]
    assert lines[1]["line"] == 2 and lines[1]["route"] == "explorer"
    assert res["rc"] == 2 and res["rss_mb"] < 300, res


def test_a_text_capture_with_one_endless_line_is_refused_with_bounded_memory(tmp_path):
    """A real atrace head, then 600 MiB without a newline (a ~0.6 MB gzip): before, the text
    reader's line iteration held the whole line (900 MiB: 1.9 GB peak)."""
    text = (ROOT / "tests" / "data" / "perf" / "android-atrace-systrace.txt").read_bytes()[:20_000]
    p = tmp_path / "endless.txt.gz"
    with gzip.open(p, "wb", compresslevel=9) as f:
        f.write(text[: text.rindex(b"\n") + 1])
        chunk = b"a" * (1 << 20)
        for _ in range(600):
            f.write(chunk)
        f.write(b"\n")
    res = _analyze_in_child(p)
    assert not res["ok"] and "a line longer than" in res["error"], res
    assert res["rss_mb"] < RSS_BOUND_MB, res
