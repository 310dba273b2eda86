"""One adapter per run, many episodes: each request goes through its own episode's transport.

Building an SDK client per episode costs a TLS context and a fresh connection each time, so a
run builds each adapter once, over an `EpisodeRouter`. An episode binds its transport (its
cassette, the emulator's script for its case) for the duration of its task with
`bound(transport)`; requests sent from that task go there, and requests from a task that bound
nothing go to the router's shared upstream (one connection pool per adapter and run).
asyncio copies context variables into each task, so concurrent episodes never see each other's
binding.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import httpx2

_EPISODE: ContextVar[httpx2.AsyncBaseTransport | None] = ContextVar("xpeval_episode_transport", default=None)


@contextmanager
def bound(transport: httpx2.AsyncBaseTransport | None) -> Iterator[None]:
    """Send this task's requests through `transport` (None: the shared upstream)."""
    token = _EPISODE.set(transport)
    try:
        yield
    finally:
        _EPISODE.reset(token)


class EpisodeRouter(httpx2.AsyncBaseTransport):
    """The transport of a shared adapter: the bound episode's, else the shared upstream."""

    def __init__(self, upstream: httpx2.AsyncBaseTransport | None) -> None:
        self.upstream = upstream

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        transport = _EPISODE.get() or self.upstream
        if transport is None:
            raise RuntimeError(
                f"{request.method} {request.url.path}: no episode transport is bound and this adapter "
                "has no upstream (replay never reaches the network)"
            )
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        if self.upstream is not None:
            await self.upstream.aclose()


def upstream_pool() -> httpx2.AsyncBaseTransport:
    """One connection pool (one TLS context) for an adapter's whole run."""
    from xpeval.adapters import connection_pool

    return connection_pool()
