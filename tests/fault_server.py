"""A misbehaving OpenAI-compatible chat endpoint on a loopback port, for fault tests.

The fault is chosen by the first path segment, so one server serves every fault and each test
builds its client with ``base_url=server.url(mode)`` (``http://127.0.0.1:PORT/<mode>/v1``):

======================  ======================================================================
mode                    what ``POST /<mode>/v1/chat/completions`` does
======================  ======================================================================
``label-<x>``           answers ``x`` at once (a well-behaved model; ``x`` may be any string)
``slow-<seconds>-<x>``  waits, then answers ``x``
``hang``                reads the request and never answers (until the server stops)
``status-<code>``       answers an OpenAI-style error with that HTTP status (500, 429 …)
``essay``               answers a ~4 000-token essay that mentions several labels
``badjson``             200 with ``Content-Type: application/json`` and a body that is not JSON
``close``               closes the connection without a response
``empty``               a well-formed completion whose ``choices`` list is empty
``trickle-<s>-<x>``     sends the status line and headers at once, then the body of a completion
                        answering ``x`` one byte every ``s`` seconds (no read ever times out)
``big-<n>``             answers ``n`` characters of text with ANSI escape sequences in it
                        (a server that ignores ``max_tokens``)
======================  ======================================================================

It is a stdlib ``ThreadingHTTPServer`` (no extra dependency); every request is recorded with
its mode and JSON body so a test can check what the client sent and how often.
"""

from __future__ import annotations

import json
import socket
import urllib.parse
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ESSAY_WORDS = 4000


def essay_text(words: int = ESSAY_WORDS) -> str:
    """Prose that names several labels, as a chatty model might: none of it is one label."""
    sentence = (
        "Performance work usually starts with the android device or the startup path, "
        "then you analyze the trace, and in the end an explorer of the code base helps "
        "with a full_analysis of where time goes. "
    )
    per = len(sentence.split())
    return (sentence * (words // per + 1)).strip()


@dataclass
class Request:
    mode: str
    path: str
    body: Any
    time: float


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt: str, *args: Any) -> None:  # quiet: tests read .requests instead
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        parts = self.path.strip("/").split("/")
        mode = urllib.parse.unquote(parts[0]) if parts else ""
        self.server.record(Request(mode=mode, path=self.path, body=body, time=time.time()))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        self._fault(mode, body)

    def do_GET(self) -> None:  # noqa: N802
        self._json(404, {"error": {"message": "only POST /<mode>/v1/chat/completions", "type": "not_found"}})

    # --- faults --------------------------------------------------------------------------
    def _fault(self, mode: str, body: Any) -> None:
        if mode.startswith("label-"):
            return self._completion(body, mode[len("label-"):])
        if mode.startswith("slow-"):
            _, seconds, label = mode.split("-", 2)
            if self.server.stopping.wait(float(seconds)):
                return
            return self._completion(body, label)
        if mode == "hang":
            self.server.stopping.wait()
            return
        if mode.startswith("status-"):
            code = int(mode.split("-", 1)[1])
            headers = {"Retry-After": "30"} if code == 429 else {}
            return self._json(code, {"error": {"message": f"injected HTTP {code}", "type": "server_error",
                                               "code": str(code)}}, headers)
        if mode == "essay":
            return self._completion(body, essay_text())
        if mode == "badjson":
            payload = b'{"id": "x", "choices": [{"message": {"content": "andr'
            return self._raw(200, payload, "application/json")
        if mode == "close":
            # Close without a status line: the client sees a dropped connection.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if mode.startswith("trickle-"):
            _, seconds, label = mode.split("-", 2)
            return self._trickle(body, label, float(seconds))
        if mode.startswith("big-"):
            n = int(mode.split("-", 1)[1])
            unit = "slow frame \x1b[2J\x1b]0;pwned\x07 "
            return self._completion(body, (unit * (n // len(unit) + 1))[:n])
        if mode == "empty":
            return self._json(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fault",
                                    "choices": []})
        return self._json(404, {"error": {"message": f"unknown fault mode {mode!r}", "type": "not_found"}})

    def _trickle(self, body: Any, content: str, interval: float) -> None:
        payload = json.dumps(self._completion_obj(body, content)).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.flush()
            for i in range(len(payload)):
                if self.server.stopping.wait(interval):
                    return
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.server.record_abandoned(self.path)  # the client stopped reading: what a deadline does

    def _completion(self, body: Any, content: str) -> None:
        self._json(200, self._completion_obj(body, content))

    def _completion_obj(self, body: Any, content: str) -> dict[str, Any]:
        model = body.get("model", "fault") if isinstance(body, dict) else "fault"
        return {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": max(1, len(content.split())),
                      "total_tokens": 10 + max(1, len(content.split()))},
        }

    def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._raw(code, json.dumps(obj).encode(), "application/json", headers)

    def _raw(self, code: int, payload: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): nothing to answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.stopping = threading.Event()
        self.requests: list[Request] = []
        #: Paths of trickled replies whose client hung up before the body was complete.
        self.abandoned: list[str] = []
        self._lock = threading.Lock()

    def record_abandoned(self, path: str) -> None:
        with self._lock:
            self.abandoned.append(path)

    def record(self, req: Request) -> None:
        with self._lock:
            self.requests.append(req)


class FaultServer:
    """Start with ``with FaultServer() as s:``; ``s.url(mode)`` is a ChatOpenAI ``base_url``."""

    def __init__(self) -> None:
        self._server = _Server()
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-server", daemon=True)

    def __enter__(self) -> "FaultServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.port}/{urllib.parse.quote(mode, safe='')}/v1"

    def abandoned(self) -> list[str]:
        """Paths of trickled replies the client stopped reading (its deadline cut them off)."""
        with self._server._lock:
            return list(self._server.abandoned)

    def requests(self, mode: str | None = None) -> list[Request]:
        with self._server._lock:
            return [r for r in self._server.requests if mode is None or r.mode == mode]


if __name__ == "__main__":  # a manual stand-in: python tests/fault_server.py
    with FaultServer() as s:
        print(f"fault server on {s.url('<mode>')}; Ctrl-C to stop", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
