"""Property tests: random bytes, mutated real captures and random event lists thrown at every
reader (and at the metrics after a successful read). The only exception allowed out is
PerfDataError; whatever is read must analyse and serialise."""

from __future__ import annotations

import gzip
import json
import marshal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodes.perf import formats
from nodes.perf.errors import PerfDataError
from nodes.perf.metrics import compute
from nodes.perf.parsers import atrace, importtime, perfscout_json, perfstat, pstats, speedscope, trace_event

DATA = Path(__file__).parent / "data" / "perf"
TMP = Path(tempfile.mkdtemp(prefix="perf_props_"))
SETTINGS = dict(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _head(name: str, n: int = 24_000) -> bytes:
    raw = (DATA / name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw[:n]


SEEDS = {
    "trace_event": [_head("chrome116-devtools-trace.json"), _head("chrome65-devtools-timeline.json"),
                    _head("viztracer-multithread.json"), _head("chrome-android-thread-time.json.gz")],
    "atrace": [_head("android-atrace-systrace.txt")],
    "speedscope": [(DATA / "pyspy-slowapp.speedscope.json").read_bytes()],
    "pstats": [(DATA / "slowapp.pstats").read_bytes()[:20_000],
               marshal.dumps({("a.py", 1, "f"): (1, 2, 0.5, 0.7, {("b.py", 2, "g"): (1, 1, 0.1, 0.2)})})],
    "importtime": [(DATA / "importtime-json-csv-argparse.log").read_bytes()],
    "perfstat": [(DATA / "perf-stat-two_sum.txt").read_bytes()],
    "perfscout_json": [
        json.dumps({"perfscout": "psutil-series", "series": {"cpu_percent": {"unit": "%", "points": [[0, 1], [0.1, 2]]}}}).encode(),
        json.dumps({"perfscout": "startup-runs", "runs": [{"index": 0, "total_ms": 5}]}).encode(),
    ],
}
READERS = {
    "trace_event": trace_event.parse,
    "atrace": atrace.parse,
    "speedscope": speedscope.parse,
    "pstats": pstats.parse,
    "importtime": importtime.parse,
    "perfstat": perfstat.parse,
    "perfscout_json": perfscout_json.parse,
    "load": formats.load,
}


def _check(reader, data: bytes, name: str = "input.bin") -> None:
    p = TMP / name
    p.write_bytes(data)
    try:
        pd = reader(str(p))
    except PerfDataError as e:
        assert "\n" not in str(e)
        return
    res = compute(pd)
    json.dumps(res.model_dump(mode="json"))


@st.composite
def mutated(draw, seeds: list[bytes]):
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "dup"]))
        i = draw(st.integers(0, len(data) - 1))
        if op == "truncate":
            del data[i:]
        elif op == "flip":
            data[i] = draw(st.integers(0, 255))
        elif op == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=16))
        elif op == "delete":
            del data[i : i + draw(st.integers(1, 64))]
        else:
            j = draw(st.integers(i, min(len(data), i + 256)))
            data[j:j] = data[i:j]
    return bytes(data)


@pytest.mark.parametrize("reader", list(READERS))
@settings(**SETTINGS)
@given(data=st.binary(max_size=3000))
def test_random_bytes(reader, data):
    _check(READERS[reader], data)


@pytest.mark.parametrize("reader", [r for r in READERS if r != "load"])
@settings(**SETTINGS)
@given(data=st.data())
def test_mutated_real_inputs(reader, data):
    seeds = SEEDS[reader]
    blob = data.draw(mutated(seeds))
    old = trace_event.CHUNK
    trace_event.CHUNK = data.draw(st.sampled_from([256, 4096, 1 << 20]))  # cuts in odd places too
    try:
        _check(READERS[reader], blob)
        _check(formats.load, blob)
    finally:
        trace_event.CHUNK = old


_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
    st.text(max_size=12), st.sampled_from(["X", "B", "E", "i", "I", "C", "M", "b", "e", "S", "F", "P", "R", "n"]),
)
_value = st.recursive(_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=6)
_event = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.one_of(st.sampled_from(["X", "B", "E", "i", "I", "C", "M", "b", "e", "S", "F", "P", "R", "n", "s", "f", "O"]), _scalar),
        "name": st.one_of(st.sampled_from(["thread_name", "process_name", "DrawFrame", "BeginFrame", "ProfileChunk",
                                           "Choreographer#doFrame", "navigationStart", "loadEventEnd", "a"]), _scalar),
        "ts": st.one_of(st.floats(0, 1e9, allow_nan=False), st.integers(0, 10**12), _scalar),
        "dur": st.one_of(st.floats(-10, 1e6, allow_nan=False), _scalar),
        "pid": st.one_of(st.integers(0, 5), _scalar),
        "tid": st.one_of(st.integers(0, 5), _scalar),
        "id": _scalar,
        "id2": st.one_of(st.fixed_dictionaries({"local": st.text(max_size=3)}), _scalar),
        "args": st.one_of(st.fixed_dictionaries({"name": st.text(max_size=8)}),
                          st.fixed_dictionaries({"value": st.floats(allow_nan=False)}),
                          st.fixed_dictionaries({"data": _value}), _value),
    },
)


@settings(**SETTINGS)
@given(events=st.lists(_event, max_size=40), form=st.sampled_from(["object", "array", "pretty"]),
       chunk=st.sampled_from([128, 1 << 20]))
def test_random_trace_events(events, form, chunk):
    if form == "array":
        body = json.dumps(events).encode()
    elif form == "object":
        body = json.dumps({"traceEvents": events, "metadata": {"x": [1, {"y": 2}]}}).encode()
    else:
        body = json.dumps({"traceEvents": events}, indent=1).encode()
    old = trace_event.CHUNK
    trace_event.CHUNK = chunk
    try:
        _check(trace_event.parse, body, "events.json")
    finally:
        trace_event.CHUNK = old


@settings(**SETTINGS)
@given(lines=st.lists(st.one_of(
    st.builds(lambda c, tid, cpu, ts, payload: f" {c}-{tid} ( {tid}) [{cpu:03d}] ...1 {ts:.6f}: tracing_mark_write: {payload}",
              st.text("abc<>.", max_size=5), st.integers(0, 99), st.integers(0, 7), st.floats(0, 1e5, allow_nan=False),
              st.one_of(st.text(max_size=20), st.builds(lambda k, p, n: f"{k}|{p}|{n}", st.sampled_from("BESFCGHIN"),
                                                        st.integers(0, 99), st.text(max_size=10)))),
    st.text(max_size=40)), max_size=30))
def test_random_atrace_lines(lines):
    _check(atrace.parse, ("\n".join(lines) + "\n").encode("utf-8", "replace"), "lines.txt")


def teardown_module(module):
    import shutil

    shutil.rmtree(TMP, ignore_errors=True)
