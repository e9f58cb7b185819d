"""perfetto_heap.give_back: glibc's malloc_trim where there is one, nothing elsewhere."""

from __future__ import annotations

import sys

import pytest

from nodes.perf.parsers import perfetto_heap


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_give_back_calls_malloc_trim_on_linux(monkeypatch):
    fn = perfetto_heap._trim()
    if fn is None:
        pytest.skip("no malloc_trim in this C library")
    calls = []
    monkeypatch.setattr(perfetto_heap, "_trim", lambda: lambda pad: calls.append(pad) or 1)
    perfetto_heap.give_back()
    assert calls == [0]
    assert fn(0) in (0, 1)  # the real one: 1 when memory was given back


def test_give_back_is_a_no_op_without_malloc_trim(monkeypatch):
    monkeypatch.setattr(perfetto_heap, "_trim", lambda: None)
    perfetto_heap.give_back()
