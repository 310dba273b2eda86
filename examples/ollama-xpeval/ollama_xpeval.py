"""Ollama's native chat API (`POST /api/chat`) for xpeval: a wire plugin, written against
`xpeval.plugin` only (docs/plugin-api.md).

It registers two things (entry points in this package's pyproject.toml):

- the `ollama-chat` wire (`xpeval.wires`): its codec, the `ollama` schema dialect and the
  acceptance rules xpeval's schema checker judges its requests by;
- the `ollama` adapter (`xpeval.adapters`): a `DirectEntry` naming that wire.

The format (Ollama's docs/api.md, "Generate a chat completion"): a JSON body with `model`,
`messages`, `tools` (OpenAI-style function definitions), `stream` (true when absent) and
`options`; a plain answer is one JSON object, a stream is NDJSON, one object per line, the last
with `"done": true` and its `done_reason`. Tool calls arrive whole, their `arguments` a JSON
object; `done_reason` stays `stop` on a tool-call turn. An error is `{"error": "..."}`, with the
HTTP status or as a line of a 200 stream. No SDK: the codec speaks HTTP through the client
xpeval builds (`async_http_client`), so cassettes, the emulator and fault injection reach it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from xpeval.plugin import (
    PLUGIN_API_VERSION,
    AcceptanceMode,
    Adapter,
    AdapterSettings,
    AssistantMessage,
    Capabilities,
    DialectSpec,
    DirectEntry,
    EffectiveContract,
    JsonObject,
    NameRule,
    OpenAISchemaRules,
    PreparedTools,
    Profile,
    Provider,
    ProviderError,
    RenderedResponse,
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
    json_response,
    meta_schema,
    name_pattern,
    none_if_empty,
    not_the_wire,
    read_stream,
    retry_after_seconds,
    root_type_object,
    text_pieces,
    transport_error,
    wire_call_ids,
)

if PLUGIN_API_VERSION[0] != 1:
    raise ImportError(f"ollama-xpeval needs xpeval's plugin API 1.x, not {PLUGIN_API_VERSION}")

WIRE = "ollama-chat"
PATH = "/api/chat"
_LAYOUT = ToolLayout(
    envelope=("function",), schema_field="parameters", strict=None, fixed=(("type", "function"),)
)


class OllamaError(Exception):
    """A non-2xx answer, or an `{"error"}` line inside a 200 stream."""

    def __init__(self, status: int | None, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def _message(message: Any, index: int, ids: dict[tuple[int, int], str]) -> JsonObject:
    """One message as Ollama takes it; calls and results carry the ids that link them (the
    provider's own, or made up on the way out: `wire_call_ids`)."""
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "content": message.content}
    if isinstance(message, ToolResultMessage):
        return {
            "role": "tool",
            "content": message.content,
            "tool_name": message.name,
            "tool_call_id": ids[(index, -1)],
        }
    assert isinstance(message, AssistantMessage)
    out: JsonObject = {"role": "assistant", "content": message.content or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": ids[(index, c)], "function": {"name": call.name, "arguments": call.arguments}}
            for c, call in enumerate(message.tool_calls)
        ]
    return out


def _finish(raw: str | None, has_calls: bool) -> Any:
    if has_calls:
        return "tool_calls"
    return {"stop": "stop", "length": "length", None: None}.get(raw, "other")


def _calls(message: Any) -> list[ToolCall]:
    calls = []
    for item in message.get("tool_calls") or []:
        function = item.get("function") or {}
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            calls.append(ToolCall(id=item.get("id"), name=str(function.get("name", "")), arguments=arguments))
        else:  # an object is what Ollama sends; anything else is kept as text, with why
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            calls.append(
                ToolCall(
                    id=item.get("id"),
                    name=str(function.get("name", "")),
                    raw_arguments=raw,
                    parse_error="arguments are not a JSON object",
                )
            )
    return calls


def _usage(body: JsonObject) -> Usage | None:
    prompt, output = body.get("prompt_eval_count"), body.get("eval_count")
    if prompt is None and output is None:
        return None
    total = (prompt or 0) + (output or 0)
    return Usage(input_tokens=prompt, output_tokens=output, total_tokens=total)


class _Accumulator:
    """Folds NDJSON lines into one result; whole only once a line says `"done": true`."""

    def __init__(self) -> None:
        self.events = 0
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[ToolCall] = []
        self.last: JsonObject = {}
        self.done = False

    @property
    def terminal(self) -> bool:
        return self.done

    def add(self, event: Any) -> None:
        if not isinstance(event, dict) or ("message" not in event and "done" not in event):
            return
        self.events += 1
        message = event.get("message") or {}
        self.text.append(message.get("content") or "")
        self.reasoning.append(message.get("thinking") or "")
        self.calls.extend(_calls(message))
        if event.get("done"):
            self.done = True
            self.last = event

    def result(self, error: ProviderError | None = None) -> TurnResult:
        raw = self.last.get("done_reason") if self.done else None
        finish = _finish(raw, bool(self.calls)) if self.done else None
        if error is not None and error.kind == "stream":
            finish = "error"
        return TurnResult(
            text=none_if_empty("".join(self.text)),
            reasoning=none_if_empty("".join(self.reasoning)),
            tool_calls=list(self.calls),
            finish_reason=finish,
            raw_finish_reason=raw,
            usage=_usage(self.last),
            model=self.last.get("model"),
            error=error,
        )


class _Lines:
    """The NDJSON lines of a streamed answer, as parsed objects (closed by `read_stream`)."""

    def __init__(self, response: Any) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for line in self.response.aiter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            if isinstance(event, dict) and "error" in event:
                raise OllamaError(None, str(event["error"]))
            yield event

    async def aclose(self) -> None:
        await self.response.aclose()


class OllamaChat:
    """The `ollama-chat` codec: everything xpeval asks of a wire (the `Wire` protocol)."""

    name = WIRE
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/api/chat(?:$|\?)"),)

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        ids = wire_call_ids(request.messages)
        kwargs: JsonObject = {
            "model": request.model,
            "messages": [_message(m, i, ids) for i, m in enumerate(request.messages)],
            "stream": request.stream,
        }
        if tools.sent:  # Ollama has no tool_choice: the adapter declares "auto" only
            kwargs["tools"] = [_LAYOUT.definition(t.name, t.description, t.parameters) for t in tools.sent]
        options: JsonObject = {}
        if request.temperature is not None:
            options["temperature"] = request.temperature
        if request.max_output_tokens is not None:
            options["num_predict"] = request.max_output_tokens
        if options:
            kwargs["options"] = options
        return kwargs

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        return _LAYOUT

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        tools = kwargs.get("tools")
        return [dict(t) for t in tools] if isinstance(tools, list) else []

    def validate_encoded(self, kwargs: JsonObject) -> None:
        """What Ollama's docs/api.md says a chat request holds; raises `ValueError` otherwise."""
        if not isinstance(kwargs.get("model"), str) or not isinstance(kwargs.get("messages"), list):
            raise ValueError("an Ollama chat request needs a model and a list of messages")
        for message in kwargs["messages"]:
            _validate_message(message)
        for tool in self.tool_definitions(kwargs):
            inner = _LAYOUT.inner(tool)
            if not _LAYOUT.holds(tool) or inner is None or not isinstance(inner.get("name"), str):
                raise ValueError(f"not an Ollama tool definition: {tool!r}")
            if not isinstance(inner.get("description", ""), str) or not isinstance(
                _LAYOUT.schema(tool), dict
            ):
                raise ValueError(f"not an Ollama tool definition: {tool!r}")

    async def send(self, client: Any, kwargs: JsonObject) -> TurnResult:
        request = client.build_request("POST", PATH, json=kwargs)
        if kwargs.get("stream"):
            return await read_stream(
                self._open(client, request), _Accumulator(), self.error_from_exception, "done"
            )
        try:
            response = await client.send(request)
            if response.status_code >= 400:
                raise _status_error(response.status_code, response.text, dict(response.headers))
            body = response.json()
        except Exception as exc:
            return TurnResult(error=self.error_from_exception(exc))
        return self.decode(body)

    async def _open(self, client: Any, request: Any) -> _Lines:
        response = await client.send(request, stream=True)
        if response.status_code >= 400:
            text = (await response.aread()).decode("utf-8", "replace")
            await response.aclose()
            raise _status_error(response.status_code, text, dict(response.headers))
        return _Lines(response)

    def decode(self, response: Any) -> TurnResult:
        if not isinstance(response, dict) or not isinstance(response.get("message"), dict):
            return TurnResult(error=not_the_wire("Ollama chat response"))
        accumulator = _Accumulator()
        accumulator.add({**response, "done": True})
        return accumulator.result()

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        if isinstance(exc, OllamaError):
            if exc.status is None:
                return ProviderError(message=str(exc), kind="stream")
            return ProviderError(
                status=exc.status, message=str(exc), retry_after=retry_after_seconds(exc.headers), kind="http"
            )
        return transport_error(exc)

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        if result.error is not None:
            error = result.error
            if error.kind == "stream" or (stream and error.status in (None, 200)):
                line = json.dumps({"error": error.message}).encode() + b"\n"
                return RenderedResponse(200, {"content-type": "application/x-ndjson"}, [line])
            headers = {"retry-after": str(int(error.retry_after))} if error.retry_after is not None else {}
            return json_response(error.status or 500, {"error": error.message}, headers)
        final = _final(result, model)
        if not stream:
            return json_response(200, final)
        lines = [
            {"model": model, "message": {"role": "assistant", "content": piece}, "done": False}
            for piece in text_pieces(result.text or "")
        ]
        if result.tool_calls:
            lines.append({"model": model, "message": final["message"] | {"content": ""}, "done": False})
        lines.append({**final, "message": {"role": "assistant", "content": ""}})
        chunks = [json.dumps(line).encode() + b"\n" for line in lines]
        return RenderedResponse(200, {"content-type": "application/x-ndjson"}, chunks)

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        return bool(body.get("stream", True)) if isinstance(body, dict) else False

    def recorded_model(self, url: str, body: JsonObject | None) -> str | None:
        model = body.get("model") if isinstance(body, dict) else None
        return model if isinstance(model, str) else None

    def replayable_response(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[dict[str, str], bytes]:
        return headers, body

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": False}


def _validate_message(message: Any) -> None:
    if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "tool"):
        raise ValueError(f"not an Ollama chat message: {message!r}")
    if not isinstance(message.get("content"), str):
        raise ValueError(f"an Ollama message's content is a string: {message!r}")
    if any(not isinstance(message.get(key, ""), str) for key in ("tool_name", "tool_call_id")):
        raise ValueError(f"an Ollama tool result's tool_name is a string: {message!r}")
    for call in message.get("tool_calls", []):
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(function, dict)
            or not isinstance(function.get("name"), str)
            or not isinstance(call.get("id", ""), str)
        ):
            raise ValueError(f"not an Ollama tool call: {call!r}")
        if not isinstance(function.get("arguments"), dict):
            raise ValueError(f"an Ollama tool call's arguments are an object: {call!r}")


def _status_error(status: int, text: str, headers: dict[str, str]) -> OllamaError:
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    message = body.get("error") if isinstance(body, dict) else None
    return OllamaError(status, str(message or text or f"HTTP {status}"), headers)


def _final(result: TurnResult, model: str) -> JsonObject:
    message: JsonObject = {"role": "assistant", "content": result.text or ""}
    if result.reasoning:
        message["thinking"] = result.reasoning
    if result.tool_calls:
        message["tool_calls"] = [
            {**({"id": c.id} if c.id else {}), "function": {"name": c.name, "arguments": c.arguments}}
            for c in result.tool_calls
        ]
    body: JsonObject = {
        "model": model,
        "created_at": "2026-01-01T00:00:00Z",
        "message": message,
        "done": True,
        "done_reason": {"length": "length"}.get(result.finish_reason or "", "stop"),
    }
    if result.usage is not None:
        body["prompt_eval_count"] = result.usage.input_tokens or 0
        body["eval_count"] = result.usage.output_tokens or 0
    return body


NAMES = Rule(
    "ollama.name-pattern",
    "Tool names match ^[a-zA-Z0-9_-]{1,64}$ (what the OpenAI-style models Ollama serves are trained on).",
    "[doc] github.com/ollama/ollama docs/api.md (tools: OpenAI function format)",
)
ROOT = Rule(
    "ollama.root-type-object",
    'parameters is an object schema (type: "object").',
    "[doc] github.com/ollama/ollama docs/api.md (tools: function parameters)",
)
SCHEMA = Rule(
    "ollama.json-schema",
    "parameters is valid JSON Schema.",
    "[doc] github.com/ollama/ollama docs/api.md (tools: function parameters)",
)

OLLAMA_WIRE = WirePlugin(
    codec=OllamaChat(),
    dialects=(
        DialectSpec(
            name="ollama",
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
            dialect="ollama",
            profile=Profile(
                name_checks=(name_pattern(NAMES, r"[a-zA-Z0-9_-]{1,64}"),),
                tool_checks=(root_type_object(ROOT), meta_schema(SCHEMA, follow_dollar_schema=False)),
                node_checks=(),
            ),
        ),
    ),
)

OLLAMA_PROVIDER = Provider(
    name="ollama",
    default_model="qwen3:0.6b",
    key_vars=(),
    base_url_var="OLLAMA_HOST",
    default_base_url="http://127.0.0.1:11434",
)


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    """The adapter: xpeval's HTTP client (its transport: cassettes, the emulator) at Ollama's URL."""
    client = async_http_client(settings)
    client.base_url = provider.base_url(settings.base_url) or "http://127.0.0.1:11434"
    if settings.headers:
        client.headers.update(settings.headers)
    return Adapter(contract=contract, provider=provider, client=client, settings=settings)


OLLAMA = DirectEntry(
    wire=WIRE,
    schema_dialect="ollama",
    provider=OLLAMA_PROVIDER,
    factory=create,
    description="Ollama native /api/chat (example plugin wire)",
    capabilities=Capabilities(tool_choice=frozenset({"auto"})),
)
