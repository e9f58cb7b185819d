"""Byte mutations for the wire tests' hypothesis runs: real packets flipped, set, grown, shrunk, cut.

Shared by tests/test_perfetto_wire_native.py (C walk vs numpy) and tests/test_perfetto_bundle_view.py
(C bundle check vs upb), which mutate the same real captures."""

from __future__ import annotations

from hypothesis import strategies as st

#: One mutation: (operation, position modulo the length, byte value).
mutation = st.tuples(st.sampled_from(["flip", "set", "insert", "delete", "cut"]), st.integers(0, 1 << 16),
                     st.integers(0, 255))


def mutate(raw: bytes, muts) -> bytes:
    """``raw`` with each mutation of ``muts`` applied in turn (none once it is empty)."""
    b = bytearray(raw)
    for op, at, val in muts:
        if not b:
            break
        i = at % len(b)
        if op == "flip":
            b[i] ^= 1 << (val % 8)
        elif op == "set":
            b[i] = val
        elif op == "insert":
            b[i:i] = bytes([val])
        elif op == "delete":
            del b[i]
        else:
            del b[i:]
    return bytes(b)
