"""The model factory: a ChatOpenAI for any OpenAI-compatible endpoint, or None (offline).

``ChatOpenAI`` raises at construction when no key is set, so it is never constructed unless a
key or a base URL is configured. A local server (Ollama, vLLM, llama.cpp) usually needs no key:
a placeholder is passed so the client can be built.
"""

from __future__ import annotations

from typing import Any

from app.settings import Settings


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
        # One call, no silent retry storm: the router falls back to `end` on a failure.
        max_retries=0,
        temperature=0,
    )


#: The router asks with max_tokens=5 / temperature=0 per call; it shares the same client.
make_router_model = make_chat_model
