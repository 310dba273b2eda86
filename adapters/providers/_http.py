"""The one place provider modules build the HTTP client they hand to an SDK.

Every SDK gets an httpx2 client built here: over an injected transport (cassettes, the
emulator, fault injection) or over its own connection pool, carrying the base URL's query
parameters (see `split_query`). SDK retries are off: the runner owns retries, so a recorded
episode is exactly its requests.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx2

from adapters.adapter import AdapterSettings
from adapters.exchange import ObservingTransport

POOL_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=1000)
"""As many connections as requests in flight: the runner bounds concurrency, not the pool."""


def async_http_client(
    settings: AdapterSettings, query: Mapping[str, str] | None = None
) -> httpx2.AsyncClient:
    """The client an SDK sends through: `settings.transport` when one is injected, else a pool;
    either way observed, so a decode error can name what the server sent."""
    inner = settings.transport or httpx2.AsyncHTTPTransport(limits=POOL_LIMITS)
    return httpx2.AsyncClient(
        transport=ObservingTransport(inner),
        timeout=settings.timeout,
        params=dict(query or {}),
        limits=POOL_LIMITS,
        follow_redirects=True,
    )


def sdk_client_kwargs(settings: AdapterSettings, query: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Arguments shared by the Stainless SDKs (openai, anthropic)."""
    kwargs: dict[str, Any] = {"max_retries": 0, "timeout": settings.timeout}
    if settings.headers:
        kwargs["default_headers"] = dict(settings.headers)
    kwargs["http_client"] = async_http_client(settings, query)
    return kwargs
