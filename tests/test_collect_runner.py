"""The runner with real processes: limits, whole-tree stop, bounded output, Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graph.enums import ErrorKind
from nodes.collect.runner import BoundedCapture, Launched, run_bounded
from nodes.framework.errors import ToolFailure
from tests.helpers.processes import alive

REPO = Path(__file__).resolve().parents[1]

#: A program that starts a child, a grandchild that leaves the process group (setsid), and an
#: orphan whose parent exits at once (double fork), writes their pids, then hangs.
FORKER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    pids = []
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    pids.append(child.pid)
    r, w = os.pipe()
    if os.fork() == 0:                      # escapes the group: new session
        os.setsid()
        os.write(w, f"{os.getpid()}\\n".encode())
        time.sleep(120)
        os._exit(0)
    if os.fork() == 0:                      # double fork: the middle process exits at once
        if os.fork() == 0:
            os.write(w, f"{os.getpid()}\\n".encode())
            time.sleep(120)
            os._exit(0)
        os._exit(0)
    os.close(w)
    got = b""
    while got.count(b"\\n") < 2:
        got += os.read(r, 100)
    pids += [int(x) for x in got.split()]
    with open(sys.argv[1], "w") as f:
        f.write(" ".join(map(str, pids)))
    if len(sys.argv) > 2:
        sys.exit(int(sys.argv[2]))          # leave the children behind and exit
    signal_ignored = __import__("signal")
    signal_ignored.signal(signal_ignored.SIGTERM, signal_ignored.SIG_IGN)
    time.sleep(120)
    """
)


def _wait_for(path: Path, timeout: float = 20.0) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def _assert_all_gone(pids: list[int], timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(alive(p) for p in pids):
        time.sleep(0.05)
    assert [p for p in pids if alive(p)] == []


def test_hang_stopped_at_limit_with_every_descendant(tmp_path):
    script = tmp_path / "forker.py"
    script.write_text(FORKER)
    pids_file = tmp_path / "pids"
    with Launched([sys.executable, str(script), str(pids_file)]) as prog:
        pids = _wait_for(pids_file)
        assert all(alive(p) for p in pids)
        assert prog.wait(0.5) == "timeout"
    res = prog.result()
    assert res.outcome == "timeout"
    assert res.returncode == -signal.SIGKILL  # it ignored SIGTERM
    assert set(pids) <= set(res.stopped_pids)
    _assert_all_gone(pids + [res.pid])


def test_children_left_behind_after_a_normal_exit_are_stopped(tmp_path):
    script = tmp_path / "forker.py"
    script.write_text(FORKER)
    pids_file = tmp_path / "pids"
    res = run_bounded([sys.executable, str(script), str(pids_file), "0"], timeout_s=30)
    assert res.outcome == "exited" and res.returncode == 0
    pids = _wait_for(pids_file)
    assert set(pids) <= set(res.stopped_pids)
    _assert_all_gone(pids)


def test_hundred_megabytes_of_output_is_kept_bounded():
    code = "import sys\nb = b'x' * 1048575 + b'\\n'\nfor _ in range(100): sys.stdout.buffer.write(b)\nprint('THE END')"
    res = run_bounded([sys.executable, "-c", code], timeout_s=120, capture_limit=64 * 1024)
    assert res.returncode == 0
    assert res.stdout.total == 100 * 1048576 + len("THE END\n")
    assert res.stdout.truncated
    kept = res.stdout.data()
    assert len(kept) < 70 * 1024
    assert kept.rstrip().endswith(b"THE END")
    assert b"bytes not kept" in kept


def test_exit_at_once_and_nonzero_exit_are_reported():
    quick = run_bounded([sys.executable, "-c", "pass"], timeout_s=30)
    assert (quick.outcome, quick.returncode, quick.stopped_pids) == ("exited", 0, [])
    bad = run_bounded([sys.executable, "-c", "import sys; print('boom: bad input', file=sys.stderr); sys.exit(3)"], 30)
    assert bad.returncode == 3
    assert "boom: bad input" in bad.stderr_tail()


@pytest.mark.parametrize("name, words", [("missing", "not found"), ("plain.txt", "not executable")])
def test_a_program_that_cannot_start_is_a_validation_error(tmp_path, name, words):
    (tmp_path / "plain.txt").write_text("not a program\n")
    with pytest.raises(ToolFailure) as e:
        run_bounded([str(tmp_path / name)], 5)
    assert e.value.kind is ErrorKind.VALIDATION
    assert words in e.value.message


def test_ctrl_c_stops_the_program_tree(tmp_path):
    """SIGINT to a PerfScout process mid-run: KeyboardInterrupt, and the program tree is gone."""
    script = tmp_path / "forker.py"
    script.write_text(FORKER)
    pids_file = tmp_path / "pids"
    driver = tmp_path / "driver.py"
    driver.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(REPO)!r})
            from nodes.collect.runner import run_bounded
            try:
                run_bounded([sys.executable, {str(script)!r}, {str(pids_file)!r}], timeout_s=120)
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                sys.exit(130)
            """
        )
    )
    proc = subprocess.Popen([sys.executable, str(driver)], stdout=subprocess.PIPE, text=True)
    try:
        pids = _wait_for(pids_file)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in out
    _assert_all_gone(pids)


def test_bounded_capture_keeps_head_and_tail_and_sees_lines_across_chunks():
    lines: list[str] = []
    cap = BoundedCapture(limit=40, on_line=lines.append)
    for chunk in (b"first li", b"ne\nsecond", b" line\n", b"x" * 100, b"\nlast line\n"):
        cap.feed(chunk)
    cap.close()
    assert lines == ["first line", "second line", "x" * 100, "last line"]
    data = cap.data()
    assert data.startswith(b"first line")
    assert data.endswith(b"last line\n")
    assert cap.truncated and cap.total == 10 + 1 + 11 + 1 + 100 + 1 + 10


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=200, deadline=None)
@given(
    chunks=st.lists(st.binary(max_size=300).map(lambda b: b.replace(b"\r", b"")), max_size=20),
    limit=st.integers(min_value=0, max_value=600),
)
def test_bounded_capture_property_any_chunking(chunks, limit):
    """Whatever the chunking: every line seen once, the total exact, head and tail are the
    stream's real first and last bytes, and what is kept never exceeds the limit by more than
    the marker line."""
    lines: list[str] = []
    cap = BoundedCapture(limit=limit, on_line=lines.append)
    for c in chunks:
        cap.feed(c)
    cap.close()
    whole = b"".join(chunks)
    assert cap.total == len(whole)
    expected = whole.decode("utf-8", "replace").split("\n")
    if expected and expected[-1] == "":
        expected.pop()
    assert lines == expected
    kept = cap.data()
    if not cap.truncated:
        assert kept == whole
    else:
        head, _, tail = kept.partition(b"\n[... ")
        assert whole.startswith(head) and len(head) == limit // 4
        tail = tail.split(b" bytes not kept ...]\n", 1)[1]
        assert whole.endswith(tail) and len(tail) <= limit - limit // 4
