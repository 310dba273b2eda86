"""What every wire provides, and the few helpers its codec shares.

A wire knows one provider format both ways: it encodes canonical requests into its SDK's call
arguments, decodes the SDK's (plain or streamed) responses into a `TurnResult`, maps failures
to `ProviderError`, states the facts the rest of xpeval asks about its format (paths, streams,
where tools sit), and renders canonical results back into the provider's exact response bytes
(the emulator serves those; the rendering lives in `render/`). Rules: `adapters/wires/RULES.md`.

Every codec fills in one skeleton (`Codec`): it names its SDK's plain and streamed calls, the
accumulator a stream is folded by (`StreamAccumulator`, its calls as `PendingCall`s) and what
ends a whole stream; `Codec.send` does the rest the same way for every wire (a failure is a
value, a stream is read and closed by `read_stream`), and a plain reply is decoded by the same
accumulator where the wire's plain reply reads as its stream's events.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2

from xpeval.adapters.contract import (
    FinishReason,
    JsonObject,
    ProviderError,
    ToolCall,
    TurnRequest,
    TurnResult,
    Usage,
    WireName,
)
from xpeval.adapters.schema import PreparedTools
from xpeval.adapters.wires._layout import ToolLayout


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
    request_paths: tuple[re.Pattern[str], ...]
    """The request paths this wire's SDK calls, searched in a path with its query or a whole URL
    (`wire_for_path` asks every wire)."""

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        """SDK call arguments for `request`, including `model` and `stream`."""
        ...

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        """Where a request encoded for `dialect` carries each tool (`strict`: the prepared tools'
        flag); `encode` lays tools out by it."""
        ...

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        """The tool definitions in encoded call arguments, in the provider's REST shape."""
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

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        """Map any exception raised while talking to the provider to a ProviderError."""
        ...

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        """The response bytes this provider would send for `result` (the emulator's body)."""
        ...

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        """Whether a recorded request asked for a stream."""
        ...

    def recorded_model(self, url: str, body: JsonObject | None) -> str | None:
        """The model a recorded request names (in its body or its URL), if it names one."""
        ...

    def replayable_response(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[dict[str, str], bytes]:
        """A recorded response's headers and body as this wire's SDK must be served them on
        replay (the SDK may only parse one of the framings the provider sends)."""
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


def body_model(body: JsonObject | None) -> str | None:
    """The `model` a request body names (every wire but Gemini's names it there)."""
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else None


class BodyDescribedRequests:
    """The recording facts of a wire whose request body names the model and asks for a stream
    (`"stream": true`), and whose recorded responses replay as they were recorded (every wire
    but Gemini's, which puts both in the URL)."""

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        return bool(body and body.get("stream"))

    def recorded_model(self, url: str, body: JsonObject | None) -> str | None:
        return body_model(body)

    def replayable_response(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[dict[str, str], bytes]:
        return headers, body


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


def stainless_error(exc: BaseException, sdk: Any) -> ProviderError:
    """Map an exception from a Stainless-generated SDK (`sdk`: the openai or anthropic module,
    which share these exception types) to a ProviderError, by the SDK's own classes."""
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(message=str(exc) or "request timed out", kind="timeout")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        if isinstance(cause, httpx2.HTTPError):
            return transport_error(cause)
        return ProviderError(message=str(exc) or "connection failed", kind="connection")
    if isinstance(exc, sdk.APIStatusError):
        etype, message = error_fields(exc.body)
        if exc.status_code == 200:
            # anthropic raises its in-stream `event: error` as a status error on the 200 response.
            return ProviderError(type=etype, message=message or str(exc), kind="stream")
        return ProviderError(
            status=exc.status_code,
            type=etype,
            message=message or str(exc),
            retry_after=retry_after_seconds(dict(exc.response.headers)),
            kind="http",
        )
    if isinstance(exc, sdk.APIResponseValidationError):
        return ProviderError(
            status=exc.status_code, message=f"response does not validate: {exc}", kind="decode"
        )
    if isinstance(exc, sdk.APIError):
        # Raised by the SDK's stream iterator for an error frame inside a 200 stream.
        etype, message = error_fields(exc.body)
        return ProviderError(type=etype, message=message or str(exc), kind="stream")
    return transport_error(exc)


def transport_error(exc: BaseException) -> ProviderError:
    """Anything else that broke the exchange: httpx2's timeouts and connection errors, or a
    body that could not be decoded (invalid JSON, the wrong shape)."""
    if isinstance(exc, httpx2.TimeoutException):
        return ProviderError(message=str(exc) or type(exc).__name__, kind="timeout")
    if isinstance(exc, (httpx2.NetworkError, httpx2.ProtocolError, httpx2.ProxyError)):
        return ProviderError(message=str(exc) or type(exc).__name__, kind="connection")
    name = type(exc).__name__
    return ProviderError(message=f"{name}: {exc}" if str(exc) else name, kind="decode")


class StreamAccumulator(Protocol):
    """Folds a wire's parsed stream events into a result, and knows whether the stream ended."""

    events: int
    """Events of this wire seen so far."""

    @property
    def terminal(self) -> bool:
        """Whether the wire's terminal event arrived (the only proof the stream is whole)."""
        ...

    def add(self, event: Any) -> None: ...

    def result(self, error: ProviderError | None = None) -> TurnResult: ...


async def read_stream(
    opened: Awaitable[Any],
    accumulator: StreamAccumulator,
    error_of: Callable[[BaseException], ProviderError],
    terminal: str,
) -> TurnResult:
    """Feed every event of a stream to `accumulator`, close the stream however it ends, and
    say what is wrong with a stream that ended early: no event of the wire at all (a `decode`
    error: the body is something else) or no terminal event `terminal` (`truncated`)."""
    stream = None
    try:
        stream = await opened
        async for event in stream:
            accumulator.add(event)
    except Exception as exc:
        return accumulator.result(error=error_of(exc))
    finally:
        if stream is not None:
            await _close_quietly(stream)
    if accumulator.events == 0:
        return accumulator.result(
            error=ProviderError(message="no event of the wire in the stream", kind="decode")
        )
    if not accumulator.terminal:
        return accumulator.result(
            error=ProviderError(
                message=f"the stream ended after {accumulator.events} event(s) without {terminal}",
                kind="truncated",
            )
        )
    return accumulator.result()


async def _close_quietly(stream: Any) -> None:
    """Release a stream's connection; a close that fails changes nothing about the result."""
    close = getattr(stream, "close", None) or getattr(stream, "aclose", None)
    if close is None:
        return
    with contextlib.suppress(Exception):
        outcome = close()
        if hasattr(outcome, "__await__"):
            await outcome


@dataclass
class PendingCall:
    """A tool call being folded from a stream: its id and name as they arrive, and its argument
    text in the pieces it came in."""

    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The argument text so far."""
        return "".join(self.arguments)

    def tool_call(self) -> ToolCall:
        """The call its pieces spell: arguments parsed from the text, or why they are not an
        object (`parse_arguments`)."""
        raw = self.text
        arguments, problem = parse_arguments(raw)
        return ToolCall(
            id=self.id, name=self.name, arguments=arguments, raw_arguments=raw, parse_error=problem
        )


class ReplyAccumulator:
    """What a reply of a chat-shaped wire is folded into (visible text and reasoning in pieces,
    its raw finish reason, usage, id and model), the events seen, and the `TurnResult` it spells
    (`reply`). A wire's accumulator subclasses it, reads its own events in `add` and says in
    `result` how its calls and finish reason read; a stream is whole once a finish reason came,
    unless the wire says otherwise (`terminal`)."""

    def __init__(self) -> None:
        self.events = 0
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.response_id: str | None = None
        self.model: str | None = None

    @property
    def terminal(self) -> bool:
        return self.finish is not None

    def reply(
        self,
        calls: list[ToolCall],
        finish_reason: FinishReason | None,
        error: ProviderError | None,
        **more: Any,
    ) -> TurnResult:
        """The result the pieces spell, with `calls` and `finish_reason` as the wire reads them
        and any field of its own (`more`: a refusal, what it keeps, the status)."""
        fields: dict[str, Any] = {
            "text": none_if_empty("".join(self.text)),
            "reasoning": none_if_empty("".join(self.reasoning)),
            "tool_calls": calls,
            "finish_reason": finish_reason,
            "raw_finish_reason": self.finish,
            "usage": self.usage,
            "response_id": self.response_id,
            "model": self.model,
            "error": error,
        }
        return TurnResult(**{**fields, **more})


class Codec(ABC):
    """The skeleton of a wire's codec: `send` for every wire, from the parts each fills in.

    A codec names its SDK's plain call (`call`), its streamed call (`open_stream`), the
    accumulator a stream is folded by (`accumulator`) and what ends a whole stream
    (`stream_end`); `decode` reads a plain reply, by default through the same accumulator as
    the events `whole_events` says it spells. The rest of the `Wire` protocol (encode, layout,
    errors, facts, render) is the codec's own."""

    stream_end: str
    """The event that ends a whole stream, as the `truncated` error names it."""
    reply_kind: str = "response"
    """What a plain reply of the wire is called, as the `decode` error names what it is not."""

    @abstractmethod
    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        """The SDK's plain call with `kwargs`: its parsed reply."""

    @abstractmethod
    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        """The SDK's streamed call with `kwargs`, not yet awaited (`read_stream` awaits it, so a
        call that fails to open is an error value): awaited, an async iterable of events."""

    @abstractmethod
    def accumulator(self) -> StreamAccumulator:
        """A new accumulator for one reply."""

    @abstractmethod
    def error_from_exception(self, exc: BaseException) -> ProviderError: ...

    async def send(self, client: Any, kwargs: JsonObject) -> TurnResult:
        """Call the provider (streamed when `kwargs["stream"]`) and decode; never raises for a
        provider failure."""
        if kwargs.get("stream"):
            return await read_stream(
                self.open_stream(client, kwargs),
                self.accumulator(),
                self.error_from_exception,
                self.stream_end,
            )
        try:
            response = await self.call(client, kwargs)
        except Exception as exc:
            return TurnResult(error=self.error_from_exception(exc), finish_reason="error")
        return self.decode(response)

    def decode(self, response: Any) -> TurnResult:
        """A plain reply, folded by the wire's accumulator as the events it spells; a reply that
        is not the wire's is a `decode` error."""
        events = self.whole_events(response)
        if events is None:
            return TurnResult(error=not_the_wire(self.reply_kind), finish_reason="error")
        accumulator = self.accumulator()
        for event in events:
            accumulator.add(event)
        return accumulator.result()

    def whole_events(self, response: Any) -> Iterable[Any] | None:
        """The stream events a plain reply spells, or None when it is not the wire's reply (a
        codec that decodes its plain reply otherwise overrides `decode`)."""
        return [response]


def not_the_wire(what: str) -> ProviderError:
    """A plain response the SDK could not turn into the wire's response object."""
    return ProviderError(message=f"not a {what}", kind="decode")


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
