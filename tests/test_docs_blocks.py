"""Every command in README.md and docs/*.md runs as written (issue 28).

Each fenced ``sh``, ``console`` and ``python`` block is run in a scratch copy of the repository's
files (what a fresh clone has: ``git ls-files``), with a fresh HOME, no PERFSCOUT_* or OPENAI_*
variables, and a PATH holding only the venv's bin and the system's, so ``perfscout`` is the
installed command (the routing classifier's cache, PERFSCOUT_CACHE_DIR, is shared by the pages:
it is trained once, as on a user's machine). The blocks of one page run in order in one workspace, as a reader types
them: a thread one block starts is there for the next.

* ``sh``: every command line (``\\`` continues a line) runs in bash; ``export`` lines carry to
  the block's later commands. A command exits 0 unless its trailing comment says ``exit N``.
* ``console``: ``$ COMMAND`` lines run the same way; the lines under a command are output the
  command must print (stdout or stderr), matched loosely: numbers may differ, ``…`` or ``...``
  stands for anything.
* ``python``: the block is written to a file and run with the venv's Python; it must exit 0.

A marker in an HTML comment on the line before a block changes that:

* ``<!-- needs: device -->`` / ``key`` / ``network`` / ``trace_processor_shell``: the block cannot work here; its
  ``perfscout`` commands run and must fail cleanly — a one-line reason (``perfscout: …``,
  ``Skipped …``, ``Stopped: …``), a non-zero exit or a skip, no traceback. Other programs in it
  (adb, docker, curl) are not run.
* ``<!-- docs-test: not run: REASON -->``: the block is not run, for a reason from the closed
  set in :data:`NOT_RUN_REASONS` (the whole suite, a server that does not exit).

Blocks of other languages (``text``, ``toml``, ``json``, ``yaml``) are output, config or
diagrams; every block must name its language, so none escapes this test by having none.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
PAGES = ["README.md"] + sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
RUN_LANGS = {"sh", "console", "python"}
NEEDS = {"device", "key", "network", "trace_processor_shell"}
#: Why a block may be left unrun. Each is a block whose running belongs elsewhere.
NOT_RUN_REASONS = {
    "the whole test suite",  # make test / pytest: this test is part of it
    "a server that runs until stopped",  # langgraph dev: tests/test_studio.py starts and stops one
    "a container build",  # langgraph build / docker compose: tests/test_reliability_deploy.py
    "a CI job's own captures",  # docs/ci.md's job: tests/test_check.py runs it on generated traces
}
COMMAND_TIMEOUT_S = 240

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"<!--\s*(needs|docs-test):\s*(.*?)\s*-->\s*$")
_EXIT = re.compile(r"#.*?\bexits?\s+(\d+)\b")


@dataclass
class Block:
    page: str
    line: int
    lang: str
    body: str
    marker: tuple[str, str] | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks_of(page: str) -> list[Block]:
    text = (ROOT / page).read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mk = _MARKER.search(before)
        out.append(Block(page, line, m.group(1), m.group(2), (mk.group(1), mk.group(2)) if mk else None))
    return out


@dataclass
class Command:
    text: str
    expect_exit: int = 0
    output: list[str] = field(default_factory=list)


def commands_of(block: Block) -> list[Command]:
    """The commands of a sh/console block, continuation lines joined, each with the output
    lines shown under it (console) and the exit code its comment names."""
    cmds: list[Command] = []
    lines = block.body.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        if block.lang == "console":
            if not raw.startswith("$ "):
                if cmds and raw.strip():
                    cmds[-1].output.append(raw.strip())
                continue
            raw = raw[2:]
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        while raw.rstrip().endswith("\\") and i < len(lines):
            raw = raw.rstrip()[:-1].rstrip() + " " + lines[i].strip()
            i += 1
        m = _EXIT.search(raw)
        cmds.append(Command(raw.strip(), int(m.group(1)) if m else 0))
    return cmds


def _loose(expected: str) -> re.Pattern:
    """An output line as a pattern: numbers may differ, … stands for anything. A duration may
    change its unit too (a run of 1.44 s on one machine is 986 ms on a faster one)."""
    parts = re.split(r"(…|\.\.\.|\d[\d.,]*(?: m?s\b)?)", expected)
    rx = ""
    for p in parts:
        if p in ("…", "..."):
            rx += ".*"
        elif p and p[0].isdigit():
            rx += r"[\d.,]+ (?:ms|s)\b" if p.endswith("s") else r"[\d.,]+"
        else:
            rx += re.escape(p)
    return re.compile(rx)


# --- the scratch workspace -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def clone(tmp_path_factory) -> Path:
    """The repository's files as a fresh clone has them (tracked, plus new files not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    dest = tmp_path_factory.mktemp("clone")
    for rel in filter(None, listed):
        src = ROOT / rel
        if not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="session")
def classifier_cache(tmp_path_factory) -> Path:
    """One routing-classifier cache for every page: training it (seconds) is what a first run
    on a machine does once, not what each page should pay again."""
    return tmp_path_factory.mktemp("classifier-cache")


def _workspace(clone: Path, tmp_path: Path, cache: Path) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "project"
    shutil.copytree(clone, ws, copy_function=os.link)  # hard links: nothing here writes into them
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PERFSCOUT_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(HOME=str(home), PATH=f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin", LANG="C.UTF-8",
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="1", PERFSCOUT_CACHE_DIR=str(cache))
    return ws, env


def _run(cmd: str, ws: Path, env: dict[str, str], exports: list[str]) -> subprocess.CompletedProcess:
    script = "\n".join(exports + [cmd])
    return subprocess.run(["bash", "-c", script], cwd=ws, env=env, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)


def _clean_failure(block: Block, cmd: str, p: subprocess.CompletedProcess) -> None:
    out = p.stdout + p.stderr
    assert "Traceback" not in out, f"{block.where}: `{cmd}` printed a traceback:\n{out[-3000:]}"
    reasons = [ln for ln in out.splitlines() if ln.startswith(("perfscout: ", "Skipped ", "Stopped: "))]
    assert reasons, f"{block.where}: `{cmd}` (needs {block.marker[1]}) gave no one-line reason:\n{out[-3000:]}"
    if p.returncode == 0:
        assert any(r.startswith("Skipped ") for r in reasons), f"{block.where}: `{cmd}` exit 0 without a skip"


def run_page(page: str, clone: Path, tmp_path: Path, cache: Path) -> list[str]:
    ws, env = _workspace(clone, tmp_path, cache)
    log = []
    for block in blocks_of(page):
        if block.lang not in RUN_LANGS:
            continue
        if block.marker and block.marker[0] == "docs-test":
            reason = block.marker[1].removeprefix("not run:").strip()
            assert reason in NOT_RUN_REASONS, f"{block.where}: not run for an unknown reason {reason!r}"
            log.append(f"{block.where}: not run ({reason})")
            continue
        if block.lang == "python":
            script = tmp_path / f"block_{block.line}.py"
            script.write_text(block.body, encoding="utf-8")
            p = subprocess.run([str(VENV_BIN / "python"), str(script)], cwd=ws, env=env, capture_output=True,
                               text=True, timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
            assert p.returncode == 0, f"{block.where}: the Python block failed:\n{(p.stdout + p.stderr)[-4000:]}"
            log.append(f"{block.where}: python ok")
            continue
        exports: list[str] = []
        for cmd in commands_of(block):
            if cmd.text.startswith("export "):
                exports.append(cmd.text)
                continue
            needs = block.marker[1] if block.marker and block.marker[0] == "needs" else None
            if needs is not None:
                assert needs in NEEDS, f"{block.where}: unknown need {needs!r}"
                if not cmd.text.startswith("perfscout "):
                    log.append(f"{block.where}: `{cmd.text}` not run (needs {needs})")
                    continue
            p = _run(cmd.text, ws, env, exports)
            out = p.stdout + p.stderr
            if needs is not None:
                _clean_failure(block, cmd.text, p)
                log.append(f"{block.where}: `{cmd.text}` fails cleanly without a {needs} ({p.returncode})")
                continue
            assert "Traceback" not in out, f"{block.where}: `{cmd.text}` printed a traceback:\n{out[-3000:]}"
            assert p.returncode == cmd.expect_exit, (
                f"{block.where}: `{cmd.text}` exited {p.returncode}, the docs say {cmd.expect_exit}:\n{out[-3000:]}")
            for want in cmd.output:
                assert _loose(want).search(out), f"{block.where}: `{cmd.text}` did not print {want!r}:\n{out[-3000:]}"
            log.append(f"{block.where}: `{cmd.text}` → {p.returncode}")
    return log


# --- the tests ---------------------------------------------------------------------------------------

#: Pages whose blocks run programs under py-spy or many graph turns (a minute or more each on a
#: loaded 2-core machine); CI runs them too (no -m filter).
_SLOW = {"README.md", "docs/collector.md", "docs/compare.md", "docs/getting-data.md", "docs/interfaces.md",
         "docs/reporter.md"}


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=pytest.mark.slow) if p in _SLOW else p for p in PAGES])
def test_every_block_of_the_page_runs_as_written(page, clone, classifier_cache, tmp_path):
    log = run_page(page, clone, tmp_path, classifier_cache)
    print("\n".join(log))


def test_every_block_names_its_language():
    unnamed = [b.where for p in PAGES for b in blocks_of(p) if not b.lang]
    assert not unnamed, f"fenced blocks without a language (say text, sh, console …): {unnamed}"


def test_markers_name_known_needs_and_reasons():
    for p in PAGES:
        for b in blocks_of(p):
            if b.marker and b.marker[0] == "needs":
                assert b.marker[1] in NEEDS, b.where
            elif b.marker:
                assert b.marker[1].removeprefix("not run:").strip() in NOT_RUN_REASONS, b.where


def test_make_demo_runs_the_command_the_readme_shows():
    """`make demo` is not run here (it builds .venv); what it runs is, from README's first block."""
    recipe = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    demo = shlex.split(recipe.strip().splitlines()[-1].strip())
    assert demo[0].endswith("/perfscout")
    shown = [shlex.split(c.text, comments=True) for b in blocks_of("README.md") if b.lang in RUN_LANGS - {"python"}
             for c in commands_of(b)]
    assert ["perfscout", *demo[1:]] in shown


def test_the_parser_reads_commands_output_and_exit_codes():
    b = Block("x.md", 1, "console", "$ perfscout a \\\n    --b  # exit 1 when it fails\nline 1.5 s …\n\n$ perfscout c\n")
    cmds = commands_of(b)
    assert [(c.text, c.expect_exit, c.output) for c in cmds] == [
        ("perfscout a --b  # exit 1 when it fails", 1, ["line 1.5 s …"]), ("perfscout c", 0, [])]
    assert _loose("ran 1.44 s; 97.7 % of …").search("ran 2.01 s; 95 % of the whole")
    assert not _loose("ran 1.44 s (wall)").search("ran 1.44 s (cpu)")


#: Variables the code reads that are no user setting.
_INTERNAL_VARIABLES = {"PERFSCOUT_RUN_TOKEN"}  # nodes/collect/runner.py marks a run's processes with it


def test_every_variable_the_code_reads_is_in_the_settings_table():
    code = "".join(p.read_text(encoding="utf-8") for d in ("app", "nodes", "graph") for p in (ROOT / d).rglob("*.py"))
    read = set(re.findall(r"\"((?:PERFSCOUT|OPENAI)_[A-Z_]+)\"", code)) - _INTERNAL_VARIABLES
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    assert sorted(v for v in read if f"`{v}`" not in table) == []


def test_the_readme_budgets_are_the_bundled_file():
    """README shows examples/perfscout.toml, which its commands pass to `check`."""
    toml = next(b.body for b in blocks_of("README.md") if b.lang == "toml")
    assert toml == (ROOT / "examples" / "perfscout.toml").read_text(encoding="utf-8")


def test_the_bundled_runs_are_what_their_generator_writes(tmp_path):
    sys.path.insert(0, str(ROOT / "examples" / "runs"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    for f in generate.write(tmp_path):
        rel = f.relative_to(tmp_path)
        assert f.read_bytes() == (ROOT / "examples" / "runs" / rel).read_bytes(), rel
