"""The one place provider modules build the HTTP client they hand to an SDK.

Every SDK gets an httpx2 client built here: over an injected transport (cassettes, the
emulator, fault injection) or over its own connection pool, carrying the base URL's query
parameters (see `split_query`). SDK retries are off: the runner owns retries, so a recorded
episode is exactly its requests. Because the transport is given explicitly, httpx does not read
proxy variables from the environment (README, "Live runs against providers").
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Mapping
from typing import Any

import httpx2

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.exchange import ObservingTransport

POOL_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=1000)
"""As many connections as requests in flight: the runner bounds concurrency, not the pool."""

_NO_RESPONSE = "Server disconnected without sending a response"


class StaleConnectionRetry(httpx2.AsyncBaseTransport):
    """Sends a request once more when the server closed the connection before answering.

    A kept-alive connection can be closed by the server between two requests without the
    client knowing; the next request written to it reads end-of-file and no response at all.
    llama-server does this on streamed requests (docs/local-model.md: about one in five
    back-to-back streamed requests), which made every multi-request episode on the local model
    fail its retries. The request was never answered, so sending it again on a fresh connection
    is what the SDKs' own retries would do; with those off (the runner owns retries), it is done
    here, once, below the recorder, so a recording still holds each request once. Any other
    error, and a second failure, reach the caller unchanged.
    """

    def __init__(self, pool: httpx2.AsyncBaseTransport) -> None:
        self._pool = pool

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await self._pool.handle_async_request(request)
        except httpx2.RemoteProtocolError as exc:
            if _NO_RESPONSE not in str(exc):
                raise
        return await self._pool.handle_async_request(request)

    async def aclose(self) -> None:
        await self._pool.aclose()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every pool of this process: building one loads the CA bundle, about
    30 ms of CPU, and every adapter (one per cassette in `cassettes check`) would build its own.
    Read-only once made, so the pools share it."""
    return httpx2.create_ssl_context()


def connection_pool() -> httpx2.AsyncBaseTransport:
    """The transport that reaches the network: one pool, retrying a connection that was closed
    before it answered (see `StaleConnectionRetry`)."""
    return StaleConnectionRetry(httpx2.AsyncHTTPTransport(verify=tls_context(), limits=POOL_LIMITS))


def async_http_client(
    settings: AdapterSettings, query: Mapping[str, str] | None = None
) -> httpx2.AsyncClient:
    """The client an SDK sends through: `settings.transport` when one is injected, else a pool;
    either way observed, so a decode error can name what the server sent."""
    inner = settings.transport or connection_pool()
    return httpx2.AsyncClient(
        transport=ObservingTransport(inner),
        timeout=settings.timeout,
        params=dict(query or {}),
        limits=POOL_LIMITS,
        follow_redirects=True,
    )


def http_transport(settings: AdapterSettings) -> httpx2.AsyncBaseTransport:
    """The transport an adapter's requests go through (`settings.transport` when one is injected,
    else a pool), observed: what a client on another HTTP library is bridged onto."""
    return ObservingTransport(settings.transport or connection_pool())


def sdk_client_kwargs(settings: AdapterSettings, query: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Arguments shared by the Stainless SDKs (openai, anthropic)."""
    kwargs: dict[str, Any] = {"max_retries": 0, "timeout": settings.timeout}
    if settings.headers:
        kwargs["default_headers"] = dict(settings.headers)
    kwargs["http_client"] = async_http_client(settings, query)
    return kwargs
