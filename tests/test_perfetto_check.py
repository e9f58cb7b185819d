"""``perfscout perfetto-check``: the no-binary path for real, the comparison against a
trace-processor-shaped stand-in built here (no trace_processor_shell exists on this machine)."""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from app import perfetto_check_cmd as check
from nodes.perf.parsers import perfetto

WARM = Path(__file__).parent / "data" / "perfetto" / "api32_startup_warm.perfetto-trace"


def _never(*_a):
    raise AssertionError("the trace processor must not be started")


class FakeProcessor:
    """Answers the command's three queries from a TraceSummary, as TraceProcessor rows would."""

    def __init__(self, summary: check.TraceSummary):
        self.s = summary
        self.closed = False

    def query(self, sql: str):
        if sql == check.SQL_SLICES_PER_THREAD:
            return [SimpleNamespace(pid=p, tid=t, n=n) for (p, t), n in self.s.slices.items()]
        if sql == check.SQL_FRAMES:
            return [SimpleNamespace(frames=self.s.frames, janky=self.s.janky)]
        if sql == check.SQL_RUNNING:
            return [SimpleNamespace(pid=p, tid=t, running_ns=ms * 1e6) for (p, t), ms in self.s.running_ms.items()]
        raise AssertionError(f"unexpected query {sql!r}")

    def close(self):
        self.closed = True


@pytest.fixture(scope="module")
def ours():
    return check.summarize_reader(perfetto.parse(str(WARM)))


@pytest.fixture
def fake_binary(tmp_path):
    b = tmp_path / "trace_processor_shell"
    b.write_text("#!/bin/sh\nexit 3\n")
    b.chmod(b.stat().st_mode | stat.S_IXUSR)
    return str(b)


def test_without_a_binary_it_says_so_and_starts_nothing():
    code, lines = check.run_check(str(WARM), None, env={}, open_processor=_never)
    assert code == 2
    assert "PERFSCOUT_TRACE_PROCESSOR" in lines[0] and "never downloads" in lines[0]


def test_a_path_that_is_not_an_executable_is_refused(tmp_path):
    not_exec = tmp_path / "tp"
    not_exec.write_text("")
    code, lines = check.run_check(str(WARM), None, env={check.ENV_VAR: str(not_exec)}, open_processor=_never)
    assert code == 2 and "not an executable" in lines[0]


def test_agreeing_processor_gives_exit_0(ours, fake_binary):
    fake = FakeProcessor(ours)
    code, lines = check.run_check(str(WARM), fake_binary, open_processor=lambda t, b: fake)
    assert code == 0, lines
    assert lines[-1] == "perfscout and the trace processor agree."
    assert fake.closed
    assert sum(ours.slices.values()) > 7000 and ours.frames == 6 and ours.janky == 1


def test_each_kind_of_difference_is_printed(ours, fake_binary):
    theirs = check.TraceSummary(
        slices=dict(ours.slices), frames=ours.frames + 1, janky=ours.janky, running_ms=dict(ours.running_ms)
    )
    busiest = max(ours.slices, key=ours.slices.get)
    theirs.slices[busiest] += 3
    runner = max(ours.running_ms, key=ours.running_ms.get)
    theirs.running_ms[runner] *= 1.10  # 10 %: over the tolerance
    other = min(ours.running_ms, key=ours.running_ms.get)
    theirs.running_ms[other] *= 1.001  # 0.1 %: rounding, not a difference
    code, lines = check.run_check(str(WARM), fake_binary, open_processor=lambda t, b: FakeProcessor(theirs))
    assert code == 1
    body = "\n".join(lines)
    assert lines[1] == "3 differences:"
    assert f"slices on pid {busiest[0]} tid {busiest[1]}: perfscout {ours.slices[busiest]}" in body
    assert f"frames: perfscout {ours.frames}, trace processor {ours.frames + 1}" in body
    assert f"running time of pid {runner[0]} tid {runner[1]}" in body


def test_a_binary_that_fails_is_one_line_not_a_traceback(fake_binary):
    # The real perfetto TraceProcessor, given a "binary" that exits at once.
    code, lines = check.run_check(str(WARM), fake_binary)
    assert code == 1 and len(lines) == 1
    assert lines[0].startswith("trace processor failed:")


def test_cli_command_without_binary(monkeypatch):
    from app.cli import app

    monkeypatch.delenv(check.ENV_VAR, raising=False)
    result = CliRunner().invoke(app, ["perfetto-check", str(WARM)])
    assert result.exit_code == 2
    assert "never downloads" in result.output


def test_unreadable_trace_is_exit_2(tmp_path, fake_binary):
    bad = tmp_path / "bad.pftrace"
    bad.write_bytes(b"\x07nope")
    code, lines = check.run_check(str(bad), fake_binary, open_processor=_never)
    assert code == 2 and lines[0].startswith(str(bad))
