"""The model factory: a ChatOpenAI for any OpenAI-compatible endpoint, or None (offline).

``ChatOpenAI`` raises at construction when no key is set, so it is never constructed unless a
key or a base URL is configured. A local server (Ollama, vLLM, llama.cpp) usually needs no key:
a placeholder is passed so the client can be built.

The client's ``timeout`` is an httpx timeout, which bounds each network operation (connect, one
read), not the request: a server that sends its headers and then one byte a second would keep
a call open for as long as it likes. So the sync client gets :class:`DeadlineTransport`, which
stops reading a response body once ``llm_timeout_s`` has passed since the request started, and
refuses a body larger than :data:`MAX_REPLY_BYTES`. The deadline the *turn* sees is enforced
by ``nodes.model_call.call_model`` (it stops waiting); this transport makes the abandoned
request end too, instead of trickling on in a background thread.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import httpx

from app.settings import Settings

#: The largest HTTP body a model reply may have. A 400-token answer is ~2 KB of JSON; 4 MiB is
#: far above any reply PerfScout asks for, and far below what would hurt memory.
MAX_REPLY_BYTES = 4 * 1024 * 1024


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that ends with ``httpx.ReadTimeout`` at the deadline, or ``ReadError``
    beyond ``max_bytes``: checked on every chunk the server sends (a trickle sends many)."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, seconds: float, max_bytes: int):
        self._inner = inner
        self._deadline = deadline
        self._seconds = seconds
        self._max_bytes = max_bytes

    def __iter__(self) -> Iterator[bytes]:
        received = 0
        for chunk in self._inner:
            received += len(chunk)
            if time.monotonic() > self._deadline:
                raise httpx.ReadTimeout(f"the reply took longer than {self._seconds:g} s in total")
            if received > self._max_bytes:
                raise httpx.ReadError(f"the reply is larger than {self._max_bytes} bytes")
            yield chunk

    def close(self) -> None:
        self._inner.close()


class DeadlineTransport(httpx.HTTPTransport):
    """``httpx.HTTPTransport`` with a whole-request deadline on the response body."""

    def __init__(self, seconds: float, max_bytes: int = MAX_REPLY_BYTES, **kwargs: Any):
        super().__init__(**kwargs)
        self.seconds = float(seconds)
        self.max_bytes = max_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.seconds
        response = super().handle_request(request)
        response.stream = _DeadlineStream(response.stream, deadline, self.seconds, self.max_bytes)  # type: ignore[arg-type]
        return response


def make_http_client(settings: Settings) -> httpx.Client:
    """The sync HTTP client of the chat model: per-operation timeouts plus the whole-body deadline."""
    return httpx.Client(
        transport=DeadlineTransport(settings.llm_timeout_s),
        timeout=httpx.Timeout(settings.llm_timeout_s),
        follow_redirects=True,
    )


def make_chat_model(settings: Settings) -> Any:
    """The configured chat model, or None when none is configured (the offline default)."""
    if not settings.model_configured:
        return None
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key or "not-needed",
        timeout=settings.llm_timeout_s,
        http_client=make_http_client(settings),
        # One call, no silent retry storm: the router falls back to `end` on a failure.
        max_retries=0,
        temperature=0,
    )


#: The router asks with max_tokens=5 / temperature=0 per call; it shares the same client.
make_router_model = make_chat_model
