"""HTTP response pieces every wire's rendering shares: JSON bodies, SSE frames, text pieces."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from xpeval.adapters.contract import ProviderError
from xpeval.adapters.wires._base import RenderedResponse


def sse_frame(data: Any, event: str | None = None) -> bytes:
    """One server-sent event frame."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def text_pieces(text: str, size: int = 16) -> list[str]:
    """`text` in the small pieces a streaming server sends (one empty piece for empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def retry_after_header(error: ProviderError) -> dict[str, str]:
    """The Retry-After header a provider sends with `error`, when it asked for a wait."""
    return {"retry-after": str(int(error.retry_after))} if error.retry_after is not None else {}


def sent_in_stream(error: ProviderError, *, stream: bool) -> bool:
    """Whether a provider reports `error` as a frame of a 200 stream rather than an HTTP status:
    an in-stream error, or one with no status of its own (or 200) when a stream was asked for."""
    return error.kind == "stream" or (stream and error.status in (None, 200))


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> RenderedResponse:
    merged = {"content-type": "application/json"}
    merged.update(headers or {})
    return RenderedResponse(status=status, headers=merged, chunks=[json.dumps(body).encode()])


def sse_response(frames: list[bytes]) -> RenderedResponse:
    return RenderedResponse(
        status=200, headers={"content-type": "text/event-stream", "cache-control": "no-cache"}, chunks=frames
    )
