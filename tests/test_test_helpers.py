"""The tests' shared code lives once (issue 26, item 15): a test module never imports another
test module — what two share is in tests/helpers/ (fixtures in tests/conftest.py) — and the
helpers written three times before (``alive``, the environment scrubbing) are not written again."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts)


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_test_module_imports_another():
    offenders = {}
    for p in _modules():
        bad = {m for m in _imported(ast.parse(p.read_text())) if m.split(".")[-1].startswith("test_")}
        if bad:
            offenders[str(p.relative_to(TESTS))] = sorted(bad)
    assert offenders == {}


def test_shared_helpers_are_written_once():
    copies = []
    for p in _modules():
        if p.parent.name == "helpers" or p == Path(__file__).resolve():
            continue
        text = p.read_text()
        if "def _alive(" in text:
            copies.append(f"{p.name}: a process-liveness check (tests/helpers/processes.py alive)")
        if 'startswith(("OPENAI_", "PERFSCOUT_"' in text or 'monkeypatch.delenv("OPENAI_API_KEY"' in text \
                or '("OPENAI_API_KEY", "OPENAI_BASE_URL", "PERFSCOUT_CHECKPOINT_URL")' in text:
            copies.append(f"{p.name}: environment scrubbing (tests/helpers/env.py)")
    assert copies == []


def test_the_projects_own_modules_are_imported_unconditionally():
    """A guard such as ``HAS_ANALYSIS = find_spec("nodes.perf.analysis") is not None`` turns a
    broken module into a quietly different test; the project's modules are always there."""
    import re

    guard = re.compile(r"""(find_spec|importorskip)\(\s*["'](app|graph|nodes)[."']""")
    offenders = [p.name for p in _modules() if p != Path(__file__).resolve() and guard.search(p.read_text())]
    assert offenders == []
