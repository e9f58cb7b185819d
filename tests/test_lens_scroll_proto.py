"""The scroll lens on a Perfetto protobuf trace from Chrome, and EventLatency's stages.

The capture (tests/data/web/scroll.pftrace.gz, SOURCES.md) is the scroll of test_lens_scroll.py
recorded as protobuf (``record_scroll.py --proto``: DevTools ``Tracing.start`` with
``transferMode: ReturnAsStream``, ``streamFormat: proto``). Chrome writes its verdicts there as
typed ``ChromeTrackEvent`` extensions (chrome_track_event.proto: ``event_latency`` 1032,
``frame_reporter`` 1075, ``scroll_jank_v4`` 1078). The reference is decoded here from the raw
bytes with a wire-format walker of this file's own — per-sequence interned names, slices paired
per track — sharing no code with the reader (``perfetto_chrome_latency.py``) or the metric.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from nodes.perf.analysis import analyze_file
from nodes.perf.metrics.scroll import summarize_scroll

DATA = Path(__file__).parent / "data" / "web"
TRACE = DATA / "scroll.pftrace.gz"
UPDATES = {10: "GESTURE_SCROLL_UPDATE", 21: "FIRST_GESTURE_SCROLL_UPDATE", 26: "INERTIAL_GESTURE_SCROLL_UPDATE"}
STATES = {0: "STATE_NO_UPDATE_DESIRED", 1: "STATE_PRESENTED_ALL", 2: "STATE_PRESENTED_PARTIAL", 3: "STATE_DROPPED"}
REASONS = {1: "MISSED_VSYNC_DUE_TO_DECELERATING_INPUT_FRAME_DELIVERY", 2: "MISSED_VSYNC_DURING_FAST_SCROLL",
           3: "MISSED_VSYNC_AT_START_OF_FLING", 4: "MISSED_VSYNC_DURING_FLING"}


# --- a wire-format walker, this test's own ------------------------------------------------------


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """{field number: [values]} of one message (varints as int, length-delimited as bytes)."""
    out, i = {}, 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(wt)
        out.setdefault(num, []).append(v)
    return out


def one(f, n, default=None):
    return f[n][0] if n in f else default


@pytest.fixture(scope="module")
def ref():
    """Chrome's own spans: EventLatency (type, verdict, µs span, direct child stages),
    ScrollJankV4 (is_janky, reasons), PipelineReporter (state)."""
    trace = fields(gzip.open(TRACE).read())
    names: dict[int, dict[int, str]] = {}
    defaults: dict[int, int] = {}
    stacks: dict[int, list] = {}
    out = {"el": [], "v4": [], "states": {}}
    for raw in trace[1]:  # Trace.packet
        p = fields(raw)
        seq = one(p, 10, 0)  # trusted_packet_sequence_id
        if one(p, 13, 0) & 1 or one(p, 41, 0):  # SEQ_INCREMENTAL_STATE_CLEARED / incremental_state_cleared
            names[seq] = {}
        if 12 in p:  # interned_data.event_names
            for en in fields(p[12][0]).get(2, []):
                e = fields(en)
                names.setdefault(seq, {})[one(e, 1)] = one(e, 2, b"").decode()
        if 59 in p:  # trace_packet_defaults.track_event_defaults.track_uuid
            ted = fields(p[59][0]).get(11)
            if ted and 11 in fields(ted[0]):
                defaults[seq] = fields(ted[0])[11][0]
        if 11 not in p:  # track_event
            continue
        te = fields(p[11][0])
        ts = one(p, 8)  # the Chrome capture is on one clock: no conversion needed for durations
        track = one(te, 11, defaults.get(seq))
        kind = one(te, 9)
        if kind == 1:  # SLICE_BEGIN
            name = one(te, 23, b"").decode() or names.get(seq, {}).get(one(te, 10))
            node = {"name": name, "ts": ts, "te": te, "kids": []}
            st = stacks.setdefault(track, [])
            if st:
                st[-1]["kids"].append(node)
            st.append(node)
        elif kind == 2 and stacks.get(track):  # SLICE_END
            node = stacks[track].pop()
            node["dur_ms"] = (ts - node["ts"]) / 1e6
            te_b = node["te"]
            if node["name"] == "EventLatency":
                el = fields(te_b[1032][0])
                node["type"] = one(el, 1)
                node["janky"] = bool(one(el, 5)) if 5 in el else None
                out["el"].append(node)
            elif node["name"] == "ScrollJankV4":
                v4 = fields(te_b[1078][0])
                out["v4"].append((bool(one(v4, 1, 0)), [REASONS[one(fields(r), 1)] for r in v4.get(2, [])]))
            elif node["name"] == "PipelineReporter":
                stt = STATES[one(fields(te_b[1075][0]), 1, 0)]
                out["states"][stt] = out["states"].get(stt, 0) + 1
    out["el"].sort(key=lambda n: n["ts"])
    return out


@pytest.fixture(scope="module")
def res():
    return analyze_file(str(TRACE))


def _nearest(vals, q):
    vals = sorted(vals)
    return vals[max(0, math.ceil(q / 100 * len(vals)) - 1)]


# --- the protobuf trace answers like the JSON one -----------------------------------------------


def test_chromes_verdicts_from_the_protobuf_extensions(ref, res):
    ups = [n for n in ref["el"] if n["type"] in UPDATES]
    judged = [n for n in ups if n["janky"] is not None]
    s = res.scroll
    assert res.format == "perfetto" and s is not None
    assert s.update_count == len(ups) == 246 and s.scrolls == 3
    assert (s.presented_frames, s.janky_frames) == (len(judged), sum(n["janky"] for n in judged)) == (135, 5)
    assert (s.v4_frames, s.v4_janky_frames) == (len(ref["v4"]), sum(j for j, _ in ref["v4"]))
    reasons: dict[str, int] = {}
    for j, rs in ref["v4"]:
        for r in rs if j else ():
            reasons[r] = reasons.get(r, 0) + 1
    assert s.jank_reasons == dict(sorted(reasons.items(), key=lambda kv: -kv[1]))
    assert s.frame_states == dict(sorted(ref["states"].items(), key=lambda kv: -kv[1]))
    assert s.dropped_frames == ref["states"].get("STATE_DROPPED", 0)
    assert s.janky_ratio == pytest.approx(5 / 135, abs=1e-4)


def test_latency_is_the_event_latency_slice(ref, res):
    durs = [n["dur_ms"] for n in ref["el"] if n["type"] in UPDATES]
    s = res.scroll
    assert s.latency_p50_ms == pytest.approx(_nearest(durs, 50), rel=0.01)
    assert s.latency_p90_ms == pytest.approx(_nearest(durs, 90), rel=0.01)
    assert s.latency_max_ms == pytest.approx(max(durs), rel=0.01)
    assert sorted(u.latency_ms for u in s.updates) == pytest.approx(sorted(durs), abs=0.001)


def test_the_same_answer_shape_as_the_json_capture(res):
    """Both captures of the scroll page are read into the same keys, the sentence made alike."""
    js = analyze_file(str(DATA / "scroll.trace.json.gz")).scroll
    s = res.scroll
    assert {u.type for u in s.updates} == {u.type for u in js.updates}  # event types named alike
    assert set(s.frame_states) | set(js.frame_states) <= set(STATES.values())  # frame states named alike
    assert set(s.jank_reasons) <= set(REASONS.values()) and set(js.jank_reasons) <= set(REASONS.values())
    for x in (s, js):
        assert summarize_scroll(x).startswith(f"{x.janky_frames} of {x.presented_frames} scroll frames janky")
        assert x.janky_stages and x.dominant_stage == x.janky_stages[0].name


# --- EventLatency's stages ------------------------------------------------------------------------


def _stage_reference(updates):
    """Per stage over the janky updates: (count, p50, p90, total ms); the janky latency; the
    cause per janky update (the stage grown most over the previous judged frame, this scroll)."""
    per: dict[str, list[float]] = {}
    causes: dict[str, int] = {}
    lat = 0.0
    prev = None
    for n in updates:
        if n["type"] == 21:
            prev = None
        if n["janky"] is None:
            continue
        kids = [(k["name"], k["dur_ms"]) for k in n["kids"] if "dur_ms" in k]
        if n["janky"]:
            lat += n["dur_ms"]
            for name, ms in kids:
                per.setdefault(name, []).append(ms)
            before = dict(prev or ())
            cause = max(kids, key=lambda k: k[1] - before.get(k[0], 0.0))[0]
            causes[cause] = causes.get(cause, 0) + 1
        prev = kids
    return per, lat, causes


@pytest.mark.parametrize("capture", ["scroll.pftrace.gz", "scroll.trace.json.gz"])
def test_janky_updates_name_the_stage_that_took_the_time(capture, ref):
    s = analyze_file(str(DATA / capture)).scroll
    if "pftrace" in capture:
        updates = [n for n in ref["el"] if n["type"] in UPDATES]
    else:
        updates = _json_updates(DATA / capture)
    per, lat, causes = _stage_reference(updates)
    got = {st.name: st for st in s.janky_stages}
    assert set(got) == set(per)
    for name, vals in per.items():
        st = got[name]
        assert st.janky_updates == len(vals)
        assert st.p50_ms == pytest.approx(_nearest(vals, 50), abs=0.002)
        assert st.p90_ms == pytest.approx(_nearest(vals, 90), abs=0.002)
        assert st.share_of_janky_latency == pytest.approx(sum(vals) / lat, abs=1e-3)
    dominant = max(per, key=lambda k: sum(per[k]))
    assert s.dominant_stage == dominant
    assert sum(st.share_of_janky_latency for st in s.janky_stages) == pytest.approx(1.0, abs=0.02)  # the stages tile the span
    assert s.jank_causes == dict(sorted(causes.items(), key=lambda kv: -kv[1]))
    assert [u.jank_cause for u in s.updates if u.janky] and all(u.jank_cause for u in s.updates if u.janky)


def _json_updates(path):
    """The JSON capture's scroll updates as the protobuf reference has them: EventLatency spans
    paired by id, each with the stage spans of its id that lie directly inside it."""
    raw = [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") in ("b", "e")]
    raw.sort(key=lambda e: e["ts"])
    opened: dict[tuple, list] = {}
    spans = []
    for e in raw:
        ident = json.dumps(e.get("id2") or e.get("id"), sort_keys=True)
        k = (e["pid"], ident, e["name"])
        if e["ph"] == "b":
            opened.setdefault(k, []).append(e)
        elif opened.get(k):
            b = opened[k].pop(0)
            spans.append({"name": e["name"], "id": (e["pid"], ident), "ts": b["ts"], "end": e["ts"], "args": b.get("args", {})})
    by_id: dict[tuple, list] = {}
    for sp in spans:
        by_id.setdefault(sp["id"], []).append(sp)
    out = []
    for sp in spans:
        if sp["name"] != "EventLatency":
            continue
        el = sp["args"]["event_latency"]
        code = {v: k for k, v in UPDATES.items()}.get(el["event_type"])
        if code is None:
            continue
        inside = sorted((x for x in by_id[sp["id"]] if x["name"] not in ("EventLatency", "ScrollJankV4", "PipelineReporter")
                         and sp["ts"] <= x["ts"] and x["end"] <= sp["end"]), key=lambda x: (x["ts"], -(x["end"] - x["ts"])))
        kids, edge = [], None
        for x in inside:
            if edge is not None and x["ts"] < edge and x["end"] <= edge:
                continue
            kids.append({"name": x["name"], "dur_ms": (x["end"] - x["ts"]) / 1000.0})
            edge = x["end"]
        out.append({"type": code, "ts": sp["ts"], "dur_ms": (sp["end"] - sp["ts"]) / 1000.0, "kids": kids,
                    "janky": el.get("is_janky_scrolled_frame")})
    out.sort(key=lambda n: n["ts"])
    return out


# --- bad input in a protobuf trace ----------------------------------------------------------------


def _ext(te, field: int, payload: bytes):
    """``te`` with a ChromeTrackEvent extension appended as raw bytes (protobuf keeps it unknown)."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    def varint(v):
        out = bytearray()
        while True:
            b, v = v & 0x7F, v >> 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)

    return pb.TrackEvent.FromString(te.SerializeToString() + varint(field << 3 | 2) + varint(len(payload)) + payload)


def test_a_broken_extension_an_unended_update_and_stages_in_a_built_trace(tmp_path):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    b = TraceProtoBuilder()
    p = b.add_packet()
    p.track_descriptor.uuid, p.track_descriptor.process.pid = 1, 10
    p = b.add_packet()
    p.track_descriptor.uuid, p.track_descriptor.parent_uuid, p.track_descriptor.name = 2, 1, "EventLatency"
    p = b.add_packet()
    p.track_descriptor.uuid, p.track_descriptor.parent_uuid = 3, 1

    def ev(ts_ms, kind, track, name=None, ext=None):
        pk = b.add_packet()
        pk.timestamp, pk.trusted_packet_sequence_id = int(ts_ms * 1e6), 7
        te = pb.TrackEvent(type=kind, track_uuid=track)
        if name:
            te.name = name
        for field, payload in ext or ():
            te = _ext(te, field, payload)
        pk.track_event.CopyFrom(te)

    B, E = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
    janky_update = bytes([0x08, 10, 0x28, 1])  # event_type GESTURE_SCROLL_UPDATE, is_janky_scrolled_frame
    ev(100, B, 2, "EventLatency", [(1032, janky_update)])
    ev(100, B, 2, "GenerationToBrowserMain"); ev(101, E, 2)
    ev(101, B, 2, "SubmitCompositorFrameToPresentationCompositorFrame")
    ev(101, B, 2, "SubmitToReceiveCompositorFrame"); ev(130, E, 2)  # a sub-stage: not a stage of its own
    ev(130, E, 2)
    ev(130, E, 2)
    ev(200, B, 2, "EventLatency", [(1032, b"\x08")])  # truncated: no event type read, no crash
    ev(210, E, 2)
    ev(300, B, 3, "EventLatency", [(1032, bytes([0x08, 26]))])  # an inertial update that never ends
    path = tmp_path / "built.pftrace"
    path.write_bytes(b.serialize())

    res = analyze_file(str(path))
    s = res.scroll
    assert s.update_count == 2 and (s.presented_frames, s.janky_frames) == (1, 1)
    assert [st.name for st in s.janky_stages] == ["SubmitCompositorFrameToPresentationCompositorFrame",
                                                  "GenerationToBrowserMain"]
    assert (s.janky_stages[0].p50_ms, s.janky_stages[0].share_of_janky_latency) == (29.0, pytest.approx(29 / 30, abs=1e-4))
    assert s.dominant_stage == "SubmitCompositorFrameToPresentationCompositorFrame" == s.updates[0].jank_cause
    assert s.updates[1].latency_ms is None
    assert any("1 scroll update had no end" in w for w in res.warnings)
