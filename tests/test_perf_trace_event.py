"""The Trace Event JSON reader on the real captures (numbers recomputed here with plain json)
and on the edge cases of the format: both forms, chunk boundaries, truncation, bad bytes."""

from __future__ import annotations

import gzip
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from nodes.perf.errors import PerfDataError
from nodes.perf.parsers import trace_event as te

DATA = Path(__file__).parent / "data" / "perf"
REAL = {
    # file: (events, seconds) as SOURCES.md states them
    "chrome-android-thread-time.json.gz": (47_832, 9.9),
    "chrome116-devtools-trace.json": (3_108, 0.31),
    "chrome65-devtools-timeline.json": (3_551, 0.55),
    "viztracer-multithread.json": (588, None),
}


def _events(name: str) -> list[dict]:
    raw = (DATA / name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def _write(tmp_path, obj_or_bytes, name="t.json") -> str:
    p = tmp_path / name
    p.write_bytes(obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode())
    return str(p)


def _unended_b(events: list[dict]) -> list[tuple[int, int, float, str]]:
    """B events with no E, paired plainly: per thread, in time order, each E closes the last B."""
    open_: dict[tuple, list[dict]] = defaultdict(list)
    for e in sorted((e for e in events if e.get("ph") in ("B", "E")), key=lambda e: e["ts"]):
        stack = open_[(e["pid"], e["tid"])]
        if e["ph"] == "B":
            stack.append(e)
        elif stack:
            stack.pop()
    return [(e["pid"], e["tid"], float(e["ts"]), e.get("name", "")) for st in open_.values() for e in st]


def _x(name, ts, dur, pid=1, tid=1, **kw):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, **kw}


@pytest.mark.parametrize("name", list(REAL))
def test_real_capture_counts_match_an_independent_reading(name):
    events = _events(name)
    n_events, seconds = REAL[name]
    assert len(events) == n_events  # the file is the one SOURCES.md describes
    pd = te.parse(str(DATA / name))
    ph = Counter(e.get("ph") for e in events)
    # every X is a slice, every matched B/E pair one; a B never ended is kept apart, no duration
    unended = _unended_b(events)
    assert pd.slice_count == ph["X"] + ph["B"] - len(unended)
    assert sorted((p, t, ts, n) for p, t, ts, n in pd.open_slices) == sorted(unended)
    assert int(pd.meta["events"]) == n_events
    timed = [e for e in events if e.get("ph") != "M" and "ts" in e]
    start = min(e["ts"] for e in timed)
    end = max(e["ts"] + (e.get("dur") or 0) for e in timed)
    assert pd.start_us == pytest.approx(start)
    assert pd.end_us == pytest.approx(end)
    if seconds:
        assert pd.duration_us / 1e6 == pytest.approx(seconds, rel=0.02)
    # thread and process names from the M events
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            assert pd.threads[(e["pid"], e["tid"])].name == e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "process_name":
            assert pd.processes[e["pid"]] == e["args"]["name"]
    # total X duration per name, from the columns
    want = defaultdict(float)
    for e in events:
        if e.get("ph") == "X":
            want[e["name"]] += float(e.get("dur") or 0)
    got = defaultdict(float)
    x_names = set(want)
    for cols in pd.slices.values():
        for d, n in zip(cols.dur, cols.name):
            got[pd.strings[n]] += d
    for k in list(x_names)[:50]:
        assert got[k] >= want[k] - 1e-6  # B/E slices of the same name only add


def test_frame_markers_are_all_kept():
    pd = te.parse(str(DATA / "chrome-android-thread-time.json.gz"))
    c = Counter(name for _, _, _, name in pd.instants)
    assert c["DrawFrame"] == 329 and c["BeginFrame"] == 184  # 181 + 148 DrawFrame in SOURCES' terms
    pd116 = te.parse(str(DATA / "chrome116-devtools-trace.json"))
    c116 = Counter(name for _, _, _, name in pd116.instants)
    assert c116["DrawFrame"] == 16 and c116["BeginFrame"] == 20
    assert c116["navigationStart"] == 1 and c116["loadEventEnd"] == 1


def test_async_spans_match_across_processes_and_out_of_file_order():
    pd = te.parse(str(DATA / "chrome-android-thread-time.json.gz"))
    events = _events("chrome-android-thread-time.json.gz")
    assert sum(len(c) for c in pd.async_slices.values()) == Counter(e["ph"] for e in events)["S"]
    pd65 = te.parse(str(DATA / "chrome65-devtools-timeline.json"))
    # InputLatency spans start in the browser and finish in a renderer: matched all the same
    names = Counter(pd65.strings[n] for cols in pd65.async_slices.values() for n in cols.name)
    assert names["InputLatency::MouseMove"] >= 10


def test_v8_cpu_profile_becomes_sampled_stacks_with_source_locations():
    pd = te.parse(str(DATA / "chrome116-devtools-trace.json"))
    assert pd.stacks
    funcs = {r.name: r for r in pd.frame_refs}
    assert "gamma" in funcs and funcs["gamma"].file.endswith("simple.js") and funcs["gamma"].line
    events = _events("chrome116-devtools-trace.json")
    deltas = []
    for e in events:
        if e.get("name") == "ProfileChunk":
            deltas += e["args"]["data"].get("timeDeltas", [])
    # sampled weight never exceeds the profile's span (idle samples are dropped)
    assert 0 < sum(pd.stacks.values()) <= sum(deltas) + max(deltas)


def test_viztracer_names_carry_their_location():
    pd = te.parse(str(DATA / "viztracer-multithread.json"))
    locs = {pd.strings[n]: loc for n, loc in pd.locations.items()}
    fib = [k for k in locs if k.startswith("fib (")]
    assert fib and locs[fib[0]][0].endswith("multithread.py") and locs[fib[0]][1] == 8


@pytest.mark.parametrize("name", ["chrome65-devtools-timeline.json", "chrome-android-thread-time.json.gz"])
def test_tiny_blocks_give_the_same_result(name, monkeypatch):
    """Cutting the array every few KiB (wrong guesses included) changes nothing."""
    full = te.parse(str(DATA / name))
    monkeypatch.setattr(te, "CHUNK", 3000)
    small = te.parse(str(DATA / name))
    assert small.slice_count == full.slice_count
    assert not small.partial and small.skipped_events == 0
    for key, cols in full.slices.items():
        a = sorted(zip(cols.ts, cols.dur, (full.strings[n] for n in cols.name)))
        b_cols = small.slices[key]
        b = sorted(zip(b_cols.ts, b_cols.dur, (small.strings[n] for n in b_cols.name)))
        assert a == b
    assert sorted(full.instants) == sorted(small.instants)


def test_pretty_printed_and_nested_args_across_block_boundaries(tmp_path, monkeypatch):
    events = []
    for i in range(400):
        events.append(_x(f"task{i % 7}", i * 10, 5, args={"data": [{"a": i}, {"b": [{"c": 1}, {"d": 2}]}]}))
    p = _write(tmp_path, json.dumps({"traceEvents": events}, indent=2).encode())
    monkeypatch.setattr(te, "CHUNK", 1024)
    pd = te.parse(p)
    assert pd.slice_count == 400 and not pd.partial


def test_keys_before_and_after_the_array(tmp_path):
    doc = (
        b'{"metadata": {"source": "DevTools", "list": [{"a": 1}, {"b": 2}]}, "displayTimeUnit": "ns",'
        b' "traceEvents": [{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}],'
        b' "stackFrames": {"1": {"name": "x"}}, "samples": [{"a": [1]}, {"b": 2}]}'
    )
    pd = te.parse(_write(tmp_path, doc))
    assert pd.slice_count == 1 and pd.meta["metadata.source"] == "DevTools" and not pd.partial


def test_bare_array_without_closing_bracket_is_legal(tmp_path):
    body = b"[" + b",\n".join(json.dumps(_x("a", i, 1)).encode() for i in range(5)) + b",\n"
    pd = te.parse(_write(tmp_path, body))
    assert pd.slice_count == 5 and not pd.partial


@pytest.mark.parametrize("frac", [0.001, 0.2, 0.5, 0.77, 0.999])
def test_truncated_object_is_partial_or_a_clear_error(tmp_path, frac):
    raw = (DATA / "chrome116-devtools-trace.json").read_bytes()
    p = _write(tmp_path, raw[: int(len(raw) * frac)])
    try:
        pd = te.parse(p)
    except PerfDataError as e:
        assert p in str(e)
        return
    assert pd.partial and pd.slice_count <= 2456
    assert any("truncated" in w or "incomplete" in w or "cut short" in w for w in pd.warnings)


def test_non_utf8_and_lone_surrogates_are_replaced(tmp_path):
    body = (
        b'[{"ph":"X","name":"bad \xff\xfe name","ts":1,"dur":2,"pid":1,"tid":1},'
        b'{"ph":"X","name":"half \\ud800 pair","ts":5,"dur":1,"pid":1,"tid":1},'
        b'{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"th\\udc00read"}}]'
    )
    pd = te.parse(_write(tmp_path, body))
    assert pd.slice_count == 2
    for s in pd.strings + [pd.threads[(1, 1)].name]:
        s.encode("utf-8")  # every name can be written out again
    assert any("\ufffd" in s or "?" in s for s in pd.strings)


def test_missing_and_odd_fields(tmp_path):
    body = json.dumps([
        {"ph": "X", "name": "no dur", "ts": 1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "no ts", "dur": 3, "pid": 1, "tid": 1},
        {"ph": "X", "ts": 4, "dur": 1, "pid": "7", "tid": 2.0},
        {"ph": "X", "name": 42, "ts": "5", "dur": "1.5", "pid": 1, "tid": "CrBrowserMain"},
        {"name": "no phase", "ts": 6},
        {"ph": "X", "name": "negative", "ts": 7, "dur": -5, "pid": 1, "tid": 1},
    ]).encode()
    pd = te.parse(_write(tmp_path, body))
    assert pd.slice_count == 4  # "no ts" and "no phase" skipped
    assert pd.partial and pd.skipped_events == 2
    assert (7, 2) in pd.slices and "42" in pd.strings
    neg = pd.slices[(1, 1)]
    assert min(neg.dur) >= 0.0


def test_begin_end_pairs_are_matched_in_time_order_per_thread(tmp_path):
    body = json.dumps([
        {"ph": "E", "ts": 30, "pid": 1, "tid": 1},   # written before its B
        {"ph": "B", "name": "outer", "ts": 10, "pid": 1, "tid": 1},
        {"ph": "B", "name": "inner", "ts": 12, "pid": 1, "tid": 1},
        {"ph": "E", "ts": 20, "pid": 1, "tid": 1},
        {"ph": "B", "name": "other-thread", "ts": 11, "pid": 1, "tid": 2},
        {"ph": "B", "name": "never-ends", "ts": 40, "pid": 1, "tid": 1},
        {"ph": "X", "name": "last", "ts": 50, "dur": 10, "pid": 1, "tid": 3},
    ]).encode()
    pd = te.parse(_write(tmp_path, body))
    got = {pd.strings[n]: (t, d) for cols in pd.slices.values() for t, d, n in zip(cols.ts, cols.dur, cols.name)}
    assert got["outer"] == (10, 20) and got["inner"] == (12, 8)
    # no E: no duration (trace_processor's dur = -1), so not a slice; kept by name
    assert "never-ends" not in got and "other-thread" not in got
    assert sorted(pd.open_slices) == [(1, 1, 40.0, "never-ends"), (1, 2, 11.0, "other-thread")]
    assert any(w.startswith("2 B events never ended: left out of durations") for w in pd.warnings)


def test_pairing_matches_a_stack_on_random_sequences():
    rnd = np.random.default_rng(3)
    for _ in range(300):
        depth, t, c, ts = 0, [], [], 0.0
        for _ in range(int(rnd.integers(0, 60))):
            ts += float(rnd.integers(0, 3))
            if depth and rnd.random() < 0.5:
                c.append(-1)
                depth -= 1
            else:
                c.append(int(rnd.integers(0, 5)))
                depth += 1
            t.append(ts)
        stack, ref = [], []
        for a, b in zip(t, c):
            if b >= 0:
                stack.append((a, b))
            else:
                s, n = stack.pop()
                ref.append((s, a - s, n))
        got = te._pair_nested(np.array(t, dtype=float), np.array(c, dtype=np.int64))
        assert sorted(zip(got[0].tolist(), got[1].tolist(), got[2].tolist())) == sorted(ref)
        assert sorted(zip(got[3].tolist(), got[4].tolist())) == sorted(stack)


def test_counters_async_and_ids(tmp_path):
    body = json.dumps({"traceEvents": [
        {"ph": "C", "name": "mem", "ts": 1, "pid": 1, "args": {"js": 10, "dom": 3}},
        {"ph": "C", "name": "mem", "ts": 2, "pid": 1, "args": {"js": 12, "dom": 4}},
        {"ph": "C", "name": "fps", "ts": 2, "pid": 1, "id": "7", "args": {"value": 60}},
        {"ph": "C", "name": "fps", "ts": 3, "pid": 2, "id": "7", "args": {"value": 30}},
        {"ph": "b", "name": "load", "cat": "net", "ts": 5, "pid": 1, "tid": 1, "id2": {"local": "0x1"}},
        {"ph": "e", "name": "load", "cat": "net", "ts": 9, "pid": 1, "tid": 1, "id2": {"local": "0x1"}},
        {"ph": "S", "name": "input", "ts": 6, "pid": 1, "tid": 1, "id": "0x2"},
        {"ph": "F", "name": "input", "ts": 8, "pid": 2, "tid": 5, "id": "0x2"},
    ]}).encode()
    pd = te.parse(_write(tmp_path, body))
    assert pd.counters["mem.js"] == [(1, 10.0), (2, 12.0)] and pd.counters["mem.dom"][1] == (2, 4.0)
    assert pd.counters["fps[7]"] == [(2, 60.0)] and pd.counters["fps[7] (pid 2)"] == [(3, 30.0)]
    spans = {pd.strings[n]: (t, d) for cols in pd.async_slices.values() for t, d, n in zip(cols.ts, cols.dur, cols.name)}
    assert spans == {"load": (5, 4), "input": (6, 2)}


def test_system_trace_events_are_read_with_the_atrace_reader(tmp_path):
    text = (DATA / "android-atrace-systrace.txt").read_text()
    doc = {"traceEvents": [_x("java-side", 683202104223.0, 5.0, pid=18926, tid=18926)], "systemTraceEvents": text}
    pd = te.parse(_write(tmp_path, doc))
    names = Counter(pd.strings[n] for cols in pd.slices.values() for n in cols.name)
    assert names["Choreographer#doFrame"] == 15 and names["java-side"] == 1


@pytest.mark.parametrize(
    "body, words",
    [
        (b"", None),
        (b"[]", "no events"),
        (b'{"traceEvents": []}', "no events"),
        (b'{"other": 1}', "no traceEvents"),
        (b"[1, 2, 3]", "no events"),
        (b"\x00\x01binary", "not Trace Event JSON"),
        (b'{"traceEve', "invalid JSON"),
        (b'[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"x"}}]', "no timed events"),
    ],
)
def test_bad_inputs_are_one_line_errors(tmp_path, body, words):
    p = _write(tmp_path, body)
    with pytest.raises(PerfDataError) as e:
        te.parse(p)
    msg = str(e.value)
    assert p in msg and "\n" not in msg
    if words:
        assert words in msg


def test_corrupt_event_in_the_middle_is_skipped_not_fatal(tmp_path, monkeypatch):
    good = [json.dumps(_x(f"t{i}", i * 10, 5)).encode() for i in range(300)]
    good[150] = b'{"ph":"X","name":"broken",,"ts":1}'
    p = _write(tmp_path, b"[" + b",".join(good) + b"]")
    monkeypatch.setattr(te, "CHUNK", 2048)
    pd = te.parse(p)
    assert pd.slice_count == 299 and pd.partial and pd.skipped_events == 1
