"""Scheduler states, as trace_processor's task-state strings define them: one decoder for
every reader of ``sched_switch`` (Perfetto protobuf, atrace/systrace text) and the one set of
interval codes the metrics read.

trace_processor stores a switched-out task's state as a string (``thread_state.state``):
"R" runnable, "R+" runnable and preempted, otherwise the letters of its flags in a fixed
order — S interruptible sleep, D uninterruptible, T stopped, t traced, X exit dead, Z zombie,
P parked, x task dead, K wake-kill, W waking, N no-load, I idle — so a killable disk sleep is
"DK" (systrace text writes it "D|K"). perfetto src/trace_processor/types/task_state.cc builds
the string from the raw ``prev_state`` bits (:func:`from_raw`) and from systrace text
(:func:`from_text`); stdlib sched/states.sql names the letters. A string that cannot be read is
None (trace_processor's NULL state, counted as blocked).
"""

from __future__ import annotations

import enum
import re

#: The letters in the order trace_processor writes them (task_state.cc ToString).
LETTERS = "SDTtXZPxKWNI"
_ORDER = {c: i for i, c in enumerate(LETTERS)}
#: A task in one of these is gone: exit dead, zombie, task dead.
DEAD_LETTERS = frozenset("XZx")


class SchedState(enum.IntEnum):
    """The interval codes of ``PerfData.sched_intervals``, named as ``thread_state.state``
    names them: Running, R, R+, S, D, and every other state (T, t, X, Z, P, x, K, W, N, I)."""

    RUNNING = 0
    R = 1
    R_PREEMPTED = 2
    S = 3
    D = 4
    OTHER = 5

    @property
    def label(self) -> str:
        """trace_processor's name: "Running", "R", "R+", "S", "D", or "other"."""
        return _LABELS[self]

    @property
    def runnable(self) -> bool:
        return self in (SchedState.R, SchedState.R_PREEMPTED)


_LABELS = {SchedState.RUNNING: "Running", SchedState.R: "R", SchedState.R_PREEMPTED: "R+",
           SchedState.S: "S", SchedState.D: "D", SchedState.OTHER: "other"}


def from_raw(raw: int, kernel: tuple[int, int] | None) -> str | None:
    """``sched_switch.prev_state`` → the string trace_processor stores, None if invalid.

    As task_state.cc decodes it: bits up to 0x20 are S D T t X Z on every kernel. From 4.14,
    0x40 is P (parked), 0x80 I (idle), 0x100 the preemption flag, anything above invalid.
    Before 4.14, 0x40 is x (TASK_DEAD), 0x80 K, 0x100 W, 0x200 P, 0x400 N, D+N is I, and
    preemption (TASK_STATE_MAX) is 0x1000 from 4.8, 0x800 before. One deliberate difference:
    trace_processor reads every kernel before 4.8 with the 4.4 layout (its header says this is
    "most likely incorrect on <4.2"); kernels before 4.2 have no TASK_NOLOAD and report
    preemption as 0x400, which we read as such (the API 24 capture's 3.10 kernel preempts with
    1024, which trace_processor would call "N"). With no kernel version the 4.4 layout is
    assumed, as trace_processor does.
    """
    version = kernel or (4, 4)
    out = [c for i, c in enumerate("SDTtXZ") if raw & (1 << i)]
    if version >= (4, 14):
        if raw & 0xFE00:
            return None
        if raw & 0x40:
            out.append("P")
        if raw & 0x80:
            out.append("I")
        preempted = bool(raw & 0x100)
    else:
        preempt = 0x1000 if version >= (4, 8) else 0x800 if version >= (4, 2) else 0x400
        extra = ((0x40, "x"), (0x80, "K"), (0x100, "W"), (0x200, "P"))
        if version >= (4, 2):
            extra += ((0x400, "N"),)
        out += [c for bit, c in extra if raw & bit]
        out.sort(key=_ORDER.__getitem__)
        if out == ["D", "N"]:
            out = ["I"]
        preempted = bool(raw & preempt)
    if not out:
        return "R+" if preempted else "R"
    return "".join(out)


def from_text(text: str) -> str | None:
    """A systrace ``prev_state=`` value ("R", "R+", "S", "D|K", "x", …) → the same string,
    None if invalid — task_state.cc's TaskState(const char*): a leading R is runnable (R+ when
    the value is exactly "R+"), otherwise known letters separated by '|' or not."""
    if not text:
        return None
    if text[0] == "R":
        return "R+" if text == "R+" else "R"
    letters = set()
    for c in text:
        if c == "|":
            continue
        if c not in _ORDER:
            return None
        letters.add(c)
    return "".join(sorted(letters, key=_ORDER.__getitem__)) or None


def classify(state: str | None) -> tuple[str | None, SchedState]:
    """A state string → (coarse state for the per-thread totals, interval code).

    The coarse state is "runnable" (R, R+), "sleeping" (any other live state, and a state
    that could not be read, which trace_processor counts as blocked), or None for a dead task
    (X, Z, x): its time is in no total, in every reader. The code is R, R+, S or D when the
    string is exactly that, D for any uninterruptible state with flags ("DK"), S for "S" with
    flags, else other.
    """
    if state == "R":
        return "runnable", SchedState.R
    if state == "R+":
        return "runnable", SchedState.R_PREEMPTED
    if state is None:
        return "sleeping", SchedState.OTHER
    if DEAD_LETTERS & set(state):
        return None, SchedState.OTHER
    if "D" in state:
        return "sleeping", SchedState.D
    if "S" in state:
        return "sleeping", SchedState.S
    return "sleeping", SchedState.OTHER


def kernel_version(uname: str | None) -> tuple[int, int] | None:
    """(major, minor) from a ``Linux 5.10.107-android13 …`` line, None when it says none."""
    m = re.search(r"(\d+)\.(\d+)", uname or "")
    return (int(m.group(1)), int(m.group(2))) if m else None
