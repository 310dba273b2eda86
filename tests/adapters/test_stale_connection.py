"""A connection the server closed before answering is retried once, and only once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from xpeval.adapters import connection_pool

_OK = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok": true}'


@asynccontextmanager
async def _server(drops: int) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A loopback server that reads each request and closes `drops` connections without a byte
    of response (as llama-server does to a kept-alive connection), then answers 200."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        seen.append(await reader.readexactly(length))
        if len(seen) > drops:
            writer.write(_OK)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}/v1/chat/completions", seen


def test_a_request_the_server_dropped_unanswered_is_sent_again_once() -> None:
    async def scenario() -> tuple[int, list[bytes]]:
        async with _server(drops=1) as (url, seen), httpx2.AsyncClient(transport=connection_pool()) as client:
            response = await client.post(url, json={"model": "m"})
            return response.status_code, seen

    status, seen = asyncio.run(scenario())
    assert status == 200
    assert seen == [b'{"model":"m"}', b'{"model":"m"}']


def test_a_server_that_keeps_dropping_is_an_error_after_the_second_try() -> None:
    async def scenario(seen_out: list[bytes]) -> None:
        async with (
            _server(drops=10) as (url, seen),
            httpx2.AsyncClient(transport=connection_pool()) as client,
        ):
            try:
                await client.post(url, json={"model": "m"})
            finally:
                seen_out.extend(seen)

    seen: list[bytes] = []
    with pytest.raises(httpx2.RemoteProtocolError, match="without sending a response"):
        asyncio.run(scenario(seen))
    assert len(seen) == 2


def test_adapters_load_the_ca_bundle_once_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    # `cassettes check` builds an adapter per cassette: a TLS context each (and mistralai's own
    # synchronous client, another) loaded the CA bundle again, about 30 ms of CPU a time.
    import ssl

    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.registry import create_adapter

    adapters = [create_adapter("openai-chat", AdapterSettings())]  # this process's context, made once
    loads: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        loads.append(args)
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    adapters += [create_adapter(name, AdapterSettings()) for name in ("openai-chat", "mistral", "mistral")]
    assert loads == []
    for adapter in adapters:
        asyncio.run(adapter.aclose())
