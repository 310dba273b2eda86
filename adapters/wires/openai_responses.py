"""OpenAI Responses (`POST /responses`): flat function tools, `call_id`-linked items."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from adapters.contract import (
    AssistantMessage,
    FinishReason,
    ForceTool,
    JsonObject,
    ProviderError,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
    WireName,
)
from adapters.schema import PreparedTools
from adapters.wires._base import (
    RenderedResponse,
    body_model,
    json_response,
    none_if_empty,
    not_the_wire,
    parse_arguments,
    read_stream,
    retry_after_header,
    sse_frame,
    sse_response,
    stainless_error,
    text_pieces,
    validate_params,
)
from adapters.wires._calls import wire_call_ids
from adapters.wires._layout import ToolLayout, listed_tools

WIRE_NAME: WireName = "openai-responses"


def _dump(item: Any) -> JsonObject:
    if isinstance(item, dict):
        return item
    return item.model_dump(mode="json", exclude_none=True, by_alias=True)


def normalize_finish(
    status: str | None, incomplete_reason: str | None, has_calls: bool
) -> FinishReason | None:
    if status is None:
        return "tool_calls" if has_calls else None
    if status == "completed":
        return "tool_calls" if has_calls else "stop"
    if status == "incomplete":
        if incomplete_reason == "content_filter":
            return "content_filter"
        return "length"
    if status in ("failed", "cancelled"):
        return "error"
    return "other"


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        input_tokens=getattr(usage, "input_tokens", None),
        output_tokens=getattr(usage, "output_tokens", None),
        total_tokens=getattr(usage, "total_tokens", None),
    )


def _call_from_item(item: Any) -> ToolCall:
    raw = getattr(item, "arguments", None)
    arguments, error = parse_arguments(raw)
    provider_data = {"item_id": item.id} if getattr(item, "id", None) else {}
    return ToolCall(
        id=getattr(item, "call_id", None) or None,
        name=item.name,
        arguments=arguments,
        raw_arguments=raw,
        parse_error=error,
        provider_data=provider_data,
    )


def _reasoning_text(item: Any) -> str:
    parts = [getattr(s, "text", "") or "" for s in (getattr(item, "summary", None) or [])]
    parts += [getattr(c, "text", "") or "" for c in (getattr(item, "content", None) or [])]
    return "".join(parts)


def _message_parts(item: Any) -> tuple[str, str]:
    """(visible text, refusal) of a message item: a `refusal` part is not text."""
    text, refusal = [], []
    for part in getattr(item, "content", None) or []:
        kind = getattr(part, "type", None)
        if kind == "output_text":
            text.append(part.text or "")
        elif kind == "refusal":
            refusal.append(part.refusal or "")
    return "".join(text), "".join(refusal)


@dataclass
class _Output:
    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    reasoning_items: list[JsonObject] = field(default_factory=list)


def _decode_output(output: list[Any]) -> _Output:
    decoded = _Output()
    for item in output:
        kind = getattr(item, "type", None)
        if kind == "message":
            text, refusal = _message_parts(item)
            decoded.text.append(text)
            decoded.refusal.append(refusal)
        elif kind == "function_call":
            decoded.calls.append(_call_from_item(item))
        elif kind == "reasoning":
            decoded.reasoning.append(_reasoning_text(item))
            decoded.reasoning_items.append(_dump(item))
    return decoded


def _error_of(response: Any) -> ProviderError | None:
    error = getattr(response, "error", None)
    if error is None:
        return None
    code = getattr(error, "code", None)
    return ProviderError(
        type=str(code) if code else None,
        message=getattr(error, "message", "") or "response failed",
        kind="stream",
    )


def _result_from_response(response: Any, *, error: ProviderError | None = None) -> TurnResult:
    decoded = _decode_output(list(getattr(response, "output", None) or []))
    incomplete = getattr(response, "incomplete_details", None)
    status = getattr(response, "status", None)
    error = error or _error_of(response)
    calls = decoded.calls
    return TurnResult(
        text=none_if_empty("".join(decoded.text)),
        refusal=none_if_empty("".join(decoded.refusal)),
        reasoning=none_if_empty("".join(decoded.reasoning)),
        tool_calls=calls,
        finish_reason="error"
        if error
        else normalize_finish(status, getattr(incomplete, "reason", None), bool(calls)),
        raw_finish_reason=status,
        usage=_usage(getattr(response, "usage", None)),
        response_id=getattr(response, "id", None) or None,
        model=getattr(response, "model", None) or None,
        error=error,
        provider_data={WIRE_NAME: {"reasoning": decoded.reasoning_items}} if decoded.reasoning_items else {},
        status=200,
    )


TERMINAL_EVENTS = frozenset({"response.completed", "response.incomplete", "response.failed"})


class ResponsesStreamAccumulator:
    """Reassembles Responses stream events; the terminal event's response is authoritative."""

    def __init__(self) -> None:
        self.events = 0
        self.terminal = False
        self.refusal: list[str] = []
        self.final: Any = None
        self.error: ProviderError | None = None
        self.items: dict[int, Any] = {}
        self.arguments: dict[int, list[str]] = {}
        self.text: dict[int, list[str]] = {}
        self.reasoning: list[str] = []
        self.response: Any = None

    def add(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        self.events += 1
        if kind in ("response.created", "response.in_progress"):
            self.response = event.response
        elif kind in TERMINAL_EVENTS:
            self.final = event.response
            self.terminal = True
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self.items[event.output_index] = event.item
        elif kind == "response.function_call_arguments.delta":
            self.arguments.setdefault(event.output_index, []).append(event.delta)
        elif kind == "response.function_call_arguments.done":
            self.arguments[event.output_index] = [event.arguments]
        elif kind == "response.output_text.delta":
            self.text.setdefault(event.output_index, []).append(event.delta)
        elif kind == "response.refusal.delta":
            self.refusal.append(event.delta)
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self.reasoning.append(event.delta)
        elif kind == "error":
            self.terminal = True
            code = getattr(event, "code", None)
            self.error = ProviderError(
                type=str(code) if code else None,
                message=getattr(event, "message", "") or "stream error",
                kind="stream",
            )

    def result(self, error: ProviderError | None = None) -> TurnResult:
        error = error or self.error
        if self.final is not None and (getattr(self.final, "output", None) or not self.items):
            return _result_from_response(self.final, error=error)
        # No terminal event (or one without its output): rebuild from the pieces that arrived.
        calls: list[ToolCall] = []
        text: list[str] = []
        refusal: list[str] = list(self.refusal)
        reasoning_items: list[JsonObject] = []
        for index in sorted(set(self.items) | set(self.text)):
            item = self.items.get(index)
            kind = getattr(item, "type", None)
            if kind == "function_call" and item is not None:
                if index in self.arguments:
                    item = item.model_copy(update={"arguments": "".join(self.arguments[index])})
                calls.append(_call_from_item(item))
            elif kind == "reasoning":
                reasoning_items.append(_dump(item))
            elif index in self.text:
                text.append("".join(self.text[index]))
            elif kind == "message":
                item_text, item_refusal = _message_parts(item)
                text.append(item_text)
                if not self.refusal:
                    refusal.append(item_refusal)
        head = self.final or self.response
        status = getattr(head, "status", None) if self.final is not None else None
        return TurnResult(
            text=none_if_empty("".join(text)),
            refusal=none_if_empty("".join(refusal)),
            reasoning=none_if_empty("".join(self.reasoning)),
            tool_calls=calls,
            finish_reason="error" if error else normalize_finish(status, None, bool(calls)),
            raw_finish_reason=status,
            usage=_usage(getattr(head, "usage", None)),
            response_id=getattr(head, "id", None),
            model=getattr(head, "model", None),
            error=error,
            provider_data={WIRE_NAME: {"reasoning": reasoning_items}} if reasoning_items else {},
            status=200,
        )


def _encode_input(request: TurnRequest, tools: PreparedTools) -> list[JsonObject]:
    """Input items. Messages say `type: message` although OpenAI infers it: other Responses
    servers (llama.cpp) refuse an untyped assistant message ("Cannot determine type of 'item'")."""
    ids = wire_call_ids(request.messages)
    items: list[JsonObject] = []
    for m_index, message in enumerate(request.messages):
        if isinstance(message, SystemMessage):
            items.append({"type": "message", "role": "system", "content": message.content})
        elif isinstance(message, UserMessage):
            items.append({"type": "message", "role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            own = message.provider_data.get(WIRE_NAME) or {}
            items.extend(own.get("reasoning", []))
            if message.content:
                items.append({"type": "message", "role": "assistant", "content": message.content})
            for c_index, call in enumerate(message.tool_calls):
                item: JsonObject = {
                    "type": "function_call",
                    "call_id": ids[(m_index, c_index)],
                    "name": tools.wire_name(call.name),
                    "arguments": call.raw_arguments
                    if call.raw_arguments is not None
                    else json.dumps(call.arguments),
                }
                if call.provider_data.get("item_id") and own.get("reasoning"):
                    # Reasoning items must be followed by the items they produced, by id.
                    item["id"] = call.provider_data["item_id"]
                items.append(item)
        elif isinstance(message, ToolResultMessage):
            items.append(
                {"type": "function_call_output", "call_id": ids[(m_index, -1)], "output": message.content}
            )
    return items


@cache
def _params_adapter(stream: bool) -> TypeAdapter[Any]:
    from openai.types.responses import response_create_params as params

    typed = params.ResponseCreateParamsStreaming if stream else params.ResponseCreateParamsNonStreaming
    return TypeAdapter(typed)


class OpenAIResponsesWire:
    name: WireName = WIRE_NAME
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/responses/?(\?|$)"),)

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        kwargs: JsonObject = {
            "model": request.model,
            "input": _encode_input(request, tools),
            "stream": request.stream,
        }
        sent = tools.sent
        if sent:
            layout = self.tool_layout(tools.dialect, tools.strict)
            kwargs["tools"] = [layout.definition(t.name, t.description, t.parameters) for t in sent]
            choice = request.tool_choice
            kwargs["tool_choice"] = (
                {"type": "function", "name": tools.wire_name(choice.name)}
                if isinstance(choice, ForceTool)
                else choice
            )
        if request.max_output_tokens is not None:
            kwargs["max_output_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        return kwargs

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        # Omitting strict is not "non-strict" here: the API then normalizes to strict
        # (docs/provider-schema-rules.md §3), so the flag is always sent.
        return ToolLayout((), "parameters", bool(strict), (("type", "function"),))

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        return listed_tools(kwargs)

    def validate_encoded(self, kwargs: JsonObject) -> None:
        validate_params(_params_adapter(bool(kwargs.get("stream"))), kwargs)

    async def send(self, client: Any, kwargs: JsonObject) -> TurnResult:
        if not kwargs.get("stream"):
            try:
                response = await client.responses.create(**kwargs)
            except Exception as exc:
                return TurnResult(error=self.error_from_exception(exc), finish_reason="error")
            return self.decode(response)
        return await read_stream(
            client.responses.create(**kwargs),
            ResponsesStreamAccumulator(),
            self.error_from_exception,
            "response.completed (or incomplete/failed)",
        )

    def decode(self, response: Any) -> TurnResult:
        if (
            not isinstance(getattr(response, "output", None), list)
            and getattr(response, "error", None) is None
        ):
            return TurnResult(error=not_the_wire("Responses response (no output)"), finish_reason="error")
        return _result_from_response(response)

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        import openai

        return stainless_error(exc, openai)

    def is_stream(self, url: str, body: JsonObject | None) -> bool:
        return bool(body and body.get("stream"))

    def recorded_model(self, url: str, body: JsonObject | None) -> str | None:
        return body_model(body)

    def replayable_response(
        self, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[dict[str, str], bytes]:
        return headers, body

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "input": "replay"}

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        if result.error is not None:
            return _render_error(result.error, stream=stream, model=model)
        response = _render_response(result, model)
        if not stream:
            return json_response(200, response)
        return sse_response(_render_events(response))


def _render_response(result: TurnResult, model: str, status: str | None = None) -> JsonObject:
    now = int(time.time())
    output: list[JsonObject] = list((result.provider_data.get(WIRE_NAME) or {}).get("reasoning", []))
    content: list[JsonObject] = []
    if result.text is not None:
        content.append({"type": "output_text", "text": result.text, "annotations": [], "logprobs": []})
    if result.refusal is not None:
        content.append({"type": "refusal", "refusal": result.refusal})
    if content:
        output.append(
            {
                "id": "msg_emulated_0",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": content,
            }
        )
    for index, call in enumerate(result.tool_calls):
        output.append(
            {
                "id": call.provider_data.get("item_id") or f"fc_emulated_{index}",
                "type": "function_call",
                "status": "completed",
                "call_id": call.id or f"call_emulated_{index}",
                "name": call.name,
                "arguments": call.raw_arguments
                if call.raw_arguments is not None
                else json.dumps(call.arguments),
            }
        )
    usage = result.usage or Usage()
    final_status = status or result.raw_finish_reason or "completed"
    return {
        "id": result.response_id or "resp_emulated",
        "object": "response",
        "created_at": now,
        "status": final_status,
        "background": False,
        "completed_at": now if final_status == "completed" else None,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if final_status == "incomplete" else None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "metadata": {},
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "billing": {"payer": "developer"},
        "frequency_penalty": 0.0,
        "presence_penalty": 0.0,
        "moderation": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "safety_identifier": None,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": usage.input_tokens or 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.output_tokens or 0,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.total_tokens or (usage.input_tokens or 0) + (usage.output_tokens or 0),
        },
        "user": None,
    }


def _part_events(item_id: str, index: int, content_index: int, part: JsonObject) -> list[JsonObject]:
    """The events that stream one content part (output text or a refusal) of a message."""
    refusal = part["type"] == "refusal"
    field_name, kind = ("refusal", "response.refusal") if refusal else ("text", "response.output_text")
    value = part[field_name]
    empty = {**part, field_name: ""}
    where = {"item_id": item_id, "output_index": index, "content_index": content_index}
    extra: JsonObject = {} if refusal else {"logprobs": []}
    events: list[JsonObject] = [{"type": "response.content_part.added", **where, "part": empty}]
    events += [
        {
            "type": f"{kind}.delta",
            **where,
            "delta": piece,
            **extra,
            **({} if refusal else {"obfuscation": "emulated"}),
        }
        for piece in text_pieces(value)
    ]
    events.append({"type": f"{kind}.done", **where, field_name: value, **extra})
    events.append({"type": "response.content_part.done", **where, "part": part})
    return events


def _render_events(response: JsonObject) -> list[bytes]:
    sequence = 0
    frames: list[bytes] = []

    def emit(event: JsonObject) -> None:
        nonlocal sequence
        event["sequence_number"] = sequence
        sequence += 1
        frames.append(sse_frame(event, event["type"]))

    opening = {**response, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
    emit({"type": "response.created", "response": opening})
    emit({"type": "response.in_progress", "response": opening})
    for index, item in enumerate(response["output"]):
        if item["type"] == "message":
            emit(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            for content_index, part in enumerate(item["content"]):
                for event in _part_events(item["id"], index, content_index, part):
                    emit(event)
        elif item["type"] == "function_call":
            arguments = item["arguments"]
            emit(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                }
            )
            for piece in text_pieces(arguments):
                emit(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": piece,
                        "obfuscation": "emulated",
                    }
                )
            emit(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": index,
                    "arguments": arguments,
                }
            )
        else:
            emit({"type": "response.output_item.added", "output_index": index, "item": item})
        emit({"type": "response.output_item.done", "output_index": index, "item": item})
    terminal = {"completed": "response.completed", "incomplete": "response.incomplete"}.get(
        response["status"], "response.completed"
    )
    emit({"type": terminal, "response": response})
    return frames


def _render_error(error: ProviderError, *, stream: bool, model: str) -> RenderedResponse:
    if error.kind == "stream" or (stream and error.status in (None, 200)):
        return sse_response(
            [
                sse_frame(
                    {
                        "type": "error",
                        "code": error.type,
                        "message": error.message,
                        "param": None,
                        "sequence_number": 0,
                    },
                    "error",
                )
            ]
        )
    body = {"error": {"message": error.message, "type": error.type, "param": None, "code": None}}
    headers = retry_after_header(error)
    return json_response(error.status or 500, body, headers)


WIRE = OpenAIResponsesWire()
