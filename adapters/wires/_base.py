"""What every wire module provides, and the few helpers they share.

A wire knows one provider format both ways: it encodes canonical requests into its SDK's call
arguments, decodes the SDK's (plain or streamed) responses into a `TurnResult`, maps failures
to `ProviderError`, and renders canonical results back into the provider's exact response
bytes (the emulator serves those).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapters.contract import JsonObject, ProviderError, TurnRequest, TurnResult, WireName
from adapters.schema import PreparedTools


@dataclass(frozen=True)
class RenderedResponse:
    """An HTTP response as a provider would send it."""

    status: int
    headers: dict[str, str]
    chunks: list[bytes] = field(default_factory=list)
    """Body in the pieces a streaming server would flush; one piece for a plain response."""

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


class Wire(Protocol):
    """The one place a provider's wire format is known."""

    name: WireName

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        """SDK call arguments for `request`, including `model` and `stream`."""
        ...

    def validate_encoded(self, kwargs: JsonObject) -> None:
        """Validate encoded arguments against the SDK's own request types; raise if invalid."""
        ...

    async def send(self, client: Any, kwargs: JsonObject) -> TurnResult:
        """Call the provider through its SDK (streamed when `kwargs["stream"]`) and decode.
        Never raises for provider failures."""
        ...

    def decode(self, response: Any) -> TurnResult:
        """Decode the SDK's parsed non-streamed response."""
        ...

    def decode_stream(self, events: list[Any]) -> TurnResult:
        """Reassemble the SDK's parsed stream events into one result."""
        ...

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        """Map any exception raised while talking to the provider to a ProviderError."""
        ...

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        """The response bytes this provider would send for `result` (the emulator's body)."""
        ...

    def request_path(self, model: str, *, stream: bool) -> str:
        """The URL path (after the base URL's own path) this wire's SDK calls."""
        ...

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        """Whether a recorded request asked for a stream."""
        ...

    def minimal_request(self, model: str) -> JsonObject:
        """The smallest valid call arguments (used to drive the SDK when replaying a response)."""
        ...


def parse_arguments(raw: str | None) -> tuple[JsonObject, str | None]:
    """Parse a model's argument text into a dict, or say why it is not one.

    Empty or whitespace-only text means "no arguments" (providers send "" for argument-less
    calls). Never raises: broken JSON, a non-object value and absurd nesting all come back as
    `({}, reason)`.
    """
    if raw is None or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except RecursionError:
        return {}, "arguments nest too deeply to parse"
    except ValueError as exc:
        return {}, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"arguments are not a JSON object (got {type(value).__name__})"
    return value, None


def none_if_empty(text: str | None) -> str | None:
    return text if text else None


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (delta-seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(parsed.timestamp() - (time.time() if now is None else now), 0.0)


def error_fields(body: Any) -> tuple[str | None, str | None]:
    """(type, message) from an OpenAI- or Anthropic-style error body.

    Accepts the envelope (`{"error": {...}}`) or the inner object. The type is `error.type`, or
    the error code as a string when the provider gives no type (OpenRouter, Azure).
    """
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None, body or None
    if not isinstance(body, Mapping):
        return None, None
    inner = body.get("error", body)
    if isinstance(inner, str):
        return None, inner
    if not isinstance(inner, Mapping):
        return None, None
    etype = inner.get("type")
    if not etype:
        code = inner.get("code")
        etype = None if code is None or code == "" else str(code)
    message = inner.get("message")
    return (str(etype) if etype else None), (str(message) if message else None)


def stainless_error(exc: BaseException) -> ProviderError:
    """Map an exception from a Stainless-generated SDK (openai, anthropic) to a ProviderError.

    Both SDKs share the same exception shapes (APIStatusError with a response, APIError with
    a body for errors inside a stream, APITimeoutError, APIConnectionError) under different
    classes, so this goes by attributes rather than isinstance.
    """
    name = type(exc).__name__
    if "Timeout" in name:
        return ProviderError(message=str(exc) or "request timed out", kind="timeout")
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    response = getattr(exc, "response", None)
    etype, message = error_fields(body)
    if status is not None and int(status) == 200:
        # anthropic raises its in-stream `event: error` as a status error on the 200 response.
        return ProviderError(type=etype, message=message or str(exc), kind="stream")
    if status is not None:
        headers = dict(response.headers) if response is not None else None
        return ProviderError(
            status=int(status),
            type=etype,
            message=message or str(exc),
            retry_after=retry_after_seconds(headers),
            kind="http",
        )
    if "Connection" in name:
        return ProviderError(message=str(exc) or "connection failed", kind="connection")
    if body is not None or name == "APIError":
        # Raised by the SDK's stream iterator for an error frame inside a 200 stream.
        return ProviderError(status=None, type=etype, message=message or str(exc), kind="stream")
    return transport_error(exc)


def transport_error(exc: BaseException) -> ProviderError:
    """Anything else that broke the exchange: timeouts, connection errors, undecodable data."""
    name = type(exc).__name__
    if "Timeout" in name:
        return ProviderError(message=str(exc) or name, kind="timeout")
    if any(word in name for word in ("Connect", "Network", "Protocol", "RemoteProtocol", "ReadError")):
        return ProviderError(message=str(exc) or name, kind="connection")
    return ProviderError(message=f"{name}: {exc}" if str(exc) else name, kind="decode")


def validate_params(adapter: Any, kwargs: JsonObject) -> None:
    """Validate call arguments against an SDK's TypedDict request type, all the way down.

    The SDKs type lists as `Iterable[...]`, which pydantic validates lazily: the items are only
    checked when iterated. Walking the result forces every nested item through validation.
    """
    _exhaust(adapter.validate_python(kwargs))


def _exhaust(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif hasattr(item, "__next__"):
            stack.extend(list(item))


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


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> RenderedResponse:
    merged = {"content-type": "application/json"}
    merged.update(headers or {})
    return RenderedResponse(status=status, headers=merged, chunks=[json.dumps(body).encode()])


def sse_response(frames: list[bytes]) -> RenderedResponse:
    return RenderedResponse(
        status=200, headers={"content-type": "text/event-stream", "cache-control": "no-cache"}, chunks=frames
    )
