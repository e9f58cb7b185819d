"""A sampled speedscope profile's samples, aggregated by stack in vectorised passes.

py-spy writes one sample per stack walk: at 100 Hz for a few minutes across threads that is
millions of samples but only thousands of distinct stacks. The reader's per-sample loop
(nodes/perf/parsers/speedscope.py ``_sampled_generic``) cost ~10 µs a sample (~100 s for 10 M).
Here the work per sample is a few numpy operations; the per-sample Python logic (process
frames, frame ids, the depth cap, bad and empty stacks) runs once per *distinct* stack:

1. the ``samples`` array is decoded in blocks of a few MB (msgspec, typed ``list[list[int]]``)
   — never the whole array as Python lists (8 M empty stacks held as lists were ~700 MB);
2. each block's stacks are hashed (a polynomial over the frame indexes, in uint64) and
   grouped with ``np.unique``; every sample is checked equal to its group's first sample, and
   each group to the stack already known under that hash, so a hash collision cannot merge
   two stacks (it sends the profile to the per-sample reader instead);
3. the distinct stacks are handled in the order of their first sample, exactly as the
   per-sample loop would meet them — so frame ids, the event cap and process names come out
   in the same order;
4. each sample's weight is added to its stack's sum with ``np.add.at``: in sample order, one
   addition at a time, so the float sums are bit for bit those of the per-sample loop.

Anything this does not handle exactly — a sample that is not a list of integers, a weight
that is not a finite number ≥ 0, process frames in a profile named without a pid (its pid
then changes from sample to sample), an integer beyond 64 bits, a hash collision — raises
:class:`Fallback` before anything is stored, and the caller reads the file with the
per-sample code. The result is the same either way (tests/test_speedscope_differential.py).
"""

from __future__ import annotations

from itertools import chain
from typing import Callable, Iterator

import msgspec
import numpy as np

from nodes.perf.model import CapacityReached, PerfData

#: Bytes of the samples (or weights) array decoded at a time.
BLOCK_BYTES = 1 << 20
#: Samples summed at a time (bounds the temporary arrays).
SLICE = 1 << 20
#: A single sample longer than this goes to the per-sample reader.
MAX_SAMPLE_BYTES = 64 << 20

_STACKS = msgspec.json.Decoder(list[list[int]])
_WEIGHTS = msgspec.json.Decoder(list[float])
_MIX = np.uint64(0x9E3779B97F4A7C15)
_POLY = np.uint64(0x100000001B3)
_LEN = np.uint64(0xC2B2AE3D27D4EB4F)


class Fallback(Exception):
    """This profile needs the per-sample reader (nothing was stored)."""


def _blocks(mv: memoryview, cut: bytes) -> Iterator[bytes]:
    """The array's contents as ``[...]`` pieces of about BLOCK_BYTES, each cut just after a
    ``cut`` byte (``]`` for stacks, ``,`` for weights), separators dropped. A piece that is
    not what the cut assumes fails to decode as its type, and the caller falls back."""
    n = len(mv)
    if n < 2 or mv[0] != 0x5B or mv[n - 1] != 0x5D:
        raise Fallback()
    end = n - 1  # the closing bracket
    p = 1
    first = True
    while p < end:
        q = min(p + BLOCK_BYTES, end)
        while True:
            piece = bytes(mv[p:q])
            if q == end:
                body, adv = piece, len(piece)
                break
            k = piece.rfind(cut)
            if k >= 0:
                body, adv = (piece[: k + 1] if cut == b"]" else piece[:k]), k + 1
                break
            if q - p > MAX_SAMPLE_BYTES:
                raise Fallback()
            q = min(q + BLOCK_BYTES, end)
        body = body.lstrip()
        if cut == b"]" and not first:
            if body[:1] != b",":
                raise Fallback()
            body = body[1:]
        first = False
        if not body.strip():
            raise Fallback()
        yield b"[" + body + b"]"
        p += adv


def _stack_blocks(mv: memoryview):
    for piece in _blocks(mv, b"]"):
        try:
            yield _STACKS.decode(piece)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise Fallback() from None


def weights_of(raw: msgspec.Raw, n: int, mult: float) -> tuple[np.ndarray | None, int]:
    """(the weights times ``mult`` as float64 when there are ``n`` of them, else None; how many
    there are). Fallback unless every one is a finite number ≥ 0."""
    out = np.empty(n, np.float64)
    count = 0
    for piece in _blocks(memoryview(raw), b","):
        try:
            a = np.array(_WEIGHTS.decode(piece), dtype=np.float64)
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise Fallback() from None
        if not (np.isfinite(a).all() and (a >= 0).all()):
            raise Fallback()
        if count + len(a) <= n:
            out[count : count + len(a)] = a
        count += len(a)
    if count != n:
        return None, count
    out *= mult  # the same product per sample as the per-sample reader's ``wv * mult``
    return out, count


def distinct_stacks(raw: msgspec.Raw) -> tuple[np.ndarray, list[tuple[int, ...]], list[int]]:
    """(each sample's stack number, the distinct stacks in order of first sample, the index of
    each one's first sample). Nothing is stored anywhere; Fallback as the module says."""
    index: dict[int, int] = {}
    reps: list[tuple[int, ...]] = []
    first_at: list[int] = []
    parts: list[np.ndarray] = []
    pw = np.ones(1, np.uint64)
    done = 0
    for lists in _stack_blocks(memoryview(raw)):
        m = len(lists)
        lengths = np.fromiter(map(len, lists), np.int64, m)
        total = int(lengths.sum())
        try:
            flat = np.fromiter(chain.from_iterable(lists), np.int64, total)
        except OverflowError:
            raise Fallback() from None
        del lists
        starts = np.cumsum(lengths) - lengths
        longest = int(lengths.max()) if m else 0
        if len(pw) <= longest:
            pw = np.cumprod(np.concatenate([np.ones(1, np.uint64), np.full(longest, _POLY, np.uint64)]))
        owner = np.repeat(np.arange(m), lengths)
        pos = np.arange(total) - starts[owner]
        terms = (flat.view(np.uint64) + np.uint64(1)) * _MIX * pw[pos]
        prefix = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms, dtype=np.uint64)])
        h = (prefix[starts + lengths] - prefix[starts]) ^ (lengths.view(np.uint64) * _LEN)
        uniq, first, inv = np.unique(h, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)
        rep = first[inv]
        if not (lengths == lengths[rep]).all() or not (flat == flat[starts[rep][owner] + pos]).all():
            raise Fallback()  # two stacks share a hash within the block
        lut = np.empty(len(uniq), np.int64)
        for u in np.argsort(first, kind="stable").tolist():
            s = int(first[u])
            stack = tuple(flat[starts[s] : starts[s] + lengths[s]].tolist())
            key = int(uniq[u])
            g = index.get(key)
            if g is None:
                g = index[key] = len(reps)
                reps.append(stack)
                first_at.append(done + s)
            elif reps[g] != stack:
                raise Fallback()  # a hash collision across blocks
            lut[u] = g
        parts.append(lut[inv].astype(np.int32 if len(reps) < 2**31 else np.int64))
        done += m
    gids = np.concatenate(parts) if parts else np.empty(0, np.int32)
    return gids, reps, first_at


def add_profile(
    pd: PerfData,
    gids: np.ndarray,
    reps: list[tuple[int, ...]],
    first_at: list[int],
    weights_us: np.ndarray | float,
    track: tuple[int, int],
    key_of_stack: Callable[[tuple[int, ...]], tuple[int, ...] | None],
) -> tuple[int, int, bool]:
    """Store one profile's samples; returns (bad samples, empty samples, any stored).

    ``key_of_stack`` is the per-sample reader's logic for one stack, called once per distinct
    stack in order of first sample: the frame ids to store (root first), ``()`` for a stack
    with no frames, None for a malformed one. ``weights_us``: per sample, or one value for all."""
    keys: list[tuple[tuple[int, int], tuple[int, ...]]] = []
    slot: dict[tuple[tuple[int, int], tuple[int, ...]], int] = {}
    key_of = np.full(len(reps), -1, np.int32 if len(reps) < 2**31 else np.int64)
    stop: CapacityReached | None = None
    limit = len(gids)
    for g, stack in enumerate(reps):
        try:
            ids = key_of_stack(stack)
        except CapacityReached as full:  # a new frame beyond the cap
            stop, limit = full, first_at[g]
            break
        if ids is None:
            key_of[g] = -1
            continue
        if not ids:
            key_of[g] = -2
            continue
        key = (track, ids)
        k = slot.get(key)
        if k is None:
            try:
                pd.reserve_stack(key)
            except CapacityReached as full:
                stop, limit = full, first_at[g]
                break
            k = slot[key] = len(keys)
            keys.append(key)
            if k == 0:
                pd.thread(*track)
        key_of[g] = k
    # Two more slots collect the malformed and the empty samples, so no per-sample array is
    # masked; the samples are summed a slice at a time (np.add.at adds in order, in place).
    nkeys = len(keys)
    key_of[key_of == -1] = nkeys
    key_of[key_of == -2] = nkeys + 1
    sums = np.array([pd.stacks.get(key, 0.0) for key in keys] + [0.0, 0.0], np.float64)
    counts = np.zeros(nkeys + 2, np.int64)
    per_sample = isinstance(weights_us, np.ndarray)
    for i in range(0, limit, SLICE):
        j = min(i + SLICE, limit)
        kk = key_of[gids[i:j]].astype(np.intp)
        np.add.at(sums, kk, weights_us[i:j] if per_sample else np.full(j - i, weights_us))
        counts += np.bincount(kk, minlength=nkeys + 2)
    bad, empty = int(counts[nkeys]), int(counts[nkeys + 1])
    counts[:nkeys] += np.array([pd.stack_samples.get(key, 0) for key in keys], np.int64)
    for key, s, c in zip(keys, sums[:nkeys].tolist(), counts[:nkeys].tolist()):
        pd.set_stack_totals(key, s, c)
    if stop is not None:
        raise stop
    return bad, empty, nkeys > 0  # every stored stack has a sample before ``limit``
