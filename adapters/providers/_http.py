"""The one place provider modules build the HTTP client they hand to an SDK."""

from __future__ import annotations

from typing import Any

import httpx2

from adapters.adapter import AdapterSettings


def async_http_client(settings: AdapterSettings) -> httpx2.AsyncClient | None:
    """A client over `settings.transport` when one is injected; None lets the SDK build its own."""
    if settings.transport is None:
        return None
    return httpx2.AsyncClient(transport=settings.transport, timeout=settings.timeout)


def sdk_client_kwargs(settings: AdapterSettings) -> dict[str, Any]:
    """Arguments shared by the Stainless SDKs (openai, anthropic).

    SDK retries are off: the runner owns retries, so a recorded episode is exactly one request.
    """
    kwargs: dict[str, Any] = {"max_retries": 0, "timeout": settings.timeout}
    if settings.headers:
        kwargs["default_headers"] = dict(settings.headers)
    client = async_http_client(settings)
    if client is not None:
        kwargs["http_client"] = client
    return kwargs
