"""One check shared by the atrace pairing tests (tests/test_perfetto_slice_pairing.py, small
thread ids that collide; tests/test_perfetto_atrace_log.py, ids beyond int32): the vectorised
pairing (perfetto_slices.pair) gives what the stack walk (_pair_reference) gives."""

from nodes.perf.parsers.perfetto_slices import AtraceLog, _pair_reference, pair


def assert_pairs_as_the_stack_walk(events) -> None:
    """``events``: (tid, ts, code, name id) rows, code 1 a begin, 2 an end (an end's name is 0)."""
    log = AtraceLog()
    for tid, ts, code, nid in events:
        log.push(tid, ts, code, nid if code == 1 else 0)
    want, w_unmatched, w_unfinished = _pair_reference(log)
    got, unmatched, unfinished = pair(log)
    assert (unmatched, unfinished) == (w_unmatched, w_unfinished)
    assert [(t, list(zip(a.tolist(), b.tolist(), c.tolist())), list(zip(d.tolist(), e.tolist())))
            for t, a, b, c, d, e in got] == want
