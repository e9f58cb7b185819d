"""``perfscout mcp``: PerfScout as a stdio MCP server for coding agents.

Built on the official ``mcp`` Python SDK (2.x: ``mcp.server.mcpserver.MCPServer``, the class
that was called FastMCP in 1.x). docs/mcp.md is the user's guide. One module per concern, each
testable alone:

* :mod:`app.mcp.server` — the wiring: the server object, its one-line errors, ``serve``;
* :mod:`app.mcp.tools` — one module per tool family: ``files`` (analyze, report and the report
  resource), ``turns`` (ask, resume, continue), ``code`` (route, explore), ``builds``
  (compare, check);
* :mod:`app.mcp.permission` — **permission is never implied**: the server's ``--allow-run`` /
  ``--allow PROG`` says what may run at all, a call's ``allow_run=true`` is the per-turn yes;
  both are needed;
* :mod:`app.mcp.confirmation` — **a proposed command is confirmed by a person, never by the
  agent** (MCP elicitation: mid-call on handshake-era connections, an ``input_required`` result
  on 2026-07-28 connections; a client without elicitation gets a refusal);
* :mod:`app.mcp.workspace` — **every path lies inside ``--workspace``** (nodes/code/sandbox.py);
* :mod:`app.mcp.progress`, :mod:`app.mcp.cancellation` — long tools report progress; **a
  cancelled call stops the whole process tree as Ctrl-C does**;
* :mod:`app.mcp.results`, :mod:`app.mcp.bound`, :mod:`app.mcp.errors` — structured results of at
  most 20,000 characters that say what was cut; **every error is one line**.

Importing this package, building the server and answering ``tools/list`` load neither LangGraph
nor the graph (tests/test_mcp_start.py): the engine, the analysers and the graph are imported by
the tool that needs them, on its first call.
"""
