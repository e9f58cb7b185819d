"""Permission to run programs is given per turn and never carries over to the next one."""

from __future__ import annotations

from app.api import PerfScout
from app.settings import Settings


def test_allow_run_does_not_leak_into_a_later_turn(tmp_path):
    (tmp_path / "tiny.py").write_text("total = sum(i * i for i in range(200000))\nprint(total)\n")
    settings = Settings(state_dir=tmp_path / ".perfscout", run_timeout_s=20, offline=True)
    with PerfScout(settings, llm=None, workspace=tmp_path) as ps:
        first = ps.ask("帮我全面分析一下 tiny.py", thread_id="t", allow_run=True)
        assert "collector" in first.route_history and first.status != "failed", first.answer
        second = ps.ask("帮我全面分析一下 tiny.py", thread_id="t")
        assert second.status == "failed"
        assert second.route_history[-2:] == ["collector", "fail"]
        # The refusal names what would have run and how to allow it.
        assert "would run `tiny.py`" in (second.answer or "") and "--allow-run" in (second.answer or "")
