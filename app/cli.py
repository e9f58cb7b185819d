"""The ``perfscout`` command line.

Exit codes: ``app.exit_codes.ExitCode`` (app/exit_codes.py) defines and documents them; the
README's "Command line" lists them for users.
Output: answers on stdout, progress and notes on stderr. Progress (rich: the node that runs, a
collection countdown, parsing progress) is drawn only when stderr is a terminal and the output
is not ``--json``; ``--json`` prints one JSON document on stdout and nothing else there.
Set PERFSCOUT_DEBUG=1 to see a traceback for an unexpected error.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import typer

app = typer.Typer(
    name="perfscout",
    help="PerfScout: ask for a performance analysis in one sentence (中文 or English).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

from app.exit_codes import ExitCode


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("perfscout")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed: pip install -e .)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"perfscout {_version()}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """PerfScout: ask for a performance analysis in one sentence (中文 or English)."""


class CliError(Exception):
    """A one-line error for the user, with its exit code."""

    def __init__(self, message: str, code: int = ExitCode.USAGE):
        super().__init__(message)
        self.code = code


def emit_json(obj: Any) -> None:
    import orjson  # ~25 ms to load: only the commands that print JSON pay it

    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


def _settings(offline: bool = False, **overrides: Any):
    from app.settings import Settings

    return Settings.from_env(offline=offline or None, **overrides)


def _print_result(result: Any, as_json: bool) -> int:
    if as_json:
        emit_json(result.model_dump(mode="json"))
    else:
        if result.question:
            typer.echo(f"? {result.question.get('prompt')}")
        elif result.answer:
            typer.echo(result.answer)
        if result.report and result.report.get("dir"):
            where = result.report.get("html") or result.report.get("markdown") or result.report["dir"]
            if where not in (result.answer or ""):  # the reporter's answer usually names it already
                typer.echo(f"Report: {where}")
        typer.echo(f"(thread {result.thread_id}, route {result.route}, {result.steps} steps)", err=True)
    from app.exit_codes import for_turn

    return for_turn(result.status, result.route, result.error)


@app.command()
def ask(
    text: str = typer.Argument(..., help="What you want, in one sentence."),
    thread: Optional[str] = typer.Option(None, "--thread", "-t", help="Continue this conversation thread."),
    as_json: bool = typer.Option(False, "--json", help="Print the typed result as JSON."),
    allow_run: bool = typer.Option(False, "--allow-run", help="Allow PerfScout to run the target program."),
    target: Optional[str] = typer.Option(None, "--target", help="The program to run (command line or script)."),
    package: Optional[str] = typer.Option(None, "--package", help="Android package name."),
    serial: Optional[str] = typer.Option(None, "--serial", help="Android device serial."),
    workspace: Optional[Path] = typer.Option(None, "--workspace", help="Root for every path (default: cwd)."),
    offline: bool = typer.Option(False, "--offline", help="Never call a model, even if one is configured."),
    adb: Optional[str] = typer.Option(
        None, "--adb", metavar="PATH", help="The adb to call (default: $PERFSCOUT_ADB, else the first adb on PATH)."
    ),
    adb_timeout: Optional[float] = typer.Option(
        None, "--adb-timeout", metavar="SECONDS", min=0.001,
        help="Seconds one adb call may take (default: $PERFSCOUT_ADB_TIMEOUT, else 20).",
    ),
) -> None:
    """Route TEXT and run it through the graph (collect, analyse, attribute, report)."""
    from app.api import PerfScout

    interactive = sys.stdin.isatty() and not as_json
    view = _progress(as_json)
    settings = _settings(offline, adb_path=adb, adb_timeout_s=adb_timeout)
    with PerfScout(settings, workspace=workspace) as ps, _closing(view), _interrupts(ps):
        result = ps.ask(
            text,
            thread_id=thread,
            allow_run=allow_run,
            target=target,
            package=package,
            serial=serial,
            on_event=view,
        )
        while result.status == "needs_input" and interactive:
            answer = typer.prompt(result.question.get("prompt") or "?")
            result = ps.resume(result.thread_id, answer, allow_run=allow_run, on_event=view)
        if result.status == "needs_input" and not as_json:
            typer.echo(_pending_help(result, allow_run), err=True)
            raise typer.Exit(ExitCode.NEEDS_INPUT)
        raise typer.Exit(_print_result(result, as_json))


def _pending_help(result: Any, allow_run: bool = False) -> str:
    """What to type to answer a pending question when stdin is not a terminal. Permission is
    per invocation (the resume does not inherit this command's --allow-run), so the answer to
    any other question repeats the flag when this command had it."""
    q = result.question or {}
    if q.get("field") == "confirm_run":
        import shlex

        return (
            f"? {q.get('prompt')}\n"
            f"  the exact command: {shlex.join(q.get('argv') or [])}\n"
            f"stdin is not a terminal: confirm with  perfscout resume {result.thread_id} yes"
            f"   (or decline with  perfscout resume {result.thread_id} no)"
        )
    return (
        f"? {q.get('prompt')}\n"
        f"stdin is not a terminal: answer with  perfscout resume {result.thread_id} \"ANSWER\""
        + (" --allow-run" if allow_run else "")
    )


@app.command()
def resume(
    thread: str = typer.Argument(..., help="The thread that asked, or whose turn stopped (incomplete)."),
    answer: Optional[str] = typer.Argument(None, help="Your answer to its question; none to continue a stopped turn."),
    as_json: bool = typer.Option(False, "--json", help="Print the typed result as JSON."),
    allow_run: bool = typer.Option(
        False, "--allow-run", help="Allow running the target program in this invocation (never inherited)."
    ),
    offline: bool = typer.Option(False, "--offline", help="Never call a model, even if one is configured."),
) -> None:
    """Answer the pending question of THREAD, or (no ANSWER) continue its turn that was killed,
    crashed or interrupted (`threads show` says incomplete), from its last checkpoint."""
    from app.api import PerfScout
    from app.threads_cmd import printable

    view = _progress(as_json)
    with PerfScout(_settings(offline)) as ps, _closing(view), _interrupts(ps):
        if answer is None:
            current = ps.result(thread)
            if current.status == "needs_input":
                raise CliError(
                    f"thread {printable(thread)} asks: {printable((current.question or {}).get('prompt'))} — "
                    f"answer with  perfscout resume {printable(thread)} \"ANSWER\""
                )
            if current.status != "incomplete" and ps.thread_exists(thread):
                raise CliError(f"thread {printable(thread)} has nothing to continue: its last turn ended ({current.status})")
            result = ps.continue_run(thread, allow_run=allow_run, on_event=view)  # unknown: RequestError
        else:
            result = ps.resume(thread, answer, allow_run=allow_run, on_event=view)
        raise typer.Exit(_print_result(result, as_json))


@app.command()
def analyze(
    paths: Optional[list[Path]] = typer.Argument(None, help="Trace/profile file(s) of one collection."),
    thread: Optional[str] = typer.Option(
        None, "--thread", "-t",
        help="Run the graph's analyze route in this thread (report, follow-ups); with no FILE, its collected data.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the analysis (or, with --thread, the turn) as JSON."),
    workspace: Optional[Path] = typer.Option(None, "--workspace", help="Root for every path (default: cwd)."),
    offline: bool = typer.Option(False, "--offline", help="Never call a model, even if one is configured."),
    process: Optional[str] = typer.Option(
        None, "--process", "-p", metavar="NAME|PID",
        help="The app the frames and hot spots are about (default: the launched package, else the process with the most frames).",
    ),
    focus: Optional[str] = typer.Option(
        None, "--focus", metavar="LENS",
        help="Answer this aspect first: overview, startup, frames, scroll, cpu, memory, power, blocking, page.",
    ),
    section: Optional[list[str]] = typer.Option(
        None, "--section", metavar="NAME",
        help="A slice to measure as its own window: energy (power.windows[]) and CPU time (cpu.sections[]) "
             "over each slice of that name, beside the whole trace and measureBlock; without --focus the "
             "power answer leads, with the first section named. Repeatable.",
    ),
) -> None:
    """Analyse existing data. FILE…: the analyzer alone (summary or JSON). --thread: the graph's
    analyze route in that thread (analysis, attribution, report; follow-up questions work)."""
    paths = list(paths or [])
    if focus is not None:
        from graph.enums import Lens, lens_named

        try:
            focus = lens_named(focus).value
        except ValueError:
            raise CliError(f"--focus {focus!r}: one of {', '.join(x.value for x in Lens)}") from None
    if not paths and thread is None:
        raise CliError("give a FILE to analyse, or --thread THREAD to analyse what that thread collected")
    from nodes.perf.formats import check_data_file

    for p in paths:
        check_data_file(str(p))  # says what it is (a directory, a FIFO …) without opening it
    if thread is None:
        raise typer.Exit(_analyze_files([str(p) for p in paths], as_json, process=process, lens=focus,
                                        sections=section or ()))
    if process is not None:
        raise CliError("--process applies to FILE… analysis, not to --thread")
    if section:
        raise CliError("--section applies to FILE… analysis, not to --thread")
    if len(paths) > 1:
        raise CliError("with --thread, give one FILE (the graph analyses one named file per turn)")
    _analyze_in_thread(paths[0] if paths else None, thread, as_json, workspace, offline, focus)


def _analyze_files(paths: list[str], as_json: bool, **options: Any) -> int:
    """The analyzer alone (app/analyze_cmd.py ``run``), its exit code; run by main() (the
    ``perfscout`` process itself) it ends the process as soon as the answer is printed.

    The cyclic GC stays off from the read to the exit: the reader and the metrics pause it
    already (nodes/perf/gc_pause.py), and each time it came back on, its first collection
    walked the millions of objects they had made (~0.2 s at 100 MB, most of it the tuples of
    the counter and memory points, which that walk only marks as untracked). What is left
    after the answer is the interpreter's teardown, which frees that heap object by object
    and collects once more (~0.07 s at 100 MB): :func:`_exit_at_once` skips it."""
    _import_numpy_one_blas_thread()
    from app.analyze_cmd import run
    from nodes.perf.gc_pause import cyclic_gc_paused

    with cyclic_gc_paused():
        code = run(paths, as_json, **options)
        _exit_at_once(code)
    return code


def _import_numpy_one_blas_thread() -> None:
    """Import numpy with OpenBLAS kept to one thread, unless numpy is loaded already or the
    user set ``OPENBLAS_NUM_THREADS`` themselves.

    The analyzer does no linear algebra, yet OpenBLAS starts a thread per core when numpy loads
    and each spins before it sleeps: on 2 cores ``import numpy`` takes 0.130 s of CPU, 0.075 s
    with one thread (least of 15 interleaved runs) — a sixth of what ``perfscout analyze``
    costs on the 2 MB warm-start capture. OpenBLAS reads
    the variable once, as it loads, so it is taken out of the environment again at once:
    nothing this process starts later inherits it."""
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


def _analyze_in_thread(path: Path | None, thread: str, as_json: bool, workspace: Path | None, offline: bool,
                       lens: str | None = None) -> None:
    from app.api import PerfScout

    text = f"分析一下这份数据 {path}" if path is not None else "分析一下刚才采集的这份数据"
    view = _progress(as_json)
    with PerfScout(_settings(offline), workspace=workspace) as ps, _closing(view), _interrupts(ps):
        result = ps.ask(text, thread_id=thread, on_event=view, lens=lens)
        if result.status == "needs_input" and path is not None and (result.question or {}).get("field") == "data_path":
            # The sentence did not carry a path the extractor knows (an unusual extension):
            # answer the graph's own question with it.
            result = ps.resume(result.thread_id, str(path), on_event=view)
        if result.status == "needs_input" and not as_json:
            typer.echo(f"? {result.question.get('prompt')}", err=True)
            raise typer.Exit(ExitCode.NEEDS_INPUT)
        raise typer.Exit(_print_result(result, as_json))


@app.command()
def replay(
    log: Path = typer.Argument(..., help="A decision log (JSONL), e.g. .perfscout/decisions.jsonl."),
    as_json: bool = typer.Option(False, "--json", help="Print the count and every differing decision as JSON."),
) -> None:
    """Re-run every recorded policy input through today's policies; list what would differ."""
    from app.replay import ReplayInputError, replay_file
    from nodes.perf.formats import not_regular

    if not log.exists():
        raise CliError(f"{log}: no such file")
    problem = not_regular(log.stat())
    if problem:
        raise CliError(f"{log}: {problem}")
    try:
        rep = replay_file(str(log))
    except ReplayInputError as e:
        raise CliError(str(e)) from None
    if as_json:
        emit_json({"checked": rep.checked, "unreadable": rep.unreadable, "diffs": [d.__dict__ for d in rep.diffs]})
    else:
        for d in rep.diffs:
            typer.echo(
                f"#{d.index} thread={d.thread} after {d.node}: recorded {d.recorded}, now {d.now} ({d.reason_now})"
            )
        typer.echo(f"{rep.checked} decisions checked, {len(rep.diffs)} differ, {rep.unreadable} unreadable")
    raise typer.Exit(ExitCode.FAILED if rep.diffs else ExitCode.OK)


def _progress(as_json: bool):
    """Node-by-node progress on stderr when it is a terminal; quiet otherwise (app/progress.py)."""
    from app.progress import progress_view

    return progress_view(as_json)


@contextmanager
def _closing(view: Any):
    """Stops the live progress display however the command ends (an error, an exit code)."""
    try:
        yield view
    finally:
        if view is not None:
            view.close()


#: Seconds after Ctrl-C before the CLI says it is still stopping the turn.
STOPPING_NOTE_S = 2.0


@contextmanager
def _interrupts(ps: Any):
    """Ctrl-C during a turn stops it (app/cancel.py): the node stops at its next safe point, the
    program's process tree with it, and the thread reads ``incomplete``; then say how to
    continue it and exit 130. (typer turns a KeyboardInterrupt that leaves a command into a
    silent exit 130, so main() never sees it.)"""
    import threading

    from app.cancel import sigint_cancels

    timers: list[threading.Timer] = []

    def stopping(_threads: list[str]) -> None:
        # Said only when the turn is slow to stop (a node inside a model call finishes that
        # call first); otherwise the one line below is all the user reads. One raw write: a
        # buffered stream may be mid-write.
        t = threading.Timer(STOPPING_NOTE_S, os.write, (2, b"perfscout: stopping the turn (Ctrl-C again to interrupt)\n"))
        t.daemon = True
        timers.append(t)
        t.start()

    try:
        with sigint_cancels(ps.turns, on_cancel=stopping):
            yield
    except KeyboardInterrupt as e:
        tid = getattr(e, "thread_id", None)  # app.errors.TurnInterrupted
        more = f"; the turn is incomplete, continue it with  perfscout resume {tid}" if tid else ""
        typer.echo(f"perfscout: interrupted{more}", err=True)
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    finally:
        for t in timers:
            t.cancel()


# --- commands added by areas (keep each a thin wrapper over a function in its own module) ---


@app.command(hidden=True)
def inspect(
    paths: list[Path] = typer.Argument(..., help="Trace/profile file(s) of one collection."),
    as_json: bool = typer.Option(False, "--json", help="Print the analysis as JSON."),
) -> None:
    """The analyzer alone (an alias of `analyze FILE…`)."""
    raise typer.Exit(_analyze_files([str(p) for p in paths], as_json))


@app.command()
def report(
    target: str = typer.Argument(..., help="A report folder or report.json, an analysis JSON, a trace file, or a thread id."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write here (default: <runs>/<thread|local>/<time>/)."),
    narrative: bool = typer.Option(False, "--narrative", help="Add a model-written narrative (needs a configured model)."),
    as_json: bool = typer.Option(False, "--json", help="Print the written paths as JSON."),
) -> None:
    """Render a report again (Markdown, HTML with charts, JSON, speedscope, Trace Event JSON)."""
    from app.models import make_chat_model
    from app.report_cmd import run_report
    from nodes.report.view import ReportInputError

    settings = _settings()
    if narrative and not settings.model_configured:
        why = "--offline / PERFSCOUT_OFFLINE is set" if settings.offline else "no model is configured"
        raise CliError(
            f"--narrative needs a model and {why}: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
            "(a local OpenAI-compatible server), and PERFSCOUT_MODEL; or leave out --narrative"
        )
    try:
        written = run_report(
            target,
            runs_dir=str(settings.runs_dir),
            out=str(out) if out else None,
            llm=make_chat_model(settings) if narrative else None,
            llm_timeout_s=settings.llm_timeout_s,
            limits=settings.read_limits(),
        )
    except ReportInputError as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"cannot write the report: {e.strerror or e} ({e.filename or out or settings.runs_dir})", ExitCode.FAILED) from None
    if as_json:
        emit_json(written)
    else:
        typer.echo(f"Report: {written['html']}")
        for key in ("markdown", "json", "speedscope", "trace_events"):
            if key in written:
                typer.echo(f"        {written[key]}")


@app.command("perfetto-check")
def perfetto_check(
    trace: Path = typer.Argument(..., help="A Perfetto trace (.perfetto-trace, .pftrace, .pb, gzipped too)."),
    trace_processor: Optional[str] = typer.Option(
        None, "--trace-processor", help="Your trace_processor_shell (else $PERFSCOUT_TRACE_PROCESSOR)."
    ),
) -> None:
    """Compare PerfScout's Perfetto reader with the official trace processor on TRACE."""
    from app.perfetto_check_cmd import run_check

    code, lines = run_check(str(trace), trace_processor)
    for line in lines:
        if code == ExitCode.USAGE:  # an error: one line, like every command's
            typer.echo(f"perfscout: {line}", err=True)
        else:
            typer.echo(line)
    raise typer.Exit(code)


@app.command()
def route(
    text: Optional[str] = typer.Argument(None, help="One message to classify."),
    jsonl: Optional[str] = typer.Option(None, "--jsonl", help='A file of lines (plain text or {"text": ...}); - for stdin.'),
    offline: bool = typer.Option(False, "--offline", help="Never call the model tier, even when one is configured."),
    thread: Optional[str] = typer.Option(
        None, "--thread", "-t", help="Decide as a turn of this thread would (docs/ROUTING.md rule 8: a follow-up on its analysis)."),
) -> None:
    """Classify messages without running the graph: one JSON object per input (route, tier, confidence, reason, lens, latency_ms)."""
    from app.models import make_router_model
    from app.route_cmd import RouteInputError, run

    settings = _settings(offline=offline)
    llm = make_router_model(settings)
    if thread is not None:
        if text is None or jsonl is not None:
            raise CliError("--thread routes one TEXT (not --jsonl)")
        _route_in_thread(text, thread, settings, llm)
    try:
        code = run(text, jsonl, llm, timeout_s=settings.llm_timeout_s)
    except RouteInputError as e:
        raise CliError(str(e)) from None
    raise typer.Exit(code)


def _route_in_thread(text: str, thread: str, settings: Any, llm: Any) -> None:
    import json

    from app.api import PerfScout
    from app.route_cmd import route_in_thread

    with PerfScout(settings) as ps:
        state = ps.graph.get_state(ps.config(thread)).values or {}
    if not state:
        raise CliError(f"no thread {thread!r} in {settings.checkpoint_target}")
    res = route_in_thread(text, dict(state), thread, llm, timeout_s=settings.llm_timeout_s)
    typer.echo(json.dumps(res, ensure_ascii=False))
    raise typer.Exit(2 if "error" in res else 0)


@app.command()
def mcp(
    workspace: Optional[Path] = typer.Option(None, "--workspace", help="The only folder whose files the server reads (default: cwd)."),
    allow_run: bool = typer.Option(
        False, "--allow-run", help="Programs may run, on a call that says allow_run=true (this lets an agent run code)."
    ),
    allow: Optional[list[str]] = typer.Option(None, "--allow", help="Only this program may run (repeatable); see docs/mcp.md."),
    offline: bool = typer.Option(False, "--offline", help="Never call a model, even if one is configured."),
) -> None:
    """Serve PerfScout to coding agents over MCP (stdio); see docs/mcp.md."""
    from app.mcp.options import ServerOptions
    from app.mcp.server import serve

    ws = (workspace or Path.cwd()).expanduser()
    if not ws.is_dir():
        raise CliError(f"{ws}: the workspace is not an existing directory")
    allowlist = tuple(allow or ()) + _settings(offline).allowlist
    serve(ServerOptions(workspace=ws.resolve(), allow_run=allow_run, allowlist=allowlist, offline=offline))


@app.command()
def compare(
    a: str = typer.Argument(..., help="Before: a capture, report folder, analysis JSON, folder or glob of runs, or a thread."),
    b: str = typer.Argument(..., help="After: the same kinds of input."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write here (default: <runs>/compare/<time>/)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """What changed from A to B (deltas, better/worse, bootstrap interval and Mann–Whitney test)."""
    from app.compare_cmd import CompareError, run

    settings = _settings(offline=True)
    try:
        run(a, b, runs_dir=str(settings.runs_dir), out=str(out) if out else None, as_json=as_json)
    except CompareError as e:
        raise CliError(str(e)) from None
    except OSError as e:
        raise CliError(f"cannot write the comparison: {e.strerror or e} ({e.filename or out or settings.runs_dir})",
                       ExitCode.FAILED) from None


@app.command()
def check(
    target: str = typer.Argument(..., help="A capture, report, analysis JSON, folder or glob of traces, or a thread."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Runs to compare with (for regression.max_pct)."),
    budgets: Optional[Path] = typer.Option(None, "--budgets", help=r"A TOML file with a \[budgets] table, or a pyproject.toml with \[tool.perfscout.budgets] (default: ./perfscout.toml, else ./pyproject.toml)."),
    junit: Optional[Path] = typer.Option(None, "--junit", help="Write JUnit XML here (one testcase per budget)."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="A metric the data lacks does not fail."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Check runs against performance budgets: exit 1 when any fails, 2 on bad usage."""
    from app.check_cmd import CheckError, run

    settings = _settings(offline=True)
    try:
        code = run(target, baseline=baseline, budgets_file=str(budgets) if budgets else None,
                   junit_path=str(junit) if junit else None, allow_missing=allow_missing, as_json=as_json,
                   runs_dir=str(settings.runs_dir))
    except CheckError as e:
        raise CliError(str(e)) from None
    raise typer.Exit(code)


threads_app = typer.Typer(help="The conversation threads in the checkpoint store.", no_args_is_help=True)
app.add_typer(threads_app, name="threads")


@threads_app.command("list")
def threads_list(
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="Show at most this many, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print the threads as a JSON list."),
) -> None:
    """List threads: id, last update, status, last route and request."""
    from app.api import PerfScout
    from app.threads_cmd import format_list

    with PerfScout(_settings(offline=True), llm=None) as ps:
        threads = ps.threads(limit=limit)
    if as_json:
        emit_json([t.model_dump(mode="json") for t in threads])
    else:
        typer.echo(format_list(threads))


@threads_app.command("show")
def threads_show(
    thread: str = typer.Argument(..., help="A thread id (see `perfscout threads list`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the thread's detail as JSON."),
) -> None:
    """Show a thread's last route, answer, pending question and report paths."""
    from app.api import PerfScout
    from app.threads_cmd import format_detail

    with PerfScout(_settings(offline=True), llm=None) as ps:
        detail = ps.thread(thread)
    if detail is None:
        raise CliError(f"no thread {thread!r} in the checkpoint store")
    if as_json:
        emit_json(detail.model_dump(mode="json"))
    else:
        typer.echo(format_detail(detail))


@threads_app.command("delete")
def threads_delete(
    thread: str = typer.Argument(..., help="The thread to forget."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation (needed when stdin is not a terminal)."),
    as_json: bool = typer.Option(False, "--json", help='Print {"thread_id": …, "deleted": true}.'),
) -> None:
    """Delete a thread's checkpoints (its run folders and reports are kept)."""
    from app.api import PerfScout

    if not yes:
        if not sys.stdin.isatty():
            raise CliError("refusing to delete without confirmation: add --yes")
        typer.confirm(f"Delete thread {thread}?", abort=True)
    with PerfScout(_settings(offline=True), llm=None) as ps:
        deleted = ps.delete_thread(thread)
    if not deleted:
        raise CliError(f"no thread {thread!r} in the checkpoint store")
    if as_json:
        emit_json({"thread_id": thread, "deleted": True})
    else:
        typer.echo(f"deleted thread {thread}")


#: The errors that are the user's input (exit ExitCode.USAGE), by module: looked up in the modules
#: this run loaded, so that naming them does not import LangGraph for `perfscout analyze FILE`
#: (an error of a module never loaded cannot have been raised).
_USAGE_ERRORS = (
    ("app.api", "RequestError"),
    ("app.checkpoint", "CheckpointError"),
    ("app.settings", "SettingsError"),
    ("nodes.perf.errors", "PerfDataError"),
    ("nodes.code.sandbox", "SandboxError"),
)


def _usage_error_types() -> tuple[type[BaseException], ...]:
    loaded = (getattr(sys.modules[m], n, None) for m, n in _USAGE_ERRORS if m in sys.modules)
    return tuple(t for t in loaded if isinstance(t, type)) + (FileNotFoundError,)


#: True once main() runs: this process is the ``perfscout`` command, not a test runner invoking
#: the Typer app, so a command that has printed its whole answer may end it (_exit_at_once).
_entry_point = False


def _flush_streams() -> bool:
    """Flush stdout and stderr; False when one of them cannot take it (a closed pipe)."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            ok = False
    return ok


def _exit_at_once(code: int) -> None:
    """Exit with ``code`` now, doing what the interpreter's exit does that anyone can observe —
    stdout and stderr flushed, every ``atexit`` callback run (logging's shutdown among them) —
    and skipping the rest: the teardown that frees every object. Returns (the caller then
    exits normally) unless main() is running with the process's own stdout and stderr (not
    under a test runner, nor a caller that captures the output in its own process),
    when another thread is alive (a normal exit would wait for it), or when the streams do not
    flush (a normal exit reports that)."""
    import atexit
    import threading

    if not _entry_point or sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return
    if threading.active_count() > 1 or not _flush_streams():
        return
    atexit._run_exitfuncs()
    _flush_streams()
    os._exit(code)


def _exit_interrupted() -> None:
    """Exit 130 at once after Ctrl-C. By now the turn's checkpoint store is closed and its
    process tree gone; what is left is the interpreter's teardown of LangGraph, pydantic and
    the rest, 0.5–1 s on a loaded 2-core machine — the difference between Ctrl-C answering
    within a second and not. Streams and logging are flushed first."""
    import logging

    logging.shutdown()
    _flush_streams()
    os._exit(ExitCode.INTERRUPTED)


def main() -> None:
    """Entry point: every error is one line and a documented exit code, never a traceback."""
    global _entry_point
    _entry_point = True
    try:
        # The reader bounds (inflate cap, event cap …) are settings: this command reads within
        # them (nodes/perf/limits.py ``applied``); a PerfScout it builds passes its own to the
        # graph in the runtime context.
        try:
            from app.settings import Settings
            from nodes.perf.limits import applied

            with applied(Settings.from_env().read_limits()):
                code = app(standalone_mode=False)
        except Exception as e:
            if isinstance(e, _usage_error_types()) and not isinstance(e, CliError):
                typer.echo(f"perfscout: {e}", err=True)
                sys.exit(ExitCode.USAGE)
            errors = sys.modules.get("app.errors")
            refused = tuple(t for t in (getattr(errors, "ThreadBusy", None), getattr(errors, "RunNotAllowed", None)) if t)
            if refused and isinstance(e, refused):  # another turn holds the thread / no permission
                typer.echo(f"perfscout: {e}", err=True)
                sys.exit(ExitCode.FAILED)
            raise
        if code == ExitCode.INTERRUPTED:
            _exit_interrupted()
        sys.exit(code if isinstance(code, int) else ExitCode.OK)
    except typer.Exit as e:
        if e.exit_code == ExitCode.INTERRUPTED:
            _exit_interrupted()
        sys.exit(e.exit_code)
    except (CliError,) as e:
        typer.echo(f"perfscout: {e}", err=True)
        sys.exit(e.code)
    except KeyboardInterrupt as e:
        tid = getattr(e, "thread_id", None)  # app.errors.TurnInterrupted: a turn was running
        more = f"; the turn is incomplete, continue it with  perfscout resume {tid}" if tid else ""
        typer.echo(f"perfscout: interrupted{more}", err=True)
        _exit_interrupted()
    except Exception as e:  # the last line of defence: one line, not a traceback
        # typer ships its own click: recognise its usage errors by shape, not by class.
        if hasattr(e, "show") and hasattr(e, "exit_code"):
            e.show()
            sys.exit(ExitCode.USAGE)
        if type(e).__name__ == "Abort":
            typer.echo("perfscout: aborted", err=True)
            sys.exit(ExitCode.INTERRUPTED)
        if os.environ.get("PERFSCOUT_DEBUG"):
            raise
        typer.echo(f"perfscout: unexpected error: {type(e).__name__}: {e}".splitlines()[0], err=True)
        sys.exit(ExitCode.FAILED)


if __name__ == "__main__":
    main()
