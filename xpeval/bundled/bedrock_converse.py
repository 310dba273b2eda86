"""AWS Bedrock Converse (`POST /model/{modelId}/converse` and `/converse-stream`) through
`boto3`: a wire shipped with xpeval but written against `xpeval.plugin` only, as any plugin's
would be.

The format (AWS's Bedrock API reference, "Converse" and "ConverseStream";
docs/provider-schema-rules.md §16): `messages` of role `user`/`assistant` whose `content` is a
list of blocks (`text`, `toolUse` `{toolUseId, name, input}`, `toolResult` `{toolUseId,
content, status}`, `reasoningContent`), the system prompt apart in `system`, tools in
`toolConfig` (`tools[].toolSpec` `{name, description, inputSchema: {json}}`, `toolChoice`
`auto`/`any`/`tool`; there is no "none"), `inferenceConfig` for `maxTokens`/`temperature`. An
answer is `output.message` with the same blocks, `stopReason` (`end_turn`, `tool_use`,
`max_tokens`, `stop_sequence`, `guardrail_intervened`, `content_filtered`) and `usage`. A stream is
AWS eventstream binary framing (`application/vnd.amazon.eventstream`): `messageStart`,
`contentBlockStart` (a toolUse block's id and name; text blocks get none), `contentBlockDelta`
(`text`, `toolUse.input` string fragments, `reasoningContent`), `contentBlockStop`,
`messageStop` (`stopReason`), `metadata` (`usage`); an error inside the stream is a frame of
`:message-type` `exception`. botocore parses the frames (its own eventstream parser); `render`
writes them for the emulator. botocore reads a payload that is not JSON as `{"message": text}`
and an event type it does not model as nothing at all, so every frame is checked on its way to
botocore (`_Frames`): a frame this wire cannot read is a `decode` error, never a skipped event.
A cited passage of a plain answer is a `citationsContent` block (`content[].text`, beside its
`citations`); in a stream its text arrives as ordinary `text` deltas, its source as a
`delta.citation` (adapters/wires/RULES.md, "Bedrock eventstream").

boto3 sends through urllib3, not httpx2: the adapter answers botocore's `before-send` event (the
hook botocore offers for answering a request in place of its HTTP session) by sending the signed
request through xpeval's transport (`http_transport`: cassettes, the emulator, fault injection)
on the running event loop, botocore's call itself running in a worker thread. SigV4 signatures
(`Authorization`, `X-Amz-Security-Token`, `X-Amz-Date`) and the bearer token of
`AWS_BEARER_TOKEN_BEDROCK` are secret headers, scrubbed from what is recorded.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import os
import re
import struct
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar
from urllib.parse import unquote

import httpx2
import pydantic_core

from xpeval.bundled.bedrock_reasoning import RULES, WIRE, kept_reasoning
from xpeval.plugin import (
    AcceptanceMode,
    Adapter,
    AdapterSettings,
    AssistantMessage,
    Capabilities,
    Codec,
    DialectSpec,
    DirectEntry,
    EffectiveContract,
    FinishReason,
    ForceTool,
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
    http_transport,
    json_response,
    meta_schema,
    name_length,
    name_pattern,
    none_if_empty,
    parse_arguments,
    retry_after_header,
    retry_after_seconds,
    sent_in_stream,
    text_pieces,
    transport_error,
    wire_call_ids,
)

DIALECT = "bedrock"
_T = TypeVar("_T")
_LAYOUT = ToolLayout(envelope=("toolSpec",), schema_field="inputSchema", strict=None)
"""Where the checker finds a tool: `toolSpec.inputSchema` holds `{"json": schema}` on the wire;
`tool_definitions` hands the checker the schema itself there (the layout has one schema member)."""
_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
_RAW_FINISH = {"stop": "end_turn", "length": "max_tokens", "content_filter": "content_filtered"}
_STREAM_PATH = re.compile(r"/converse-stream/?([?#]|$)")
_MODEL_IN_PATH = re.compile(r"/model/([^/?#]+)/converse")
_SIGV4_HEADERS = ("authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256")
_STREAM_EXCEPTIONS = (
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
)
"""The errors `ConverseStreamOutput` models as stream members (botocore's service model)."""
_EVENT_TYPES = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)
"""The events `ConverseStreamOutput` models (botocore's service model); any other is unreadable."""
_PRELUDE = 12
_MAX_HEADERS = 128 * 1024
_MAX_FRAME = _PRELUDE + _MAX_HEADERS + 24 * 1024 * 1024 + 4
"""botocore's own limits on one frame (headers 128 KiB, payload 24 MiB), with prelude and CRC."""
_HEADER_BLOCKS_KEPT = 64
"""Distinct header blocks a stream's reader keeps read (a ConverseStream repeats a handful)."""
_EVENTS_PER_HOP = 512
"""Events read per trip to the worker thread: one trip an event cost more than the decoding."""
_SERVER_TOOL = "server_tool_use"
REASONING_STATE = RULES
"""A `toolUse` block of this `type` is a server-side tool's (`systemTool`), not a client call."""


# --- encoding ---------------------------------------------------------------------------------


def _blocks(message: Any, index: int, ids: dict[tuple[int, int], str]) -> list[JsonObject]:
    if isinstance(message, UserMessage):
        return [{"text": message.content}]
    if isinstance(message, ToolResultMessage):
        result: JsonObject = {"toolUseId": ids[(index, -1)], "content": [{"text": message.content}]}
        if message.is_error:
            result["status"] = "error"
        return [{"toolResult": result}]
    assert isinstance(message, AssistantMessage)
    # The signed reasoning blocks first, as they came (docs/provider-loop-rules.md).
    blocks: list[JsonObject] = [{"reasoningContent": _sent(b)} for b in kept_reasoning(message.provider_data)]
    if message.content:
        blocks.append({"text": message.content})
    blocks.extend(
        {"toolUse": {"toolUseId": ids[(index, c)], "name": call.name, "input": call.arguments}}
        for c, call in enumerate(message.tool_calls)
    )
    return blocks or [{"text": " "}]  # a message holds at least one block


def _sent(block: JsonObject) -> JsonObject:
    """A kept reasoning block as boto3 takes it: redacted content is a blob (bytes)."""
    redacted = block.get("redactedContent")
    if isinstance(redacted, str):
        return {"redactedContent": base64.b64decode(redacted)}
    return block


def _messages(request: TurnRequest) -> tuple[list[JsonObject], list[JsonObject]]:
    """(system blocks, messages): tool results are user blocks, and consecutive messages of one
    role are one message (the API wants the roles to alternate)."""
    ids = wire_call_ids(request.messages)
    system: list[JsonObject] = []
    out: list[JsonObject] = []
    for index, message in enumerate(request.messages):
        if isinstance(message, SystemMessage):
            system.append({"text": message.content})
            continue
        role = "assistant" if isinstance(message, AssistantMessage) else "user"
        blocks = _blocks(message, index, ids)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def _tool_choice(request: TurnRequest, tools: PreparedTools) -> JsonObject:
    if isinstance(request.tool_choice, ForceTool):
        return {"tool": {"name": tools.wire_name(request.tool_choice.name)}}
    return {"any": {}} if request.tool_choice == "required" else {"auto": {}}


# --- decoding ---------------------------------------------------------------------------------


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict) or not usage:
        return None

    def count(key: str) -> int | None:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) else None

    return Usage(
        input_tokens=count("inputTokens"),
        output_tokens=count("outputTokens"),
        total_tokens=count("totalTokens"),
        cache_read_tokens=count("cacheReadInputTokens"),
        cache_write_tokens=count("cacheWriteInputTokens"),
    )


@dataclass
class _Block:
    kind: str = "text"
    id: str | None = None
    name: str = ""
    parts: list[str] = field(default_factory=list)
    problem: str | None = None
    """Why the call's arguments are not the wire's, though their text may parse (plain answers)."""


class _Accumulator:
    """Folds ConverseStream events (`{eventName: payload}`, as botocore yields them) into one
    result; whole once `messageStop` arrived."""

    def __init__(self) -> None:
        self.events = 0
        self.blocks: dict[int, _Block] = {}
        self.reasoning: list[str] = []
        self.signed: dict[int, JsonObject] = {}
        """Each reasoning block's signature or redacted content, by block index."""
        self.stop: str | None = None
        self.usage: Usage | None = None
        self.unreadable: str | None = None
        """The first event that is not one of the wire's: the stream is a `decode` error."""

    @property
    def terminal(self) -> bool:
        return self.stop is not None

    def add(self, event: Any) -> None:
        kind, payload = (
            next(iter(event.items())) if isinstance(event, dict) and len(event) == 1 else ("", None)
        )
        if kind not in _EVENT_TYPES or not isinstance(payload, dict):
            self.unreadable = self.unreadable or f"event {self.events + 1} is not a ConverseStream event"
            return
        self.events += 1
        index = payload.get("contentBlockIndex")
        index = index if isinstance(index, int) else 0
        if kind == "contentBlockStart":
            self._start(index, payload.get("start") or {})
        elif kind == "contentBlockDelta":
            self._delta(index, payload.get("delta") or {})
        elif kind == "messageStop":
            self.stop = str(payload.get("stopReason") or "")
        elif kind == "metadata":
            self.usage = _usage(payload.get("usage")) or self.usage

    def _start(self, index: int, start: JsonObject) -> None:
        use = start.get("toolUse")
        if isinstance(use, dict):
            kind = "server" if use.get("type") == _SERVER_TOOL else "tool"
            block = _Block(kind, use.get("toolUseId") or None, str(use.get("name") or ""))
            if "input" in use and not isinstance(use["input"], dict):  # a plain answer's whole input
                block.problem = f"toolUse.input is not a JSON object (got {type(use['input']).__name__})"
            self.blocks[index] = block
        elif "toolResult" in start:
            self.blocks[index] = _Block("result")

    def _delta(self, index: int, delta: JsonObject) -> None:
        block = self.blocks.setdefault(index, _Block())
        if isinstance(delta.get("text"), str) and block.kind == "text":
            block.parts.append(delta["text"])
        use = delta.get("toolUse")
        if isinstance(use, dict) and block.kind in ("tool", "server"):
            block.parts.append(str(use.get("input") or ""))
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            self._reasoning(index, block, reasoning)

    def _reasoning(self, index: int, block: _Block, delta: JsonObject) -> None:
        block.kind = "reasoning" if block.kind == "text" and not block.parts else block.kind
        if isinstance(delta.get("text"), str):
            self.reasoning.append(delta["text"])
            block.parts.append(delta["text"])
        if isinstance(delta.get("signature"), str):
            self.signed[index] = {"signature": delta["signature"]}
        redacted = delta.get("redactedContent")
        if isinstance(redacted, bytes | str) and redacted:
            data = base64.b64encode(redacted).decode() if isinstance(redacted, bytes) else redacted
            self.signed[index] = {"redactedContent": data}

    def kept(self) -> JsonObject:
        """The signed reasoning blocks, which go back first in the next request's assistant turn."""
        kept: list[JsonObject] = []
        for index, signed in sorted(self.signed.items()):
            if "redactedContent" in signed:
                kept.append(signed)
            else:
                text = "".join(self.blocks[index].parts) if index in self.blocks else ""
                kept.append({"reasoningText": {"text": text, "signature": signed["signature"]}})
        return {WIRE: {"reasoning": kept}} if kept else {}

    def result(self, error: ProviderError | None = None) -> TurnResult:
        if self.unreadable is not None and (error is None or error.kind == "truncated"):
            error = ProviderError(message=self.unreadable, kind="decode")
        text: list[str] = []
        calls: list[ToolCall] = []
        for _, block in sorted(self.blocks.items()):
            if block.kind == "text":
                text.append("".join(block.parts))
            elif block.kind == "tool":
                calls.append(_call(block.id, block.name, "".join(block.parts), block.problem))
        if error is not None and error.kind == "stream":
            finish: FinishReason | None = "error"
        elif self.stop is None:
            finish = None
        else:
            finish = "tool_calls" if calls and self.stop == "end_turn" else _FINISH.get(self.stop, "other")
        return TurnResult(
            text=none_if_empty("".join(text)),
            reasoning=none_if_empty("".join(self.reasoning)),
            tool_calls=calls,
            finish_reason=finish,
            raw_finish_reason=self.stop,
            usage=self.usage,
            error=error,
            provider_data=self.kept(),
        )


def _call(call_id: str | None, name: str, raw: str, problem: str | None = None) -> ToolCall:
    """A call from its argument text; `problem` when the wire sent them in a shape that is not an
    object (a plain answer's `toolUse.input` string or list): a call with a parse error, never `{}`."""
    arguments, parse_error = parse_arguments(raw or "{}")
    if parse_error is None and problem is not None:
        arguments, parse_error = {}, problem
    return ToolCall(id=call_id, name=name, arguments=arguments, raw_arguments=raw, parse_error=parse_error)


def _input_text(value: Any) -> str:
    """A plain answer's `toolUse.input` as argument text: an object as JSON, a string as itself
    (the text the model wrote), anything else as the JSON it was."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _block_text(block: JsonObject) -> str | None:
    """The visible text of a plain answer's block: `text`, or the cited text of a
    `citationsContent` block (its `content[].text`; its `citations` say where it came from)."""
    if isinstance(block.get("text"), str):
        return str(block["text"])
    cited = block.get("citationsContent")
    if not isinstance(cited, dict):
        return None
    parts = cited.get("content")
    pieces = (
        [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if isinstance(parts, list)
        else []
    )
    return "".join(pieces)


def _sdk_arguments(kwargs: JsonObject) -> JsonObject:
    """The encoded arguments as the client's calls take them: whether to stream is the call's name."""
    return {k: v for k, v in kwargs.items() if k != "stream"}


def _plain_events(body: JsonObject) -> Iterator[JsonObject]:
    """A Converse answer as the stream events that would carry it (one decoder for both)."""
    message = (body.get("output") or {}).get("message") or {}
    for index, block in enumerate(message.get("content") or []):
        if not isinstance(block, dict):
            continue
        text = _block_text(block)
        if text is not None:
            yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": text}}}
        use = block.get("toolUse")
        if isinstance(use, dict):
            yield {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolUse": use}}}
            raw = _input_text(use.get("input"))
            yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"toolUse": {"input": raw}}}}
        yield from _reasoning_events(index, block.get("reasoningContent"))
        if "toolResult" in block:
            yield {"contentBlockStart": {"contentBlockIndex": index, "start": {"toolResult": {}}}}
    yield {"messageStop": {"stopReason": body.get("stopReason")}}
    yield {"metadata": {"usage": body.get("usage") or {}}}


def _reasoning_events(index: int, content: Any) -> Iterator[JsonObject]:
    """A whole reasoning block as the deltas that stream it: its text, then its signature (or
    its redacted content)."""
    if not isinstance(content, dict):
        return
    reasoning = content.get("reasoningText")
    if isinstance(reasoning, dict):
        delta: JsonObject = {"text": str(reasoning.get("text") or "")}
        yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"reasoningContent": delta}}}
        if isinstance(reasoning.get("signature"), str):
            signature = {"reasoningContent": {"signature": reasoning["signature"]}}
            yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": signature}}
    if content.get("redactedContent"):
        redacted = {"reasoningContent": {"redactedContent": content["redactedContent"]}}
        yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": redacted}}


# --- the codec --------------------------------------------------------------------------------


class BedrockConverse(Codec):
    """The `bedrock-converse` codec (the `Wire` protocol, on the `Codec` skeleton)."""

    name = WIRE
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/model/[^/?#]+/converse(-stream)?/?([?#]|$)"),)
    reasoning_state = REASONING_STATE
    stream_end = "messageStop"
    reply_kind = "Bedrock Converse response"

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        system, messages = _messages(request)
        kwargs: JsonObject = {"modelId": request.model, "messages": messages, "stream": request.stream}
        if system:
            kwargs["system"] = system
        if tools.sent:
            # `description` is optional but, when sent, at least one character (botocore's
            # model): a tool without one goes without the key.
            specs = [
                {
                    "toolSpec": {
                        "name": t.name,
                        **({"description": t.description} if t.description else {}),
                        "inputSchema": {"json": t.parameters},
                    }
                }
                for t in tools.sent
            ]
            kwargs["toolConfig"] = {"tools": specs, "toolChoice": _tool_choice(request, tools)}
        inference: JsonObject = {}
        if request.max_output_tokens is not None:
            inference["maxTokens"] = request.max_output_tokens
        if request.temperature is not None:
            inference["temperature"] = request.temperature
        if inference:
            kwargs["inferenceConfig"] = inference
        return kwargs

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        return _LAYOUT

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        tools = (kwargs.get("toolConfig") or {}).get("tools")
        return [_judged(t) for t in tools] if isinstance(tools, list) else []

    def validate_encoded(self, kwargs: JsonObject) -> None:
        import botocore.session
        from botocore.exceptions import ParamValidationError
        from botocore.validate import ParamValidator

        if kwargs.get("stream") not in (True, False):
            raise ValueError("the encoded arguments say whether to stream (stream: true or false)")
        model = botocore.session.get_session().get_service_model("bedrock-runtime")
        operation = model.operation_model("ConverseStream" if kwargs["stream"] else "Converse")
        arguments = {k: v for k, v in kwargs.items() if k != "stream"}
        report = ParamValidator().validate(arguments, operation.input_shape)
        if report.has_errors():
            raise ValueError(str(ParamValidationError(report=report.generate_report())))

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.call("converse", _sdk_arguments(kwargs))

    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        opened: Awaitable[Any] = client.stream(_sdk_arguments(kwargs))
        return opened

    def accumulator(self) -> _Accumulator:
        return _Accumulator()

    def whole_events(self, response: Any) -> Iterator[JsonObject] | None:
        """A Converse response as the ConverseStream events it would send."""
        if not isinstance(response, dict) or not isinstance(
            (response.get("output") or {}).get("message"), dict
        ):
            return None
        return _plain_events(response)

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        from botocore.exceptions import ClientError, EventStreamError

        if isinstance(exc, UnreadableFrame):
            return ProviderError(message=str(exc), kind=exc.kind)
        if isinstance(exc, ClientError):
            error = exc.response.get("Error") or {}
            meta = exc.response.get("ResponseMetadata") or {}
            headers = meta.get("HTTPHeaders") or {}
            in_stream = isinstance(exc, EventStreamError)
            code = str(error.get("Code") or "")
            # botocore names an error without a type (no x-amzn-ErrorType, none in the body) by its status
            unnamed = code == str(meta.get("HTTPStatusCode"))
            return ProviderError(
                status=_stream_exception_status(code) if in_stream else meta.get("HTTPStatusCode"),
                type=None if unnamed or not code else code,
                message=str(error.get("Message") or exc),
                retry_after=None if in_stream else retry_after_seconds(headers),
                kind="stream" if in_stream else "http",
            )
        return transport_error(exc)

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        error = result.error
        if error is not None and not sent_in_stream(error, stream=stream):
            headers = dict(retry_after_header(error))
            if error.type:
                headers["x-amzn-ErrorType"] = error.type
            return json_response(error.status or 500, {"message": error.message}, headers)
        if not stream:
            return json_response(200, _response(result))
        frames = [_frame(kind, payload) for kind, payload in _events(result)]
        if error is not None:
            frames.append(_frame(error.type or "", {"message": error.message}, exception=True))
        return RenderedResponse(200, {"content-type": "application/vnd.amazon.eventstream"}, frames)

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        return bool(_STREAM_PATH.search(url))

    def recorded_model(self, url: str, body: JsonObject | None) -> str | None:
        found = _MODEL_IN_PATH.search(url)
        return unquote(found.group(1)) if found else None

    def replayable_response(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[dict[str, str], bytes]:
        return headers, body

    def minimal_request(self, model: str) -> JsonObject:
        return {
            "modelId": model,
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "stream": False,
        }


@functools.cache
def _stream_exception_statuses() -> dict[str, int]:
    """The HTTP status AWS's service model gives each exception a ConverseStream carries in its
    frames (`throttlingException` 429, `serviceUnavailableException` 503, ...)."""
    import botocore.session

    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    members = model.operation_model("ConverseStream").output_shape.members["stream"].members
    statuses = {
        name: (shape.metadata.get("error") or {}).get("httpStatusCode") for name, shape in members.items()
    }
    return {name: int(status) for name, status in statuses.items() if isinstance(status, int)}


def _stream_exception_status(code: str) -> int | None:
    """An in-stream exception's status, so it is retried as the same error over HTTP would be
    (`ProviderError.retryable`); None for one the model does not name (an `error` frame)."""
    return _stream_exception_statuses().get(code)


def _judged(tool: Any) -> JsonObject:
    """A tool as the checker judges it: `inputSchema.json` is the schema (anything else under
    `inputSchema` is left as sent, so the checker refuses it)."""
    if not isinstance(tool, dict) or not isinstance(tool.get("toolSpec"), dict):
        return dict(tool) if isinstance(tool, dict) else {"toolSpec": tool}
    spec = dict(tool["toolSpec"])
    schema = spec.get("inputSchema")
    if isinstance(schema, dict) and set(schema) == {"json"}:
        spec["inputSchema"] = schema["json"]
    return {**tool, "toolSpec": spec}


# --- rendering (the emulator's side) ----------------------------------------------------------


def _raw_stop(result: TurnResult) -> str:
    if result.tool_calls:
        return "tool_use"
    return _RAW_FINISH.get(result.finish_reason or "", "end_turn")


def _usage_body(result: TurnResult) -> JsonObject:
    usage = result.usage or Usage()
    prompt, output = usage.input_tokens or 0, usage.output_tokens or 0
    return {"inputTokens": prompt, "outputTokens": output, "totalTokens": prompt + output}


def _input(call: ToolCall) -> Any:
    return call.arguments if call.parse_error is None else call.raw_arguments


def _response(result: TurnResult) -> JsonObject:
    kept = kept_reasoning(result.provider_data)
    content: list[JsonObject] = [{"reasoningContent": block} for block in kept]
    if result.reasoning and not content:
        content.append({"reasoningContent": {"reasoningText": {"text": result.reasoning}}})
    if result.text:
        content.append({"text": result.text})
    content.extend(
        {"toolUse": {"toolUseId": call.id or f"tooluse_{index}", "name": call.name, "input": _input(call)}}
        for index, call in enumerate(result.tool_calls)
    )
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _raw_stop(result),
        "usage": _usage_body(result),
        "metrics": {"latencyMs": 0},
    }


def _events(result: TurnResult) -> list[tuple[str, JsonObject]]:
    events: list[tuple[str, JsonObject]] = [("messageStart", {"role": "assistant"})]
    index = 0
    for block in kept_reasoning(result.provider_data):
        deltas = _reasoning_events(index, block)
        events.extend(("contentBlockDelta", delta["contentBlockDelta"]) for delta in deltas)
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    reasoning = None if index else result.reasoning
    for kind, whole in (("reasoningContent", reasoning), ("text", result.text)):
        if not whole:
            continue
        for piece in text_pieces(whole):
            delta = {"reasoningContent": {"text": piece}} if kind == "reasoningContent" else {"text": piece}
            events.append(("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    for number, call in enumerate(result.tool_calls):
        start = {"toolUse": {"toolUseId": call.id or f"tooluse_{number}", "name": call.name}}
        events.append(("contentBlockStart", {"contentBlockIndex": index, "start": start}))
        raw = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)
        for piece in text_pieces(raw):
            events.append(
                ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
            )
        events.append(("contentBlockStop", {"contentBlockIndex": index}))
        index += 1
    if result.error is None:
        events.append(("messageStop", {"stopReason": _raw_stop(result)}))
        events.append(("metadata", {"usage": _usage_body(result), "metrics": {"latencyMs": 0}}))
    return events


def _header(name: str, value: str) -> bytes:
    encoded, text = name.encode(), value.encode()
    return struct.pack(">B", len(encoded)) + encoded + struct.pack(">BH", 7, len(text)) + text


def _frame(kind: str, payload: JsonObject, *, exception: bool = False) -> bytes:
    """One eventstream message: prelude (total and headers lengths, their CRC32), string
    headers, the JSON payload, and the CRC32 of all that. An error the API models
    (`ConverseStreamOutput`'s exceptions) is an `exception` message; any other an `error` one,
    its code and message in headers (botocore's parser reads both)."""
    if exception and kind in _STREAM_EXCEPTIONS:
        headers = [
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ]
    elif exception:
        said = str(payload.get("message") or "")
        headers = [(":error-code", kind), (":error-message", said), (":message-type", "error")]
        payload = {}
    else:
        headers = [(":event-type", kind), (":content-type", "application/json"), (":message-type", "event")]
    head = b"".join(_header(n, v) for n, v in headers)
    body = json.dumps(payload).encode()
    prelude = struct.pack(">II", 12 + len(head) + len(body) + 4, len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + body
    return message + struct.pack(">I", zlib.crc32(message))


# --- reading the eventstream -------------------------------------------------------------------


class UnreadableFrame(Exception):
    """A ConverseStream body this wire cannot read: a frame that is not AWS eventstream (prelude
    or message checksum, lengths, headers), an event botocore would skip or misread (an event type
    it does not model, a payload that is not a JSON object), or a body that ends inside a frame."""

    def __init__(self, message: str, kind: Literal["decode", "truncated"] = "decode") -> None:
        super().__init__(message)
        self.kind: Literal["decode", "truncated"] = kind


def _frame_length(data: bytes | bytearray, start: int, number: int) -> int:
    """The length of the frame whose prelude starts at `start`, its prelude checked."""
    total, head_length, crc = struct.unpack_from(">III", data, start)
    if zlib.crc32(data[start : start + 8]) != crc:
        raise UnreadableFrame(f"frame {number} is not AWS eventstream (its prelude checksum does not match)")
    if head_length > _MAX_HEADERS or not _PRELUDE + head_length + 4 <= total <= _MAX_FRAME:
        raise UnreadableFrame(f"frame {number} is not AWS eventstream (lengths {total}/{head_length})")
    return int(total)


def _headers(block: bytes, number: int) -> dict[str, Any]:
    """A frame's headers: string ones read here (all a ConverseStream frame carries), any other
    value type by botocore's own reader."""
    from botocore.eventstream import EventStreamHeaderParser

    headers: dict[str, Any] = {}
    at = 0
    try:
        while at < len(block):
            size = block[at]
            name = block[at + 1 : at + 1 + size].decode()
            if block[at + 1 + size] != 7:
                return dict(EventStreamHeaderParser().parse(block))
            (length,) = struct.unpack_from(">H", block, at + 2 + size)
            at += 4 + size + length
            if at > len(block) or name in headers:
                raise ValueError("a header runs past the headers, or comes twice")
            headers[name] = block[at - length : at].decode()
    except Exception as exc:  # a cut or doubled header, bytes that are no UTF-8, botocore's ParserError
        raise UnreadableFrame(f"frame {number}: its headers do not parse ({type(exc).__name__})") from exc
    return headers


class _Frame(NamedTuple):
    """One eventstream message, checked: its bytes, headers and JSON payload."""

    raw: bytes
    headers: dict[str, Any]
    payload: Any


def _event(frame: _Frame) -> JsonObject:
    """A frame's event as botocore yields it (`{eventType: payload}`); an error frame raised as
    botocore raises it (`EventStreamError`, its code and message as botocore reads them)."""
    headers = frame.headers
    if headers.get(":message-type") == "event":
        return {headers[":event-type"]: frame.payload}
    from botocore.exceptions import EventStreamError

    exception = headers.get(":exception-type")
    if headers.get(":message-type") == "exception" and exception in _STREAM_EXCEPTIONS:
        body = frame.payload if isinstance(frame.payload, dict) else {}
        code, said = exception, body.get("Message", body.get("message", ""))
    else:
        code, said = headers.get(":error-code", ""), headers.get(":error-message", "")
    raise EventStreamError({"Error": {"Code": code, "Message": said}}, "ConverseStream")


def _payload(data: bytes) -> Any:
    """A frame's JSON payload, None when it is not JSON (an empty payload is an empty object).
    pydantic-core's parser: the standard library's costs six times as much a frame."""
    if not data:
        return {}
    try:
        return pydantic_core.from_json(data)
    except ValueError:  # not JSON, not UTF-8, nested past its recursion limit
        return None


def _read_frame(frame: bytes, number: int, seen: dict[bytes, dict[str, Any]]) -> _Frame:
    """A whole frame checked as botocore would not: its checksum (which covers the prelude), its
    headers, an event type the wire has, a payload that is a JSON object (botocore reads any
    other as `{"message": text}`, and an event type it does not model as nothing). `seen`:
    header blocks already read (a stream's frames repeat a handful of them)."""
    if zlib.crc32(frame[:-4]) != int.from_bytes(frame[-4:], "big"):
        raise UnreadableFrame(f"frame {number}: its checksum does not match")
    head_end = _PRELUDE + int.from_bytes(frame[4:8], "big")
    if head_end > len(frame) - 4:
        raise UnreadableFrame(f"frame {number} is not AWS eventstream (its headers run past it)")
    block = frame[_PRELUDE:head_end]
    headers = seen.get(block)
    if headers is None:
        headers = _headers(block, number)
        if len(seen) < _HEADER_BLOCKS_KEPT:
            seen[block] = headers
    payload = _payload(frame[head_end:-4])
    message_type = headers.get(":message-type")
    if message_type == "event":
        if headers.get(":event-type") not in _EVENT_TYPES:
            raise UnreadableFrame(
                f"frame {number} is an event this wire does not have ({headers.get(':event-type')!r})"
            )
        if not isinstance(payload, dict):
            raise UnreadableFrame(
                f"frame {number} ({headers[':event-type']}): its payload is not a JSON object"
            )
    elif message_type not in ("exception", "error"):
        raise UnreadableFrame(f"frame {number} is not a ConverseStream message ({message_type!r})")
    return _Frame(frame, headers, payload)


class _Frames:
    """A ConverseStream body's chunks as whole frames, each checked (`_read_frame`). Linear in
    the body: botocore's own buffer copies what follows a frame each time it takes one, so a body
    handed to it whole costs the square of its frames (a 100,000-frame recording: over a minute)."""

    def __init__(self) -> None:
        self.pending = bytearray()
        self.need = _PRELUDE
        self.read = 0
        self.seen: dict[bytes, dict[str, Any]] = {}

    def feed(self, chunk: bytes) -> Iterator[_Frame]:
        data: bytes | bytearray = chunk
        if self.pending:
            self.pending += chunk
            if len(self.pending) < self.need:
                return
            data = self.pending
        start, size, self.need = 0, len(data), _PRELUDE
        while size - start >= _PRELUDE:
            total = int.from_bytes(data[start : start + 4], "big")
            if size - start < total or total < _PRELUDE + 4:
                self.need = _frame_length(data, start, self.read + 1)  # checked before waiting for it
                break
            self.read += 1
            yield _read_frame(bytes(data[start : start + total]), self.read, self.seen)
            start += total
        self.pending = bytearray(data[start:])

    def end(self) -> None:
        if self.pending:
            raise UnreadableFrame(
                f"the stream ends inside frame {self.read + 1} ({len(self.pending)} bytes of it)", "truncated"
            )


# --- the transport bridge ---------------------------------------------------------------------


class _BridgedBody:
    """An httpx2 response's body as botocore reads a urllib3 one (`stream()`, `close()`), each
    chunk fetched on the event loop the request was sent from. A ConverseStream body (`frames`)
    is read frame by frame, each checked: as its events (`events()`, what the adapter reads), or
    as the frames' bytes, one a piece, for botocore's own reader."""

    def __init__(self, bridge: _Bridge, response: httpx2.Response, frames: _Frames | None = None) -> None:
        self.bridge = bridge
        self.response = response
        self.frames = frames
        self.chunks: AsyncIterator[bytes] | None = None
        self.consumed = False

    def stream(self, **_: Any) -> Iterator[bytes]:
        if self.frames is None:
            yield from self._chunks()
        else:
            yield from (frame.raw for frame in self._frames(self.frames))

    def read(self, *_: Any) -> bytes:
        """The rest of the body, whatever size is asked (botocore's `StreamingBody.read` of an S3
        object: the objects batch inference reads are each one JSONL file, read whole)."""
        if self.consumed:
            return b""
        self.consumed = True
        return b"".join(self._chunks())

    def events(self) -> Iterator[JsonObject]:
        """The stream's events, read here rather than by botocore: botocore parses each event
        again through its service model (about 40 microseconds an event)."""
        assert self.frames is not None, "only a ConverseStream body has events"
        return map(_event, self._frames(self.frames))

    def _frames(self, frames: _Frames) -> Iterator[_Frame]:
        for chunk in self._chunks():
            yield from frames.feed(chunk)
        frames.end()

    def _chunks(self) -> Iterator[bytes]:
        if self.response.is_stream_consumed:  # served whole (a recording)
            yield self.response.content
            return
        self.chunks = self.response.aiter_bytes().__aiter__()
        while True:
            chunk = self.bridge.run(_next(self.chunks))
            if chunk is None:
                return
            yield chunk

    def close(self) -> None:
        self.bridge.run(self.response.aclose())


async def _next(chunks: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await chunks.__anext__()
    except StopAsyncIteration:
        return None


class _Bridge:
    """Answers botocore's `before-send` with the response of xpeval's transport."""

    def __init__(
        self, transport: httpx2.AsyncBaseTransport, settings: AdapterSettings, bearer: str | None
    ) -> None:
        self.transport = transport
        self.settings = settings
        self.timeout = settings.timeout
        self.headers = dict(settings.headers)
        self.bearer = bearer
        """The bearer token (AWS_BEARER_TOKEN_BEDROCK or the settings' key), sent in place of SigV4."""
        self.loop: asyncio.AbstractEventLoop | None = None

    def run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        if self.loop is None:
            coroutine.close()
            raise RuntimeError("the Bedrock client is used outside an adapter's send")
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def send(self, request: Any, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        response = self.run(self._forward(request))
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-encoding"}
        streamed = response.status_code == 200 and bool(_STREAM_PATH.search(str(request.url)))
        body = _BridgedBody(self, response, _Frames() if streamed else None)
        return AWSResponse(str(request.url), response.status_code, headers, body)

    async def _forward(self, request: Any) -> httpx2.Response:
        body = request.body
        content = body.encode() if isinstance(body, str) else body.read() if hasattr(body, "read") else body
        headers = [
            (k, v.decode() if isinstance(v, bytes) else str(v))
            for k, v in request.headers.items()
            if k.lower() not in ("host", "content-length")
        ]
        headers.extend(self.headers.items())
        if self.bearer is not None:
            headers = [(k, v) for k, v in headers if k.lower() not in _SIGV4_HEADERS]
            headers.append(("Authorization", f"Bearer {self.bearer}"))
        forwarded = httpx2.Request(
            request.method,
            str(request.url),
            headers=headers,
            content=content or b"",
            extensions={"timeout": httpx2.Timeout(self.timeout).as_dict()},
        )
        return await self.transport.handle_async_request(forwarded)


class BedrockClient:
    """The adapter's client: a boto3 `bedrock-runtime` client whose requests go through the
    bridge; its calls run in a worker thread while the event loop serves the transport. Batch
    inference (`bedrock_batch.py`) asks two more services the same way, each a boto3 client
    built when first asked for (`service`): `bedrock` (the control plane) and `s3`."""

    def __init__(self, client: Any, bridge: _Bridge, make_client: Callable[[str], Any] | None = None) -> None:
        self.client = client
        self.bridge = bridge
        self.make_client = make_client
        self.services: dict[str, tuple[Any, _Bridge]] = {}
        client.meta.events.register("before-send.bedrock-runtime", bridge.send)

    async def call(self, operation: str, arguments: JsonObject) -> Any:
        self.bridge.loop = asyncio.get_running_loop()
        return await asyncio.to_thread(getattr(self.client, operation), **arguments)

    async def service_call(self, service: str, operation: str, arguments: JsonObject) -> Any:
        """`operation` of the boto3 client of `service` (`bedrock`, `s3`), through the same
        transport. S3 is signed with SigV4 only: a Bedrock API key is no S3 credential."""
        if service not in self.services:
            if self.make_client is None:
                raise RuntimeError(f"this Bedrock client cannot reach {service}")
            bearer = self.bridge.bearer if service == "bedrock" else None
            bridge = _Bridge(self.bridge.transport, self.bridge.settings, bearer)
            client = self.make_client(service)
            client.meta.events.register(f"before-send.{service}", bridge.send)
            self.services[service] = (client, bridge)
        client, bridge = self.services[service]
        bridge.loop = asyncio.get_running_loop()
        return await asyncio.to_thread(getattr(client, operation), **arguments)

    async def stream(self, arguments: JsonObject) -> AsyncIterator[Any]:
        response = await self.call("converse_stream", arguments)
        stream = response["stream"]
        body = getattr(stream, "_raw_stream", None)  # botocore's EventStream keeps the body it reads
        events = body.events() if isinstance(body, _BridgedBody) and body.frames is not None else iter(stream)
        return _events_of(events, stream.close)

    async def aclose(self) -> None:
        await self.bridge.transport.aclose()
        self.client.close()
        for client, _ in self.services.values():
            client.close()


def _take(events: Iterator[Any], limit: int) -> tuple[list[Any], Exception | None, bool]:
    """Up to `limit` events, the exception that ended the stream, and whether it ended."""
    taken: list[Any] = []
    try:
        for event in events:
            taken.append(event)
            if len(taken) >= limit:
                return taken, None, False
    except Exception as exc:
        return taken, exc, True
    return taken, None, True


async def _events_of(events: Iterator[Any], close: Callable[[], None]) -> AsyncIterator[Any]:
    """A stream's events (blocking reads) as an async iterator: read in a thread, many a trip
    (`_EVENTS_PER_HOP`); those read before a failure are handed on before it."""
    try:
        ended = False
        while not ended:
            taken, failure, ended = await asyncio.to_thread(_take, events, _EVENTS_PER_HOP)
            for event in taken:
                yield event
            if failure is not None:
                raise failure
    finally:
        await asyncio.to_thread(close)


# --- dialect, rules, provider, adapter --------------------------------------------------------


SCHEMA = Rule(
    "bedrock.json-schema",
    "toolSpec.inputSchema.json is a JSON Schema document.",
    "[doc] docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolInputSchema.html "
    '("The JSON schema for the tool"); docs/provider-schema-rules.md §16',
)
NAME = Rule(
    "bedrock.tool-name",
    "toolSpec.name matches [a-zA-Z0-9_-]+ and has 1 to 64 characters.",
    "[doc] docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html "
    "(name: Length Constraints 1-64, Pattern ^[a-zA-Z0-9_-]+$); docs/provider-schema-rules.md §16",
)

BEDROCK_WIRE = WirePlugin(
    codec=BedrockConverse(),
    batch_api="xpeval.bundled.bedrock_batch:API",
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
                name_checks=(name_pattern(NAME, r"[a-zA-Z0-9_-]+"), name_length(NAME, 64)),
                tool_checks=(meta_schema(SCHEMA, follow_dollar_schema=False),),
                node_checks=(),
            ),
        ),
    ),
)

_BOTO_MODULES = [
    "args",
    "auth",
    "awsrequest",
    "client",
    "compress",
    "configprovider",
    "credentials",
    "endpoint",
    "endpoint_provider",
    "handlers",
    "hooks",
    "httpchecksum",
    "httpsession",
    "parsers",
    "regions",
    "response",
    "retryhandler",
    "session",
    "tokens",
    "useragent",
    "utils",
    "retries.standard",
    "retries.special",
    "retries.adaptive",
]
BOTO_LOGGERS = ("botocore", "boto3", *(f"botocore.{module}" for module in _BOTO_MODULES))
"""botocore's loggers, each listed (a log filter is not inherited): at DEBUG they print the
request's parameters, its canonical request and the response's headers and body."""

BEDROCK_PROVIDER = Provider(
    name="bedrock",
    default_model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    key_vars=("AWS_BEARER_TOKEN_BEDROCK",),
    base_url_var="AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    secret_headers=("authorization", "x-amz-security-token", "x-amz-date"),
    sdk_loggers=BOTO_LOGGERS,
    ready_when=(("AWS_BEARER_TOKEN_BEDROCK",), ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")),
    extra_env={"region": "AWS_REGION", "default_region": "AWS_DEFAULT_REGION"},
    price_provider="aws",
)
PLACEHOLDER_CREDENTIALS = {"aws_access_key_id": "AKIDPLACEHOLDER", "aws_secret_access_key": "not-a-secret"}
"""Signing keys when none are configured (cassettes, the emulator): botocore signs every request,
and without keys it would search the instance metadata service."""


def region(provider: Provider) -> str:
    """The region in the endpoint's host: AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1."""
    return provider.env("region") or provider.env("default_region") or "us-east-1"


@functools.cache
def _placeholder_session() -> Any:
    """One boto3 session for every client signed with the placeholder keys (replay, the emulator,
    a bearer token): a fresh session parses botocore's service model, endpoints and defaults from
    JSON again for each client, about 0.12 s of CPU a client (`cassettes check` builds one per
    cassette: 13.3 s of its 14.9 s on this wire's 106). Keys, region, endpoint and config are
    passed to each client, so the shared session holds no state an adapter sets; a client signed
    with the environment's keys gets a session of its own, which resolves them when it is built."""
    import boto3

    return boto3.session.Session()


def create(contract: EffectiveContract, provider: Provider, settings: AdapterSettings) -> Adapter:
    """The adapter: a boto3 `bedrock-runtime` client, its requests sent through xpeval's transport."""
    import boto3
    from botocore.config import Config

    where = region(provider)
    bearer = settings.secret_key() or next(
        (os.environ[n] for n in provider.key_vars if os.environ.get(n)), None
    )
    config: dict[str, Any] = {"retries": {"total_max_attempts": 1}, "user_agent_extra": "xpeval"}
    credentials: dict[str, str] = {}
    if bearer is not None:  # signed with placeholders, then the bridge sends the bearer token instead
        provider.api_key(bearer)  # registered as a secret: scrubbed wherever it appears
        config["signature_version"] = "v4"  # set in code: botocore leaves the bearer token to the bridge
        credentials = dict(PLACEHOLDER_CREDENTIALS)
    elif not provider.live_ready():
        credentials = dict(PLACEHOLDER_CREDENTIALS)
    session = _placeholder_session() if credentials else boto3.session.Session()
    client = session.client(
        "bedrock-runtime",
        region_name=where,
        endpoint_url=provider.base_url(settings.base_url) or f"https://bedrock-runtime.{where}.amazonaws.com",
        config=Config(**config),
        **credentials,
    )
    bridge = _Bridge(http_transport(settings), settings, bearer)

    def make_client(service: str) -> Any:
        """Another service's client for batch inference, signed like the runtime's (its endpoint
        boto3's own for the region, or AWS_ENDPOINT_URL_<SERVICE>)."""
        if service == "s3":  # SigV4 with the environment's keys: a bearer token is no S3 credential
            own = {k: v for k, v in config.items() if k != "signature_version"}
            # a checksum only where S3 requires one: else botocore streams a PutObject body as
            # `aws-chunked` with a trailer, which the bridge's one-piece body does not carry
            own["request_checksum_calculation"] = "when_required"
            keys = credentials if not provider.live_ready() else {}
            chosen = _placeholder_session() if keys else boto3.session.Session()
            return chosen.client(service, region_name=where, config=Config(**own), **keys)
        return session.client(service, region_name=where, config=Config(**config), **credentials)

    return Adapter(
        contract=contract,
        provider=provider,
        client=BedrockClient(client, bridge, make_client),
        settings=settings,
    )


BEDROCK = DirectEntry(
    wire=WIRE,
    schema_dialect=DIALECT,
    provider=BEDROCK_PROVIDER,
    factory=create,
    description="AWS Bedrock Converse (boto3)",
    capabilities=Capabilities(
        tool_choice=frozenset({"auto", "required", "named"}), reasoning_state=frozenset({"reasoning_blocks"})
    ),
)
