"""Mistral La Plateforme chat (`POST /v1/chat/completions`) through the `mistralai` SDK: a wire
shipped with xpeval but written against `xpeval.plugin` only, as any plugin's would be.

The format (Mistral's OpenAPI specification, "Chat Completion"; docs/provider-schema-rules.md §14):
OpenAI-like messages and `tools` (`{"type": "function", "function": {...}}`), `tool_choice`
`auto`/`none`/`any`/`required` or a named function; a call's `arguments` a JSON string (the SDK
also accepts an object); a tool result carries `tool_call_id` and `name`. `content` can be a
string or a list of parts (`text`, and `thinking` parts holding `text` chunks). A stream is SSE
`data:` chunks ending with a choice's `finish_reason` (then `[DONE]`); a streamed call arrives
whole in one chunk. Call ids are nine letters and digits: an id made up for a call the
conversation carries without one is made in that form.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from xpeval.plugin import (
    AcceptanceMode,
    Adapter,
    AdapterSettings,
    AssistantMessage,
    BodyDescribedRequests,
    Codec,
    DialectSpec,
    DirectEntry,
    EffectiveContract,
    FinishReason,
    ForceTool,
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
    ToolCall,
    ToolLayout,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
    WirePlugin,
    async_http_client,
    error_fields,
    json_response,
    name_length,
    name_pattern,
    not_the_wire,
    parse_arguments,
    retry_after_header,
    retry_after_seconds,
    sent_in_stream,
    sse_frame,
    sse_response,
    text_pieces,
    transport_error,
    wire_call_ids,
)

WIRE = "mistral-chat"
DIALECT = "mistral"
_LAYOUT = ToolLayout(
    envelope=("function",), schema_field="parameters", strict=None, fixed=(("type", "function"),)
)
_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "tool_calls",
    "error": "error",
}
_MADE_UP = re.compile(r"call_\d+_(\d+|result)")
"""The ids `wire_call_ids` makes up for calls without one."""


def _call_id(value: str) -> str:
    """An id as Mistral takes it: the provider's own unchanged, a made-up one as nine letters and digits."""
    return hashlib.sha256(value.encode()).hexdigest()[:9] if _MADE_UP.fullmatch(value) else value


def _message(message: Any, index: int, ids: dict[tuple[int, int], str]) -> JsonObject:
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "content": message.content}
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "content": message.content,
            "name": message.name,
            "tool_call_id": _call_id(ids[(index, -1)]),
        }
    assert isinstance(message, AssistantMessage)
    out: JsonObject = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {
                "id": _call_id(ids[(index, c)]),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for c, call in enumerate(message.tool_calls)
        ]
    return out


def _tool_choice(request: TurnRequest, tools: PreparedTools) -> Any:
    if isinstance(request.tool_choice, ForceTool):
        return {"type": "function", "function": {"name": tools.wire_name(request.tool_choice.name)}}
    return "any" if request.tool_choice == "required" else request.tool_choice


def _plain(value: Any) -> Any:
    """An SDK model as the JSON it was parsed from (its aliases, no unset fields)."""
    dump = getattr(value, "model_dump", None)
    return dump(by_alias=True, mode="json", exclude_none=False) if callable(dump) else value


def _content(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a `content` that is a string or a list of parts."""
    if isinstance(content, str):
        return content, ""
    text: list[str] = []
    thinking: list[str] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            text.append(str(part.get("text") or ""))
        elif part.get("type") == "thinking":
            thinking.extend(
                str(c.get("text") or "") for c in part.get("thinking") or [] if isinstance(c, dict)
            )
    return "".join(text), "".join(thinking)


def _arguments(raw: Any) -> tuple[JsonObject, str | None, str | None]:
    """(arguments, raw text, parse error) of a call's `arguments`: a JSON string, or an object."""
    if isinstance(raw, dict):
        return raw, json.dumps(raw), None
    text = raw if isinstance(raw, str) else json.dumps(raw)
    arguments, error = parse_arguments(text)
    return arguments, text, error


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != "null" else None


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else usage.get("num_cached_tokens")
    return Usage(
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
        total_tokens=usage.get("total_tokens"),
        cache_read_tokens=cached if isinstance(cached, int) else None,
    )


def _finish(raw: str | None, has_calls: bool) -> FinishReason | None:
    if has_calls and raw in (None, "stop", "tool_calls"):
        return "tool_calls"
    return None if raw is None else _FINISH.get(raw, "other")


@dataclass
class _Pending(PendingCall):
    whole: JsonObject | None = None


class _Accumulator(ReplyAccumulator):
    """Folds `chat.completion.chunk`s into one result; whole once a choice has its finish reason."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[Any, _Pending] = {}

    def add(self, event: Any) -> None:
        chunk = _plain(getattr(event, "data", event))
        if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
            return
        self.events += 1
        self.response_id = chunk.get("id") or self.response_id
        self.model = chunk.get("model") or self.model
        self.usage = _usage(chunk.get("usage")) or self.usage
        for choice in chunk["choices"][:1]:
            delta = choice.get("delta") or {}
            text, reasoning = _content(delta.get("content"))
            self.text.append(text)
            self.reasoning.append(reasoning)
            for call in delta.get("tool_calls") or []:
                self._add_call(call)
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]

    def _add_call(self, call: JsonObject) -> None:
        # A piece with an id is a whole call of its own (Mistral sends each call whole, and may
        # put every one at index 0); its key is never an index nor an earlier call's key (a
        # count plus the piece's position in its delta was: two calls in one delta, then one
        # more, glued the third's arguments onto the second).
        index = call.get("index")
        key: Any = (
            index if isinstance(index, int) and _id(call.get("id")) is None else ("call", len(self.calls))
        )
        pending = self.calls.setdefault(key, _Pending())
        pending.id = pending.id or _id(call.get("id"))
        function = call.get("function") or {}
        pending.name = pending.name or str(function.get("name") or "")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            pending.whole = arguments
        elif isinstance(arguments, str):
            pending.arguments.append(arguments)

    def result(self, error: ProviderError | None = None) -> TurnResult:
        calls = []
        for pending in self.calls.values():
            raw: Any = pending.whole if pending.whole is not None else pending.text
            arguments, text, problem = _arguments(raw)
            calls.append(
                ToolCall(
                    id=pending.id,
                    name=pending.name,
                    arguments=arguments,
                    raw_arguments=text,
                    parse_error=problem,
                )
            )
        finish = (
            "error" if error is not None and error.kind == "stream" else _finish(self.finish, bool(calls))
        )
        return self.reply(calls, finish, error)


class MistralChat(BodyDescribedRequests, Codec):
    """The `mistral-chat` codec (the `Wire` protocol, on the `Codec` skeleton)."""

    name = WIRE
    request_paths: tuple[re.Pattern[str], ...] = (
        re.compile(r"api\.mistral\.ai(:\d+)?/v1/chat/completions/?([?#]|$)"),
    )
    """Mistral's host and path: its path alone is OpenAI Chat's, which the built-in wire serves."""
    stream_end = "a finish_reason"
    reply_kind = "Mistral chat completion"

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        ids = wire_call_ids(request.messages)
        kwargs: JsonObject = {
            "model": request.model,
            "messages": [_message(m, i, ids) for i, m in enumerate(request.messages)],
            "stream": request.stream,
        }
        if tools.sent:
            kwargs["tools"] = [_LAYOUT.definition(t.name, t.description, t.parameters) for t in tools.sent]
            kwargs["tool_choice"] = _tool_choice(request, tools)
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
        from mistralai.client import models

        try:
            request_type = (
                models.ChatCompletionStreamRequest if kwargs.get("stream") else models.ChatCompletionRequest
            )
            request_type.model_validate(kwargs)
        except Exception as exc:  # pydantic's ValidationError: the SDK's own request type refuses it
            raise ValueError(str(exc)) from exc

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.chat.complete_async(**_sdk_arguments(kwargs))

    def open_stream(self, client: Any, kwargs: JsonObject) -> Any:
        return client.chat.stream_async(**_sdk_arguments(kwargs))

    def accumulator(self) -> _Accumulator:
        return _Accumulator()

    def whole_events(self, response: Any) -> list[Any] | None:
        """A completion as the one chunk it would stream: its message as the choice's delta."""
        body = _plain(response)
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list) or not body["choices"]:
            return None
        message = body["choices"][0].get("message") or {}
        return [{**body, "choices": [{**body["choices"][0], "delta": message}]}]

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        from mistralai.client import errors

        if isinstance(exc, errors.ResponseValidationError):
            # An error object where the stream's next chunk should be: the provider's in-stream error.
            frame = _error_frame(exc.__cause__) if exc.__cause__ is not None else None
            if frame is not None:
                return frame
            return ProviderError(
                status=exc.status_code,
                message=f"response does not validate: {_validation_problems(exc.__cause__)}",
                kind="decode",
            )
        if isinstance(exc, errors.MistralError):
            if 200 <= exc.status_code < 300:
                # The SDK raises its HTTP error for a 2xx body of another content type (an HTML
                # page): not the wire's answer, never the provider's error.
                return not_the_wire("Mistral chat completion").model_copy(update={"status": exc.status_code})
            etype, message = error_fields(exc.body)
            return ProviderError(
                status=exc.status_code,
                type=etype,
                message=message or f"status {exc.status_code}, empty body",
                retry_after=retry_after_seconds(dict(exc.headers)),
                kind="http",
            )
        if isinstance(exc, errors.NoResponseError):
            return ProviderError(message=str(exc), kind="connection")
        return transport_error(exc)

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        if result.error is not None:
            error = result.error
            body = {
                "object": "error",
                "message": error.message,
                "type": error.type,
                "param": None,
                "code": None,
            }
            if sent_in_stream(error, stream=stream):
                return sse_response([sse_frame(body)])
            return json_response(error.status or 500, body, retry_after_header(error))
        if not stream:
            return json_response(200, _completion(result, model))
        return sse_response([sse_frame(chunk) for chunk in _chunks(result, model)] + [sse_frame("[DONE]")])

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": False}


def _sdk_arguments(kwargs: JsonObject) -> JsonObject:
    """The encoded arguments as the SDK's calls take them: whether to stream is the call's name."""
    return {k: v for k, v in kwargs.items() if k != "stream"}


def _validation_problems(cause: BaseException | None) -> str:
    """Where a response failed the SDK's types and why, without the values: pydantic's own
    message shortens each value it shows, cutting a secret echoed inside one before anything
    could scrub it."""
    errors_of = getattr(cause, "errors", None)
    try:
        found = errors_of(include_input=False, include_url=False) if callable(errors_of) else None
    except Exception:  # not pydantic's ValidationError after all
        found = None
    if not isinstance(found, list) or not found:
        return type(cause).__name__ if cause is not None else "unknown problem"
    problems = [
        f"{'.'.join(str(part) for part in error.get('loc', ()))}: {error.get('msg')}"
        for error in found
        if isinstance(error, dict)
    ]
    return f"{len(problems)} problem(s): " + "; ".join(problems)


def _error_frame(exc: BaseException) -> ProviderError | None:
    """The error object the SDK failed to parse as a stream chunk (`exc`: pydantic's
    ValidationError, whose errors carry the input), as an in-stream error; None otherwise."""
    errors_of = getattr(exc, "errors", None)
    if not callable(errors_of):
        return None
    try:
        found = errors_of()
    except Exception:  # not pydantic's ValidationError after all
        return None
    for item in found if isinstance(found, list) else []:
        value = item.get("input") if isinstance(item, dict) else None
        frame = value.get("data", value) if isinstance(value, dict) else None
        if isinstance(frame, dict) and frame.get("object") == "error":
            return ProviderError(
                status=_frame_status(frame),
                type=frame.get("type"),
                message=str(frame.get("message") or "error"),
                kind="stream",
            )
    return None


_STATUS_OF_TYPE = {"rate_limited": 429, "service_unavailable": 503, "service_tier_capacity_exceeded": 503}
"""The statuses Mistral's error types stand for where a frame does not say (adapters/wires/RULES.md)."""


def _frame_status(frame: JsonObject) -> int | None:
    """The HTTP status an in-stream error object stands for: its `raw_status_code`, else its
    type's; so a throttled or unavailable stream is retried as the same error over HTTP is."""
    raw = frame.get("raw_status_code")
    if isinstance(raw, int) and not isinstance(raw, bool) and 100 <= raw <= 599:
        return raw
    kind = frame.get("type")
    return _STATUS_OF_TYPE.get(kind) if isinstance(kind, str) else None


def _calls(result: TurnResult) -> list[JsonObject]:
    return [
        {
            "id": call.id or "null",
            "type": "function",
            "function": {"name": call.name, "arguments": call.raw_arguments or json.dumps(call.arguments)},
            "index": index,
        }
        for index, call in enumerate(result.tool_calls)
    ]


def _usage_body(result: TurnResult) -> JsonObject:
    usage = result.usage or Usage()
    return {
        "prompt_tokens": usage.input_tokens or 0,
        "completion_tokens": usage.output_tokens or 0,
        "total_tokens": usage.total_tokens or 0,
    }


def _raw_finish(result: TurnResult) -> str:
    if result.tool_calls:
        return "tool_calls"
    return {"length": "length", "error": "error"}.get(result.finish_reason or "", "stop")


def _completion(result: TurnResult, model: str) -> JsonObject:
    message: JsonObject = {
        "role": "assistant",
        "content": result.text or "",
        "tool_calls": _calls(result) or None,
    }
    if result.reasoning:
        thinking = {"type": "thinking", "thinking": [{"type": "text", "text": result.reasoning}]}
        message["content"] = [thinking, {"type": "text", "text": result.text or ""}]
    return {
        "id": result.response_id or "cmpl-emulated",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _raw_finish(result)}],
        "usage": _usage_body(result),
    }


def _chunks(result: TurnResult, model: str) -> list[JsonObject]:
    head = {
        "id": result.response_id or "cmpl-emulated",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": model,
    }

    def chunk(delta: JsonObject, finish: str | None = None, **extra: Any) -> JsonObject:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks.extend(chunk({"content": piece}) for piece in text_pieces(result.text or "") if piece)
    if result.tool_calls:
        chunks.append(chunk({"tool_calls": _calls(result)}))
    chunks.append(chunk({"content": ""}, _raw_finish(result), usage=_usage_body(result)))
    return chunks


NAMES = Rule(
    "mistral.name-pattern",
    "Function names are a-z, A-Z, 0-9, underscores and dashes, at most 64 characters.",
    "[err] github.com/Kochava-Studios/witsy/pull/164 (2025-04, through LiteLLM); "
    "docs/provider-schema-rules.md §14",
)
NAME_LENGTH = Rule(
    "mistral.name-length",
    "Function names have at most 64 characters.",
    "[err] github.com/Kochava-Studios/witsy/pull/164 (2025-04); docs/provider-schema-rules.md §14",
)

MISTRAL_WIRE = WirePlugin(
    codec=MistralChat(),
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
                name_checks=(name_pattern(NAMES, r"[a-zA-Z0-9_-]{1,64}"), name_length(NAME_LENGTH, 64)),
                tool_checks=(),
                node_checks=(),
            ),
        ),
    ),
)

MISTRAL_LOGGERS = ("mistralai.client", "mistralai.client.conversations")
"""The mistralai SDK's loggers: with MISTRAL_DEBUG set, `mistralai.client` logs every request
(its headers and body) and response."""

MISTRAL_PROVIDER = Provider(
    name="mistral",
    default_model="mistral-small-latest",
    key_vars=("MISTRAL_API_KEY",),
    base_url_var="MISTRAL_BASE_URL",
    default_base_url="https://api.mistral.ai",
    secret_response_headers=("mistral-correlation-id", "x-kong-request-id"),
    sdk_loggers=MISTRAL_LOGGERS,
    price_provider="mistral",
)


class _NoSyncClient:
    """mistralai's synchronous client (it builds one when given none, loading the CA bundle: about
    30 ms of CPU an adapter, one per cassette in `cassettes check`). xpeval calls the SDK's async
    methods only, so a synchronous request is refused here, never sent past the cassettes."""

    def send(self, request: Any, **_: Any) -> Any:
        raise RuntimeError(f"xpeval sends asynchronously only: a synchronous {request.method} was refused")

    def build_request(self, method: str, url: Any, **_: Any) -> Any:
        raise RuntimeError(f"xpeval sends asynchronously only: a synchronous {method} was refused")

    def close(self) -> None:
        """Nothing to close."""


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    """The adapter: the `mistralai` SDK over xpeval's HTTP client (its transport: cassettes, the
    emulator, fault injection), SDK retries off (the runner owns retries)."""
    from mistralai.client import Mistral

    client = Mistral(
        api_key=provider.api_key(settings.secret_key()),
        server_url=provider.base_url(settings.base_url) or "https://api.mistral.ai",
        async_client=async_http_client(settings),
        client=_NoSyncClient(),
        timeout_ms=int(settings.timeout * 1000),
    )
    if settings.headers:
        client.sdk_configuration.async_client.headers.update(settings.headers)  # type: ignore[union-attr]
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)


MISTRAL = DirectEntry(
    wire=WIRE,
    schema_dialect=DIALECT,
    provider=MISTRAL_PROVIDER,
    factory=create,
    description="Mistral La Plateforme chat (mistralai SDK)",
)
