"""The sections a message names (nodes/routing/section.py): quoted names or identifier-shaped
names beside a section word, in either language; nothing without the word."""

from __future__ import annotations

import pytest

from nodes.routing.extract import extract
from nodes.routing.section import sections_of


@pytest.mark.parametrize("text, want", [
    ('how much energy did the "startActivityAndWait" section use in a.perfetto-trace?', ["startActivityAndWait"]),
    ("「launching: com.demo.shop」这段的耗电是多少？a.perfetto-trace", ["launching: com.demo.shop"]),
    ("startActivityAndWait这段的耗电是多少？a.perfetto-trace", ["startActivityAndWait"]),
    ("power during the measureBlock section of x.perfetto-trace", ["measureBlock"]),
    ("energy of section Choreographer#doFrame in t.pftrace", ["Choreographer#doFrame"]),
    ("perfscout analyze t.pftrace --section measureBlock", ["measureBlock"]),
    ("which section uses the most power in x.pftrace", []),  # no name: nothing to measure
    ('look at "foo.py" section', []),  # a path is no section
    ('why is "measureBlock" slow in x.pftrace', []),  # no section word
    ("", []),
])
def test_sections_of(text, want):
    f = extract(text)
    assert sections_of(text, f.quoted, f.paths + f.data_paths) == want
