"""The PerfData digest the differential tests compare (tests/test_perfetto_differential.py,
tests/test_speedscope_differential.py): every table of a reader's output, hashed, so a value
that moves in its last bit fails."""

from __future__ import annotations

import hashlib


def _h(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def perfdata_digest(pd) -> dict:
    """Every table of a PerfData, in stored order, as hashes (per thread for the big ones)."""
    s = pd.strings

    def cols(c) -> str:
        return _h(list(c.ts), list(c.dur), [s[i] for i in c.name])

    covered = {"format", "slices", "async_slices", "sched_intervals", "thread_states", "threads", "processes",
               "locations", "instants", "counters", "counter_units", "frames", "frame_summary", "startup_runs",
               "startup_phases", "stacks", "stack_samples", "frame_refs", "meta", "start_us", "end_us",
               "warnings", "partial", "skipped_events", "stored", "stopped_at_cap", "source", "_frame_ids"}
    fields = dict(vars(pd))
    # Issue 26 moved two tables without changing them: the string index into the string table
    # (``strings.ids``), and the facts metrics read out of ``meta`` into the typed ``facts``
    # (digested with ``meta`` as they are shown, under their old names).
    fields["_string_ids"] = dict(pd.strings.ids)
    del fields["facts"]
    other = {k: _h(repr(v)) for k, v in sorted(fields.items()) if k not in covered}  # open_slices, lenses…
    return {
        "other": other,
        "format": pd.format,
        "slices": {f"{k[0]}/{k[1]}": cols(c) for k, c in pd.slices.items()},
        "async_slices": {f"{k[0]}/{k[1]}": cols(c) for k, c in pd.async_slices.items()},
        "sched_intervals": {
            f"{k[0]}/{k[1]}": _h(list(c.ts), list(c.dur), list(c.state), list(c.io_wait))
            for k, c in pd.sched_intervals.items()
        },
        "thread_states": _h(list(pd.thread_states.items())),
        "threads": _h([(k, t.name, t.is_main) for k, t in pd.threads.items()]),
        "processes": _h(list(pd.processes.items())),
        "locations": _h(sorted(pd.locations.items())),
        "instants": _h(pd.instants),
        "counters": {k: _h(v) for k, v in pd.counters.items()},
        "counter_units": _h(list(pd.counter_units.items())),
        "frames": _h([repr(f) for f in pd.frames]),
        "frame_summary": _h(list(pd.frame_summary.items())),
        "startup_runs": _h([repr(r) for r in pd.startup_runs]),
        "startup_phases": _h([repr(p) for p in pd.startup_phases]),
        "stacks": _h(list(pd.stacks.items()), list(pd.stack_samples.items()), [repr(f) for f in pd.frame_refs]),
        "meta": pd.shown_meta(),
        "bounds": [pd.start_us, pd.end_us],
        "warnings": list(pd.warnings),
        "partial": pd.partial,
        "skipped_events": pd.skipped_events,
        "stored": pd.stored,
        "stopped_at_cap": pd.stopped_at_cap,
        "slice_count": pd.slice_count,
    }
