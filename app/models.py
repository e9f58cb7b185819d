"""The model factory: a ChatOpenAI for any OpenAI-compatible endpoint, or None (offline).

``ChatOpenAI`` raises at construction when no key is set, so it is never constructed unless a
key or a base URL is configured. A local server (Ollama, vLLM, llama.cpp) usually needs no key:
a placeholder is passed so the client can be built.

Every model call goes through ``make_http_client``: httpx's per-operation timeouts plus the
whole-request deadline and reply-size cap of ``app/http_transport.py``. The deadline the *turn*
sees is enforced by ``nodes.framework.model_call.call_model`` (it stops waiting); the transport makes the
abandoned request end too, instead of trickling on in a background thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.settings import Settings

if TYPE_CHECKING:
    import httpx


def make_http_client(settings: Settings) -> httpx.Client:
    """The sync HTTP client of the chat model: per-operation timeouts plus the whole-body deadline."""
    import httpx

    from app.http_transport import DeadlineTransport

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
