"""Scripted provider replies, served in-process through httpx2's MockTransport.

Each reply is a canonical `TurnResult` (calls, text, or an error) that the adapter's own wire
renders into the provider's bytes, plain or streamed as the request asks; or a raw response
for malformed-output faults. The loopback server (`xpeval.evals.emulator.server`) serves the same
replies over real HTTP and adds the faults only a socket can show (delays, truncation).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field

import httpx2

from xpeval.adapters.contract import ProviderError, TurnResult
from xpeval.adapters.wires import RenderedResponse, Wire
from xpeval.adapters.wires.loop_rules import Mutation
from xpeval.evals.emulator.strict import strict_refusal


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a result for the wire to render, or exact raw bytes.

    The fault fields are honoured by the loopback server (`EmulatorServer`): a delay before the
    response starts, a pause between stream frames, a stream cut after some frames (the
    connection closes without the end of the chunked body), extra response headers, a gzip body.
    """

    result: TurnResult | None = None
    raw: RenderedResponse | None = None
    model: str = "emulated-model"
    delay: float = 0.0
    chunk_delay: float = 0.0
    truncate_after: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    gzip: bool = False

    @classmethod
    def http_error(
        cls,
        status: int,
        message: str = "emulated error",
        *,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> Reply:
        """An HTTP error status (with `retry-after` when given), in the wire's error format."""
        error = ProviderError(
            status=status, type=error_type, message=message, retry_after=retry_after, kind="http"
        )
        return cls(result=TurnResult(error=error))

    @classmethod
    def stream_error(
        cls, message: str = "emulated stream error", *, error_type: str | None = "server_error"
    ) -> Reply:
        """An error frame inside a 200 stream, in the wire's format."""
        return cls(result=TurnResult(error=ProviderError(type=error_type, message=message, kind="stream")))

    def rendered(self, wire: Wire, *, stream: bool) -> RenderedResponse:
        """The response this reply stands for, as `wire` sends it."""
        if self.raw is not None:
            return self.raw
        assert self.result is not None, "a Reply needs a result or raw bytes"
        return wire.render(self.result, model=self.model, stream=stream)


@dataclass
class ScriptedTransport:
    """Answers successive requests with successive replies; records every request.

    `strict`: a request that does not carry back the reasoning state of the replies served
    before it gets the provider's refusal instead of its reply (`strict.py`); `mutation`: each
    request is judged as a loop committing it would have sent it."""

    wire: Wire
    replies: Sequence[Reply]
    requests: list[httpx2.Request] = field(default_factory=list)
    chunked: bool = True
    """Flush a stream frame by frame (as a server does) instead of in one piece."""
    strict: bool = False
    mutation: Mutation | None = None
    served: list[TurnResult] = field(default_factory=list)
    """The results answered so far (the conversation's state, for `strict`)."""

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
        refusal = (
            strict_refusal(self.wire, self.served, request.content, str(request.url), self.mutation)
            if self.strict
            else None
        )
        reply = self.replies[index]
        rendered = refusal or reply.rendered(self.wire, stream=self._is_stream(request))
        if refusal is None and reply.result is not None:
            self.served.append(reply.result)
        if self.chunked and len(rendered.chunks) > 1:
            return httpx2.Response(rendered.status, headers=rendered.headers, content=_aiter(rendered.chunks))
        return httpx2.Response(rendered.status, headers=rendered.headers, content=rendered.body)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    def request_json(self, index: int) -> dict[str, object]:
        document: dict[str, object] = json.loads(self.requests[index].content)
        return document


async def _aiter(chunks: Sequence[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk
