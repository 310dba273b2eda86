"""Scripted provider replies, served in-process through httpx2's MockTransport.

Each reply is a canonical `TurnResult` (calls, text, or an error) that the adapter's own wire
renders into the provider's bytes, plain or streamed as the request asks; or a raw response
for malformed-output faults.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import httpx2

from adapters.contract import TurnResult
from adapters.wires import RenderedResponse, Wire


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a result for the wire to render, or exact raw bytes."""

    result: TurnResult | None = None
    raw: RenderedResponse | None = None
    model: str = "emulated-model"


@dataclass
class ScriptedTransport:
    """Answers successive requests with successive replies; records every request."""

    wire: Wire
    replies: Sequence[Reply]
    requests: list[httpx2.Request] = field(default_factory=list)
    chunked: bool = True
    """Flush a stream frame by frame (as a server does) instead of in one piece."""

    def _is_stream(self, request: httpx2.Request) -> bool:
        body = None
        if request.content:
            try:
                body = json.loads(request.content)
            except ValueError:
                body = None
        return self.wire.is_stream(str(request.url), body if isinstance(body, dict) else None)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        index = len(self.requests)
        self.requests.append(request)
        if index >= len(self.replies):
            raise RuntimeError(f"no scripted reply for request {index}: {request.method} {request.url}")
        reply = self.replies[index]
        if reply.raw is not None:
            rendered = reply.raw
        else:
            assert reply.result is not None
            rendered = self.wire.render(reply.result, model=reply.model, stream=self._is_stream(request))
        if self.chunked and len(rendered.chunks) > 1:
            return httpx2.Response(rendered.status, headers=rendered.headers, content=_aiter(rendered.chunks))
        return httpx2.Response(rendered.status, headers=rendered.headers, content=rendered.body)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    def request_json(self, index: int) -> dict[str, object]:
        return json.loads(self.requests[index].content)  # type: ignore[no-any-return]


async def _aiter(chunks: Sequence[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
