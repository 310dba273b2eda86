"""What came back over HTTP for a turn: status, content type and the first bytes of the body.

The SDKs hide the raw response once they have parsed it (or failed to). A decode error must
name what the server actually sent (`200 text/html` is a proxy's error page, not a model
answering nothing), so every SDK client sends through `ObservingTransport`, which notes the
last response of the turn in progress. `Adapter.turn` opens the note with `observe()`; asyncio
copies context into each task, so concurrent turns never share one.

The note also holds every response the turn opened, and the turn closes them before it ends
(`Exchange.release`): an SDK that stops reading a stream without closing it leaves the
connection open and its byte iterators suspended. google-genai does this when it raises an
error frame inside a 200 stream: its response's segment iterator stays suspended inside
httpx2's `aiter_bytes`, and when the loop finalizes those generators, all at once, one whose
close awaits the still-open connection is closed again by its parent ("aclose(): asynchronous
generator is already running", one traceback per generator on stderr). A response closed when
its turn ends leaves them nothing to wait for.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import httpx2

from xpeval.adapters import secrets
from xpeval.adapters.off_loop import at_home, home_response

HEAD_BYTES = 1024
"""How much of a body's start is kept (never more: bodies may be megabytes): enough that the
`SHOWN_CHARS` a decode error shows are scrubbed whole before they are cut (a secret starting
among them ends within these bytes)."""
SHOWN_CHARS = 60
"""How much of a body's start a decode error shows."""
TAIL_BYTES = 64
"""How much of its end is kept: some streams' only terminal mark is their last frame."""


@dataclass
class Exchange:
    status: int | None = None
    content_type: str | None = None
    head: bytes = b""
    tail: bytes = b""
    opened: list[httpx2.Response] = field(default_factory=list)
    """Every response of the turn, closed by `release` when it ends."""

    def describe(self) -> str:
        """`200 text/html, body starts '<html>...'` (what the server sent, in one phrase)."""
        if self.status is None:
            return "no response"
        kind = self.content_type or "no content type"
        head = secrets.redacted(self.head.decode("utf-8", "replace")).strip()  # scrubbed, then cut
        shown = f"body starts {head[:SHOWN_CHARS]!r}" if head else "empty body"
        return f"{self.status} {kind}, {shown}"

    async def release(self) -> None:
        """Close every response the turn opened that its SDK left open."""
        opened, self.opened = self.opened, []
        for response in opened:
            if not response.is_closed:
                with contextlib.suppress(Exception):  # a close that fails changes no result
                    await response.aclose()


_CURRENT: ContextVar[Exchange | None] = ContextVar("xpeval_exchange", default=None)


def current() -> Exchange | None:
    """The exchange of the turn in progress (None outside `observe()`)."""
    return _CURRENT.get()


@contextmanager
def observe() -> Iterator[Exchange]:
    exchange = Exchange()
    token = _CURRENT.set(exchange)
    try:
        yield exchange
    finally:
        _CURRENT.reset(token)


class _HeadStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, exchange: Exchange) -> None:
        self._inner = inner
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        exchange = self._exchange
        async for chunk in self._inner:
            if len(exchange.head) < HEAD_BYTES:
                exchange.head += chunk[: HEAD_BYTES - len(exchange.head)]
            exchange.tail = (exchange.tail + chunk)[-TAIL_BYTES:]
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class ObservingTransport(httpx2.AsyncBaseTransport):
    """Passes every request to `inner` and notes the response in the turn's `Exchange`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        # From a plugin wire's worker loop, the request is sent on the run's loop (off_loop.py).
        response = home_response(await at_home(lambda: self.inner.handle_async_request(request)))
        exchange = _CURRENT.get()
        if exchange is not None:
            exchange.opened.append(response)
            exchange.status = response.status_code
            exchange.content_type = response.headers.get("content-type")
            exchange.head = exchange.tail = b""
            try:
                body = response.content  # already read (an in-memory body: cassettes, mocks)
            except httpx2.ResponseNotRead:
                if isinstance(response.stream, httpx2.AsyncByteStream):
                    response.stream = _HeadStream(response.stream, exchange)
            else:
                exchange.head, exchange.tail = body[:HEAD_BYTES], body[-TAIL_BYTES:]
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
