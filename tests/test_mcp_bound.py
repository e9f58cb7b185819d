"""app/mcp/bound.py: every MCP result fits the bound and says what was cut."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from app.mcp.bound import MAX_RESULT_CHARS, bound, size


def test_a_small_result_is_returned_as_it_is():
    r = {"tool": "route", "route": "explorer", "confidence": 0.9}
    assert bound(r) == r


def test_long_lists_and_texts_are_cut_first_items_kept_and_named():
    r = {
        "tool": "ask",
        "hotspots": [{"name": f"f{i}", "self_ms": 1000 - i} for i in range(3000)],
        "answer": "word " * 20_000,
    }
    b = bound(r)
    assert size(b) <= MAX_RESULT_CHARS
    assert b["hotspots"] == r["hotspots"][: len(b["hotspots"])]  # the first (worst) kept
    assert b["answer"].endswith(" […]") and r["answer"].startswith(b["answer"][:-4])
    notes = dict(t.split(": ", 1) for t in b["truncated"])
    assert notes["hotspots"] == f"kept {len(b['hotspots'])} of 3000 items"
    assert notes["answer"] == f"kept {len(b['answer']) - 4} of {len(r['answer'])} characters"


def test_nested_paths_are_named():
    r = {"tool": "analyze", "startup": {"imports": [{"module": "m" * 50} for _ in range(2000)]}}
    b = bound(r)
    assert size(b) <= MAX_RESULT_CHARS
    assert any(t.startswith("startup.imports: kept ") for t in b["truncated"])


def test_thousands_of_small_keys_still_fit():
    r = {"tool": "x", "status": "done", **{f"k{i}": i for i in range(10_000)}}
    b = bound(r)
    assert size(b) <= MAX_RESULT_CHARS and b["status"] == "done" and b["truncated"]


def build(shape: list[tuple[str, int]]) -> dict:
    """A result of the given shape: long lists of records, long texts, nested lists, unicode."""
    out: dict = {"tool": "t", "status": "done"}
    for i, (kind, n) in enumerate(shape):
        if kind == "records":
            out[f"k{i}"] = [{"name": "函数" * (j % 7), "ms": j} for j in range(n)]
        elif kind == "text":
            out[f"k{i}"] = "慢" * n * 3
        elif kind == "nested":
            out[f"k{i}"] = {"inner": [["x" * 40] * (n % 9 + 1)] * n}
        else:
            out[f"k{i}"] = n
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["records", "text", "nested", "number"]), st.integers(0, 4000)), max_size=10))
def test_any_result_fits_and_stays_json(shape):
    r = build(shape)
    b = bound(r, limit=5_000)
    assert size(b) <= 5_000
    assert json.loads(json.dumps(b, ensure_ascii=False)) == b
    if size(r) <= 5_000 - 1_500:
        assert b == r
    else:
        assert b["truncated"]
