"""The HTTP transport of the chat model: a whole-request deadline and a size cap on the reply.

The client's ``timeout`` is an httpx timeout, which bounds each network operation (connect, one
read), not the request: a server that sends its headers and then one byte a second would keep
a call open for as long as it likes. :class:`DeadlineTransport` stops reading a response body
once its seconds have passed since the request started, and refuses a body larger than
:data:`MAX_REPLY_BYTES`. A module of its own because httpx costs ~0.1 s to import and only a
configured model needs it (``app/models.py`` imports this on first use).
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import httpx

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
