"""Content sniffing, the reader registry, and opening inputs (gzip, caps, bad files)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from app.settings import Settings
from nodes.perf import limits
from nodes.perf import formats
from nodes.perf.errors import PerfDataError

DATA = Path(__file__).parent / "data" / "perf"
ANDROID = Path(__file__).parent / "data" / "android"


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("chrome-android-thread-time.json.gz", "trace_event"),
        ("chrome116-devtools-trace.json", "trace_event"),
        ("chrome65-devtools-timeline.json", "trace_event"),
        ("viztracer-multithread.json", "trace_event"),
        ("android-atrace-systrace.txt", "atrace"),
        ("perf-stat-two_sum.txt", "perfstat"),
        ("pyspy-slowapp.speedscope.json", "speedscope"),
        ("slowapp.pstats", "pstats"),
        ("importtime-json-csv-argparse.log", "importtime"),
    ],
)
def test_real_captures_are_sniffed_by_content(name, fmt, tmp_path):
    fmt_found, mod = formats.detect(str(DATA / name))
    assert fmt_found == fmt
    # the extension does not matter: the same bytes under a neutral name
    neutral = tmp_path / "capture.bin"
    neutral.write_bytes((DATA / name).read_bytes())
    assert formats.detect(str(neutral))[0] == fmt


def test_other_areas_formats_are_registered_in_order():
    names = [f for _, f in formats.REGISTRY]
    for fmt in ("perfetto", "gfxinfo", "amstart", "trace_event", "speedscope", "pstats", "atrace"):
        assert fmt in names
    # specific before generic; loose binary signatures after every text format
    assert names.index("perfscout_json") < names.index("speedscope") < names.index("trace_event")
    assert names.index("perfetto") == len(names) - 1


@pytest.mark.skipif(not (ANDROID / "gfxinfo-reactnativefeed-flashlight.txt").exists(), reason="android data not here")
def test_gfxinfo_and_perfetto_route_to_their_readers():
    assert formats.detect(str(ANDROID / "gfxinfo-reactnativefeed-flashlight.txt"))[0] == "gfxinfo"
    assert formats.detect(str(ANDROID / "api32_startup_warm.perfetto-trace"))[0] == "perfetto"


def test_gzip_is_transparent_whatever_the_name(tmp_path):
    raw = gzip.decompress((DATA / "chrome-android-thread-time.json.gz").read_bytes())
    p = tmp_path / "trace.json"  # gzip content, no .gz name
    p.write_bytes(gzip.compress(raw[:200_000]))
    assert formats.read_head(str(p), 20) == raw[:20]
    assert formats.detect(str(p))[0] == "trace_event"


def test_zero_byte_gz_is_refused_with_a_clear_line(tmp_path):
    p = tmp_path / "capture.json.gz"
    p.write_bytes(b"")
    with pytest.raises(PerfDataError) as e:
        formats.load(str(p))
    assert str(p) in str(e.value) and "empty gzip" in str(e.value) and "\n" not in str(e.value)


def test_empty_file_missing_file_directory(tmp_path):
    empty = tmp_path / "e.json"
    empty.write_bytes(b"")
    for path, words in ((empty, "empty"), (tmp_path / "nope.json", "no such file"), (tmp_path, "directory")):
        with pytest.raises(PerfDataError) as e:
            formats.load(str(path))
        assert words in str(e.value)


def test_truncated_and_corrupt_gzip(tmp_path):
    good = gzip.compress(b'{"traceEvents": [' + b'{"ph":"X","ts":1,"dur":1,"name":"a","pid":1,"tid":1},' * 2000 + b"]}")
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(good[: len(good) // 2])
    with pytest.raises(PerfDataError) as e:
        formats.load(str(cut))
    assert "gzip" in str(e.value)
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(good[:10] + b"\x00" * 50 + good[60:])
    with pytest.raises(PerfDataError):
        formats.load(str(bad))


def test_gzip_bomb_stops_at_the_cap(tmp_path, monkeypatch):
    p = tmp_path / "bomb.json.gz"
    body = b'{"traceEvents": [' + b" " * (8 << 20) + b"]}"
    p.write_bytes(gzip.compress(body, 9))
    assert os.path.getsize(p) < 100_000
    monkeypatch.setenv("PERFSCOUT_MAX_DECOMPRESSED", str(1 << 20))
    with pytest.raises(PerfDataError) as e:  # the setting reaches the readers this way
        formats.load(str(p), limits=Settings.from_env().read_limits())
    assert "refusing" in str(e.value) and "gzip bomb" in str(e.value)
    assert "PERFSCOUT_MAX_DECOMPRESSED" in str(e.value) and "1 MiB" in str(e.value)


def test_whole_file_readers_are_bounded(tmp_path, monkeypatch):
    with limits.using(max_whole_file_bytes=1000), pytest.raises(PerfDataError) as e:
        formats.load(str(DATA / "pyspy-slowapp.speedscope.json"))
    assert "too large for this reader" in str(e.value)


def test_binary_and_text_garbage_are_unrecognised(tmp_path):
    b = tmp_path / "blob"
    b.write_bytes(bytes(range(256)) * 10)
    with pytest.raises(PerfDataError) as e:
        formats.load(str(b))
    assert "unrecognised format (binary data)" in str(e.value)
    t = tmp_path / "notes.txt"
    t.write_text("hello\nthis is not a trace\n")
    with pytest.raises(PerfDataError) as e:
        formats.load(str(t))
    assert "unrecognised format (text)" in str(e.value)


def test_a_missing_reader_module_is_reported_as_not_available(tmp_path, monkeypatch):
    monkeypatch.setattr(
        formats, "REGISTRY", (("nodes.perf.parsers.does_not_exist", "gfxinfo"),) + formats.REGISTRY[:3]
    )
    monkeypatch.setattr(formats, "_loaded", {})
    p = tmp_path / "gfx.txt"
    p.write_text("Applications Graphics Acceleration Info:\n\n** Graphics info for pid 1234 [com.demo] **\n")
    with pytest.raises(PerfDataError) as e:
        formats.load(str(p))
    assert "format gfxinfo is not available" in str(e.value)
    # the others still work
    assert formats.load(str(DATA / "viztracer-multithread.json")).format == "trace_event"


def test_a_sniffer_that_raises_does_not_break_detection(tmp_path, monkeypatch):
    import types

    broken = types.SimpleNamespace(FORMAT="broken", sniff=lambda h, n: 1 / 0, parse=lambda p: None)
    monkeypatch.setattr(formats, "_loaded", {"x.broken": broken})
    monkeypatch.setattr(formats, "REGISTRY", (("x.broken", "broken"),) + formats.REGISTRY)
    assert formats.detect(str(DATA / "viztracer-multithread.json"))[0] == "trace_event"


def test_a_reader_bug_becomes_one_line(tmp_path, monkeypatch):
    import types

    def boom(path):
        raise KeyError("internal\nsecond line")

    buggy = types.SimpleNamespace(FORMAT="buggy", sniff=lambda h, n: True, parse=boom)
    monkeypatch.setattr(formats, "_loaded", {"x.buggy": buggy})
    monkeypatch.setattr(formats, "REGISTRY", (("x.buggy", "buggy"),))
    with pytest.raises(PerfDataError) as e:
        formats.load(str(DATA / "viztracer-multithread.json"))
    assert "could not read as buggy: KeyError" in str(e.value) and "\n" not in str(e.value)


def test_format_override(tmp_path):
    with pytest.raises(PerfDataError) as e:
        formats.load(str(DATA / "viztracer-multithread.json"), format="nope")
    assert "unknown format" in str(e.value)
    assert formats.load(str(DATA / "viztracer-multithread.json"), format="trace_event").slice_count == 582


def test_json_object_with_a_large_first_key_is_still_found(tmp_path):
    import json

    ev = [{"ph": "X", "name": "a", "ts": i, "dur": 1, "pid": 1, "tid": 1} for i in range(10)]
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"metadata": {"blob": "x" * 100_000}, "traceEvents": ev}))
    pd = formats.load(str(p))
    assert pd.format == "trace_event" and pd.slice_count == 10
