"""Cohere v2 chat (`POST /v2/chat`) through the `cohere` SDK: a wire shipped with xpeval but
written against `xpeval.plugin` only, as any plugin's would be.

The format (Cohere's API reference, "Chat" v2; docs/provider-schema-rules.md §15): messages
`system`/`user`/`assistant`/`tool`, an assistant's calls as `tool_calls` (`arguments` a JSON
string) beside its `tool_plan`, a result as `{"role": "tool", "tool_call_id", "content"}`; tools
as `{"type": "function", "function": {...}}`; `tool_choice` only `REQUIRED` or `NONE` (absent:
auto; no named tool). A plain answer's `message.content` is a list of parts (`text`,
`thinking`); `finish_reason` is upper case (`COMPLETE`, `TOOL_CALL`, `MAX_TOKENS`,
`STOP_SEQUENCE`, `ERROR`). A stream is SSE with `event:` lines: `message-start`,
`content-start`/`-delta`/`-end`, `tool-plan-delta`, `tool-call-start`/`-delta`/`-end`,
`citation-*`, and `message-end` (its `delta.finish_reason`, `usage`, and on `ERROR` the
`error`/`error_type`), then `data: [DONE]`.

The SDK sends through `httpx`, not httpx2: the adapter bridges its requests onto xpeval's
transport (`http_transport`: cassettes, the emulator, fault injection), so they are recorded and
replayed like every other wire's.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import httpx
import httpx2

from xpeval.plugin import (
    AcceptanceMode,
    Adapter,
    AdapterSettings,
    AssistantMessage,
    BodyDescribedRequests,
    Capabilities,
    Codec,
    DialectSpec,
    DirectEntry,
    EffectiveContract,
    FinishReason,
    JsonObject,
    NameRule,
    OpenAISchemaRules,
    PendingCall,
    PreparedTools,
    Profile,
    Provider,
    ProviderError,
    RenderedResponse,
    ReplyAccumulator,
    Rule,
    SystemMessage,
    ToolLayout,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
    WirePlugin,
    http_transport,
    json_response,
    meta_schema,
    not_the_wire,
    retry_after_header,
    retry_after_seconds,
    sent_in_stream,
    sse_frame,
    sse_response,
    text_pieces,
    transport_error,
    wire_call_ids,
)

WIRE = "cohere-chat"
DIALECT = "cohere"
_LAYOUT = ToolLayout(
    envelope=("function",), schema_field="parameters", strict=None, fixed=(("type", "function"),)
)
_FINISH: dict[str, FinishReason] = {
    "COMPLETE": "stop",
    "STOP_SEQUENCE": "stop",
    "MAX_TOKENS": "length",
    "TOOL_CALL": "tool_calls",
    "ERROR": "error",
    "TIMEOUT": "error",
}
_NO_RETRIES = {"max_retries": 0}
"""The SDK retries 429s and 5xx itself by default; the runner owns retries (one request each)."""
_RAW_FINISH = {"stop": "COMPLETE", "length": "MAX_TOKENS", "tool_calls": "TOOL_CALL", "error": "ERROR"}


def _message(message: Any, index: int, ids: dict[tuple[int, int], str]) -> JsonObject:
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "content": message.content}
    if isinstance(message, ToolResultMessage):
        return {"role": "tool", "tool_call_id": ids[(index, -1)], "content": message.content}
    assert isinstance(message, AssistantMessage)
    out: JsonObject = {"role": "assistant"}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": ids[(index, c)],
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for c, call in enumerate(message.tool_calls)
        ]
    if message.content:
        out["content"] = message.content
    return out


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None) or getattr(value, "dict", None)
    return dump(by_alias=True, exclude_none=True) if callable(dump) else value


def _parts(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a `content` list, or of one part (a stream's `content-delta` part
    carries no `type`: its member says which it is), or a string."""
    if isinstance(content, str):
        return content, ""
    parts = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    text: list[str] = []
    thinking: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type") or ("thinking" if "thinking" in part else "text")
        if kind == "text":
            text.append(str(part.get("text") or ""))
        elif kind == "thinking":
            thinking.append(str(part.get("thinking") or ""))
    return "".join(text), "".join(thinking)


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict) or not usage:
        return None
    tokens = usage.get("tokens") or usage.get("billed_units") or {}
    prompt, output = tokens.get("input_tokens"), tokens.get("output_tokens")
    cached = usage.get("cached_tokens")
    total = None if prompt is None or output is None else int(prompt) + int(output)
    return Usage(
        input_tokens=None if prompt is None else int(prompt),
        output_tokens=None if output is None else int(output),
        total_tokens=total,
        cache_read_tokens=int(cached) if isinstance(cached, int | float) else None,
    )


def _finish(raw: str | None, has_calls: bool) -> FinishReason | None:
    if raw is None:
        return None
    if has_calls and raw in ("COMPLETE", "TOOL_CALL"):
        return "tool_calls"
    return _FINISH.get(raw, "other")


class _Accumulator(ReplyAccumulator):
    """Folds the v2 stream's events into one result; whole once `message-end` arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.plan: list[str] = []
        self.calls: dict[int, PendingCall] = {}
        self.ended = False
        self.failure: ProviderError | None = None

    @property
    def terminal(self) -> bool:
        return self.ended

    def add(self, event: Any) -> None:
        data = _plain(event)
        kind = data.get("type") if isinstance(data, dict) else None
        if not isinstance(kind, str):
            return
        self.events += 1
        message = ((data.get("delta") or {}).get("message")) or {}
        if kind == "message-start":
            self.response_id = data.get("id")
        elif kind in ("content-start", "content-delta"):
            text, thinking = _parts(message.get("content"))
            self.text.append(text)
            self.reasoning.append(thinking)
        elif kind == "tool-plan-delta":
            self.plan.append(str(message.get("tool_plan") or ""))
        elif kind in ("tool-call-start", "tool-call-delta"):
            self._call(data.get("index"), message.get("tool_calls") or {})
        elif kind == "message-end":
            self._end(data.get("delta") or {})

    def _call(self, index: Any, call: Any) -> None:
        if not isinstance(call, dict):
            return
        pending = self.calls.setdefault(index if isinstance(index, int) else len(self.calls), PendingCall())
        pending.id = pending.id or call.get("id") or None
        function = call.get("function") or {}
        pending.name = pending.name or str(function.get("name") or "")
        pending.arguments.append(str(function.get("arguments") or ""))

    def _end(self, delta: JsonObject) -> None:
        self.ended = True
        self.finish = delta.get("finish_reason")
        self.usage = _usage(delta.get("usage"))
        if self.finish == "ERROR" or delta.get("error"):
            message = str(delta.get("error") or "the stream ended with finish_reason ERROR")
            self.failure = ProviderError(type=delta.get("error_type"), message=message, kind="stream")

    def result(self, error: ProviderError | None = None) -> TurnResult:
        error = error or self.failure
        calls = [pending.tool_call() for pending in self.calls.values()]
        finish = (
            "error" if error is not None and error.kind == "stream" else _finish(self.finish, bool(calls))
        )
        plan = "".join(self.plan)
        return self.reply(calls, finish, error, provider_data={WIRE: {"tool_plan": plan}} if plan else {})


class UnreadableEvent(Exception):
    """A v2 stream event this wire cannot read: its data is not a JSON object with a `type`."""


@functools.cache
def _event_types() -> frozenset[str]:
    """The v2 stream's event types, as the SDK's `V2ChatStreamResponse` union names them."""
    import typing

    from cohere import V2ChatStreamResponse

    union = typing.get_args(V2ChatStreamResponse)[0]  # Annotated[Union[...], UnionMetadata]
    return frozenset(
        str(value)
        for member in typing.get_args(union)
        for value in typing.get_args(member.model_fields["type"].annotation)
    )


def _stream_event(data: str, number: int) -> JsonObject:
    """One SSE event's data as the wire's event: a JSON object whose `type` is one the v2
    stream has (the SDK's reader would skip any other, or pass it on unread)."""
    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        event = None
    if not isinstance(event, dict) or event.get("type") not in _event_types():
        raise UnreadableEvent(
            f"stream event {number} is not a Cohere v2 chat event"
            " (its data is not a JSON object with a type the stream has)"
        )
    return event


async def _stream_events(client: Any, arguments: JsonObject) -> AsyncIterator[JsonObject]:
    """The v2 stream's events, read from the SDK's raw response with its own SSE reader: the
    SDK's event reader logs and skips an event it cannot decode (the stream would read as whole
    without it), so an event is decoded here, and one that does not decode ends the stream."""
    from cohere.core.http_sse import EventSource

    async with client.with_raw_response.chat_stream(**arguments) as raw:
        number = 0
        async for sse in EventSource(raw.response).aiter_sse():
            if sse.data == "[DONE]":
                return
            if sse.data:
                number += 1
                yield _stream_event(sse.data, number)


async def _opened(stream: Any) -> Any:
    """A stream (an async generator) as the awaitable `read_stream` opens."""
    return stream


class CohereChat(BodyDescribedRequests, Codec):
    """The `cohere-chat` codec (the `Wire` protocol, on the `Codec` skeleton)."""

    name = WIRE
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/v2/chat/?([?#]|$)"),)
    stream_end = "message-end"
    reply_kind = "Cohere v2 chat response"

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        ids = wire_call_ids(request.messages)
        kwargs: JsonObject = {
            "model": request.model,
            "messages": [_message(m, i, ids) for i, m in enumerate(request.messages)],
            "stream": request.stream,
        }
        if tools.sent:
            kwargs["tools"] = [_LAYOUT.definition(t.name, t.description, t.parameters) for t in tools.sent]
            if request.tool_choice in ("required", "none"):
                kwargs["tool_choice"] = str(request.tool_choice).upper()
        if request.max_output_tokens is not None:
            kwargs["max_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        return kwargs

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        return _LAYOUT

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        tools = kwargs.get("tools")
        return [dict(t) for t in tools] if isinstance(tools, list) else []

    def validate_encoded(self, kwargs: JsonObject) -> None:
        import pydantic
        from cohere import ChatMessageV2, ToolV2

        if not isinstance(kwargs.get("model"), str):
            raise ValueError("a Cohere chat request names its model")
        try:
            pydantic.TypeAdapter(list[ChatMessageV2]).validate_python(kwargs.get("messages"))
            pydantic.TypeAdapter(list[ToolV2]).validate_python(kwargs.get("tools", []))
        except pydantic.ValidationError as exc:
            raise ValueError(str(exc)) from exc
        if kwargs.get("tool_choice") not in (None, "REQUIRED", "NONE"):
            raise ValueError(f"tool_choice is REQUIRED or NONE, not {kwargs['tool_choice']!r}")

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.chat(**_sdk_arguments(kwargs))

    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        opened: Awaitable[Any] = _opened(_stream_events(client, _sdk_arguments(kwargs)))
        return opened

    def accumulator(self) -> _Accumulator:
        return _Accumulator()

    def whole_events(self, response: Any) -> list[JsonObject] | None:
        """A v2 chat response as the events its stream would send."""
        body = _plain(response)
        if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
            return None
        message = body["message"]
        return [
            {"type": "message-start", "id": body.get("id")},
            {"type": "content-delta", "delta": {"message": {"content": message.get("content")}}},
            {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": message.get("tool_plan")}}},
            *(
                {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}}
                for index, call in enumerate(message.get("tool_calls") or [])
            ),
            {
                "type": "message-end",
                "delta": {"finish_reason": body.get("finish_reason"), "usage": body.get("usage")},
            },
        ]

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        from cohere.core.api_error import ApiError

        if isinstance(exc, UnreadableEvent):
            return ProviderError(message=str(exc), kind="decode")
        if isinstance(exc, ApiError):
            if exc.status_code is not None and 200 <= exc.status_code < 300:
                # The SDK raises its HTTP error for a 2xx body it cannot parse (HTML, empty,
                # invalid JSON): not the wire's answer, never the provider's error.
                return not_the_wire("Cohere v2 chat response").model_copy(update={"status": exc.status_code})
            body = exc.body if isinstance(exc.body, dict) else {}
            return ProviderError(
                status=exc.status_code,
                type=body.get("type") if isinstance(body.get("type"), str) else None,
                message=_error_message(exc.status_code, exc.body),
                retry_after=retry_after_seconds(exc.headers),
                kind="http",
            )
        return transport_error(exc)

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        if result.error is not None and not sent_in_stream(result.error, stream=stream):
            error = result.error
            return json_response(
                error.status or 500, {"id": "emulated", "message": error.message}, retry_after_header(error)
            )
        if not stream:
            return json_response(200, _response(result))
        return sse_response(
            [sse_frame(event, event["type"]) for event in _events(result)] + [sse_frame("[DONE]")]
        )

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": False}


def _sdk_arguments(kwargs: JsonObject) -> JsonObject:
    """The encoded arguments as the SDK's calls take them: whether to stream is the call's name,
    and the SDK never retries (`_NO_RETRIES`)."""
    return {**{k: v for k, v in kwargs.items() if k != "stream"}, "request_options": _NO_RETRIES}


def _error_message(status: int | None, body: Any) -> str:
    """An HTTP error's message from its status and body only: `str(ApiError)` lists every
    response header (`set-cookie` with them), which no row may keep."""
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return str(body["message"])
    if isinstance(body, (dict, list)):
        return json.dumps(body, ensure_ascii=False, default=str)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    text = str(body).strip() if body is not None else ""
    return text or f"status {status}, empty body"


def _raw_calls(result: TurnResult) -> list[JsonObject]:
    return [
        {
            "id": call.id or f"{call.name}_{index}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments)},
        }
        for index, call in enumerate(result.tool_calls)
    ]


def _usage_body(result: TurnResult) -> JsonObject:
    usage = result.usage or Usage()
    tokens = {"input_tokens": usage.input_tokens or 0, "output_tokens": usage.output_tokens or 0}
    return {"billed_units": tokens, "tokens": tokens}


def _raw_finish(result: TurnResult) -> str:
    if result.error is not None:
        return "ERROR"
    return "TOOL_CALL" if result.tool_calls else _RAW_FINISH.get(result.finish_reason or "", "COMPLETE")


def _response(result: TurnResult) -> JsonObject:
    message: JsonObject = {"role": "assistant"}
    content = [{"type": "thinking", "thinking": result.reasoning}] if result.reasoning else []
    if result.text:
        content.append({"type": "text", "text": result.text})
    if content:
        message["content"] = content
    plan = (result.provider_data.get(WIRE) or {}).get("tool_plan")
    if result.tool_calls:
        message["tool_plan"] = plan or ""
        message["tool_calls"] = _raw_calls(result)
    return {
        "id": result.response_id or "emulated",
        "message": message,
        "finish_reason": _raw_finish(result),
        "usage": _usage_body(result),
    }


def _events(result: TurnResult) -> list[JsonObject]:
    def event(kind: str, message: JsonObject | None = None, **extra: Any) -> JsonObject:
        return {"type": kind, **extra, **({"delta": {"message": message}} if message is not None else {})}

    start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events = [event("message-start", start, id=result.response_id or "emulated")]
    if result.text:
        events.append(event("content-start", {"content": {"type": "text", "text": ""}}, index=0))
        events.extend(
            event("content-delta", {"content": {"text": p}}, index=0) for p in text_pieces(result.text)
        )
        events.append(event("content-end", index=0))
    for index, call in enumerate(_raw_calls(result)):
        head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        events.append(event("tool-call-start", {"tool_calls": head}, index=index))
        for piece in text_pieces(call["function"]["arguments"]):
            events.append(
                event("tool-call-delta", {"tool_calls": {"function": {"arguments": piece}}}, index=index)
            )
        events.append(event("tool-call-end", index=index))
    end: JsonObject = {"finish_reason": _raw_finish(result), "usage": _usage_body(result)}
    if result.error is not None:
        end.update(usage={}, error=result.error.message, error_type=result.error.type)
    events.append({"type": "message-end", "delta": end})
    return events


class _HttpxBridge(httpx.AsyncBaseTransport):
    """An `httpx` transport that sends through an httpx2 one (xpeval's), the body streamed back."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = await request.aread()
        forwarded = httpx2.Request(
            request.method,
            str(request.url),
            headers=list(request.headers.multi_items()),
            content=content,
            extensions=_timeout_of(request),
        )
        response = await self.inner.handle_async_request(forwarded)
        if response.is_stream_consumed:  # a response served whole (a recording): its content, decoded
            headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
            return httpx.Response(
                response.status_code, headers=headers, content=response.content, request=request
            )
        return httpx.Response(
            response.status_code,
            headers=list(response.headers.multi_items()),
            stream=_BridgedBody(response),
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


def _timeout_of(request: httpx.Request) -> dict[str, Any]:
    """The request's timeouts as the transport below reads them: httpx carries them in the
    request's `timeout` extension (the client's, or the SDK's per-request one), and a request
    forwarded without it waits for ever on a server that stalls."""
    timeout = request.extensions.get("timeout")
    return {"timeout": dict(timeout)} if isinstance(timeout, dict) else {}


class _BridgedBody(httpx.AsyncByteStream):
    """An httpx2 response's body as an `httpx.AsyncByteStream`."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.response.aiter_raw():
            yield chunk

    async def aclose(self) -> None:
        await self.response.aclose()


SCHEMA = Rule(
    "cohere.json-schema",
    "parameters is a JSON Schema (the API reads it as JSON Schema type notation).",
    "[doc] docs.cohere.com/v2/docs/parameter-types-in-tool-use; the cohere SDK's ToolV2Function.parameters "
    '("the parameters of the function as a JSON schema"); docs/provider-schema-rules.md §15',
)

COHERE_WIRE = WirePlugin(
    codec=CohereChat(),
    dialects=(
        DialectSpec(
            name=DIALECT,
            rules=OpenAISchemaRules(),
            tool_names=NameRule(
                re.compile(r"[a-zA-Z0-9_-]{1,64}"),
                re.compile(r"[^a-zA-Z0-9_-]"),
                re.compile(r"[a-zA-Z0-9_-]"),
                64,
                "^[a-zA-Z0-9_-]{1,64}$",
            ),
        ),
    ),
    acceptance=(
        AcceptanceMode(
            name=WIRE,
            dialect=DIALECT,
            profile=Profile(
                name_checks=(), tool_checks=(meta_schema(SCHEMA, follow_dollar_schema=False),), node_checks=()
            ),
        ),
    ),
)

COHERE_LOGGERS = (
    "root",
    "cohere.client",
    "cohere.core.pydantic_utilities",
    "cohere.manually_maintained.tokenizers",
    "fern",
)
"""The cohere SDK's loggers, each listed (a log filter is not inherited): its v2 stream reader
logs a frame it skips on the root logger (`from logging import warning`: the whole frame,
anything the provider echoed in it), `pydantic_utilities` logs a frame's first 100 characters,
`fern` is its own console logger (URLs, statuses)."""

COHERE_PROVIDER = Provider(
    name="cohere",
    default_model="command-a-03-2025",
    key_vars=("CO_API_KEY", "COHERE_API_KEY"),
    base_url_var="CO_API_URL",
    default_base_url="https://api.cohere.com",
    sdk_loggers=COHERE_LOGGERS,
    price_provider="cohere",
)


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    """The adapter: the `cohere` SDK's v2 client over xpeval's transport, bridged from httpx."""
    import cohere

    client = cohere.AsyncClientV2(
        api_key=provider.api_key(settings.secret_key()),
        base_url=provider.base_url(settings.base_url) or "https://api.cohere.com",
        httpx_client=httpx.AsyncClient(
            transport=_HttpxBridge(http_transport(settings)),
            timeout=settings.timeout,
            headers=settings.headers,
        ),
        timeout=settings.timeout,
    )
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)


COHERE = DirectEntry(
    wire=WIRE,
    schema_dialect=DIALECT,
    provider=COHERE_PROVIDER,
    factory=create,
    description="Cohere v2 chat (cohere SDK)",
    capabilities=Capabilities(tool_choice=frozenset({"auto", "none", "required"})),
)
