"""An episode's request as its adapter would send it online, for a batch; then its answer.

A batched episode is played twice through its own adapter and cassette binding. First over a
`CaptureTransport`: the SDK encodes the request (the wire's encoder, the adapter's dialect) and
the transport keeps it instead of sending it. Then, when its batch has answered, over an
`AnswerTransport`: the same request gets the batch's answer as its response, so it is decoded,
scored and recorded exactly as an online answer is, and its cassette replays like one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import httpx2


class Captured(Exception):
    """Raised inside the SDK's send: the request is kept, nothing goes out."""


@dataclass
class CapturedRequest:
    url: str
    path: str
    body: bytes

    @property
    def digest(self) -> str:
        return body_digest(self.body)


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class CaptureTransport(httpx2.AsyncBaseTransport):
    """Keeps the first request sent through it and refuses to send anything."""

    def __init__(self) -> None:
        self.requests: list[CapturedRequest] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        self.requests.append(CapturedRequest(str(request.url), request.url.path, body))
        raise Captured("captured for a batch")


class AnswerTransport(httpx2.AsyncBaseTransport):
    """Answers the episode's one request with its batch answer, when it is the request the
    batch was sent (its body's sha256); a request that differs is answered with nothing (the
    episode's row says why: `mismatch`)."""

    def __init__(self, status: int, body: bytes, digest: str) -> None:
        self.status = status
        self.body = body
        self.digest = digest
        self.mismatch: str | None = None
        self.answered = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        if self.answered or body_digest(body) != self.digest:
            self.mismatch = (
                "the episode sent a second request, which a batch cannot answer"
                if self.answered
                else "the episode's request is not the one its batch was sent (its body changed)"
            )
            raise Captured(self.mismatch)
        self.answered += 1
        return httpx2.Response(
            self.status, headers={"content-type": "application/json"}, content=self.body, request=request
        )
