"""Serve recorded responses to an SDK through httpx2's MockTransport.

The SDK then parses the bytes exactly as it would parse the network's, so decoding a
recording exercises the production path: SDK parsing, then the wire's decoder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import httpx2

from evals.cassettes.format import Interaction


def _sse_from_json_array(body: bytes) -> bytes | None:
    """Gemini's `:streamGenerateContent` without `alt=sse` answers one JSON array of chunks.

    The SDK always asks for `alt=sse`, so it only parses SSE frames; the same chunks re-framed
    as SSE are what it would have received. Returns None when the body is not such an array.
    """
    stripped = body.lstrip()
    if not stripped.startswith(b"["):
        return None
    try:
        chunks = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(chunks, list):
        return None
    return b"".join(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n" for chunk in chunks)


def recorded_response(interaction: Interaction) -> httpx2.Response:
    """The httpx2 response a client would have received for this interaction."""
    headers = interaction.flat_response_headers()
    body = interaction.response_body
    if ":streamGenerateContent" in interaction.uri and "alt=sse" not in interaction.uri:
        reframed = _sse_from_json_array(body)
        if reframed is not None:
            body = reframed
            headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
            headers["content-type"] = "text/event-stream"
    return httpx2.Response(interaction.status, headers=headers, content=body)


class InOrderReplay:
    """A MockTransport handler answering successive requests with successive recordings.

    Requests beyond the recording fail loudly instead of reaching the network.
    """

    def __init__(self, interactions: Sequence[Interaction], source: str = "<cassette>") -> None:
        self._interactions = list(interactions)
        self._next = 0
        self._source = source

    @property
    def remaining(self) -> int:
        return len(self._interactions) - self._next

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if self._next >= len(self._interactions):
            raise RuntimeError(
                f"{self._source}: request {self._next} ({request.method} {request.url}) "
                "has no recorded response"
            )
        interaction = self._interactions[self._next]
        self._next += 1
        return recorded_response(interaction)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)
