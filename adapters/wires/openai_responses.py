"""OpenAI Responses (`POST /responses`): flat function tools, `call_id`-linked items."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

from xpeval.adapters.contract import (
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
from xpeval.adapters.schema import PreparedTools
from xpeval.adapters.wires._base import (
    BodyDescribedRequests,
    Codec,
    RenderedResponse,
    none_if_empty,
    not_the_wire,
    parse_arguments,
    stainless_error,
    validate_params,
)
from xpeval.adapters.wires._calls import wire_call_ids
from xpeval.adapters.wires._layout import ToolLayout, listed_tools
from xpeval.adapters.wires.catalog import AcceptanceMode, WirePlugin
from xpeval.adapters.wires.loop_rules.openai_responses import OPENAI_RESPONSES
from xpeval.adapters.wires.loop_rules.openai_responses import RULES as REASONING_STATE
from xpeval.adapters.wires.render import openai_responses as rendering

WIRE_NAME: WireName = OPENAI_RESPONSES


def _dump(item: JsonObject | BaseModel) -> JsonObject:
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
    order: list[JsonObject] = field(default_factory=list)
    """Each output item's type and id, in output order: a reasoning item goes back followed by
    the item it produced (docs/provider-loop-rules.md)."""

    def kept(self) -> JsonObject:
        """What the turn keeps for the next: its reasoning items and the output order."""
        if not self.reasoning_items:
            return {}
        return {WIRE_NAME: {"reasoning": self.reasoning_items, "output": self.order}}

    def place(self, item: Any) -> None:
        item_id = getattr(item, "id", None)
        if item_id:
            ref: JsonObject = {"type": getattr(item, "type", None), "id": item_id}
            if getattr(item, "call_id", None):
                ref["call_id"] = item.call_id
            self.order.append(ref)


def _decode_output(output: list[Any]) -> _Output:
    decoded = _Output()
    for item in output:
        kind = getattr(item, "type", None)
        decoded.place(item)
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
        provider_data=decoded.kept(),
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
        pieces = self._pieces()
        head = self.final or self.response
        status = getattr(head, "status", None) if self.final is not None else None
        return TurnResult(
            text=none_if_empty("".join(pieces.text)),
            refusal=none_if_empty("".join(pieces.refusal)),
            reasoning=none_if_empty("".join(self.reasoning)),
            tool_calls=pieces.calls,
            finish_reason="error" if error else normalize_finish(status, None, bool(pieces.calls)),
            raw_finish_reason=status,
            usage=_usage(getattr(head, "usage", None)),
            response_id=getattr(head, "id", None),
            model=getattr(head, "model", None),
            error=error,
            provider_data=pieces.kept(),
            status=200,
        )

    def _pieces(self) -> _Output:
        """What the output items that arrived hold, in output order."""
        pieces = _Output(refusal=list(self.refusal))
        for index in sorted(set(self.items) | set(self.text)):
            self._add_piece(pieces, index)
        return pieces

    def _add_piece(self, pieces: _Output, index: int) -> None:
        item = self.items.get(index)
        kind = getattr(item, "type", None)
        if item is not None:
            pieces.place(item)
        if kind == "function_call" and item is not None:
            if index in self.arguments:
                item = item.model_copy(update={"arguments": "".join(self.arguments[index])})
            pieces.calls.append(_call_from_item(item))
        elif kind == "reasoning" and item is not None:
            pieces.reasoning_items.append(_dump(item))
        elif index in self.text:
            pieces.text.append("".join(self.text[index]))
        elif kind == "message":
            item_text, item_refusal = _message_parts(item)
            pieces.text.append(item_text)
            if not self.refusal:
                pieces.refusal.append(item_refusal)


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
            calls = [ids[(m_index, c_index)] for c_index in range(len(message.tool_calls))]
            items.extend(_assistant_items(message, calls, tools))
        elif isinstance(message, ToolResultMessage):
            items.append(
                {"type": "function_call_output", "call_id": ids[(m_index, -1)], "output": message.content}
            )
    return items


def _assistant_items(
    message: AssistantMessage, call_ids: list[str], tools: PreparedTools
) -> list[JsonObject]:
    """An assistant turn as input items. With reasoning items kept, each goes back followed by
    the item it produced, by id and in the order they came (a final answer's message by its
    `msg_` id: without it the reasoning item has no following item and is refused)."""
    own = message.provider_data.get(WIRE_NAME) or {}
    reasoning = [item for item in own.get("reasoning") or [] if isinstance(item, dict)]
    order = [ref for ref in own.get("output") or [] if isinstance(ref, dict)] if reasoning else []
    pool: list[JsonObject] = list(reasoning)
    if message.content:
        message_id = next((ref.get("id") for ref in order if ref.get("type") == "message"), None)
        pool.append(_assistant_message(message.content, message_id))
    pool.extend(
        _function_call(call, call_id, tools, by_id=bool(reasoning))
        for call, call_id in zip(message.tool_calls, call_ids, strict=True)
    )
    by_id = {item["id"]: item for item in pool if item.get("id")}
    ordered = [by_id.pop(ref.get("id")) for ref in order if ref.get("id") in by_id]
    return ordered + [item for item in pool if all(item is not placed for placed in ordered)]


def _function_call(call: ToolCall, call_id: str, tools: PreparedTools, *, by_id: bool) -> JsonObject:
    """A call as an input item; with its `fc_` item id when its reasoning item goes back too
    (reasoning items must be followed by the items they produced)."""
    item: JsonObject = {
        "type": "function_call",
        "call_id": call_id,
        "name": tools.wire_name(call.name),
        "arguments": call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments),
    }
    if by_id and call.provider_data.get("item_id"):
        item["id"] = call.provider_data["item_id"]
    return item


def _assistant_message(content: str, message_id: str | None) -> JsonObject:
    """An assistant message item: by its id, as the output message it was, when a reasoning item
    must be followed by it; else the plain form."""
    if message_id is None:
        return {"type": "message", "role": "assistant", "content": content}
    return {
        "type": "message",
        "id": message_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": content, "annotations": []}],
    }


@cache
def _params_adapter(stream: bool) -> TypeAdapter[Any]:
    from openai.types.responses import response_create_params as params

    typed = params.ResponseCreateParamsStreaming if stream else params.ResponseCreateParamsNonStreaming
    return TypeAdapter(typed)


class OpenAIResponsesWire(BodyDescribedRequests, Codec):
    name: WireName = WIRE_NAME
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/responses/?(\?|$)"),)
    reasoning_state = REASONING_STATE
    stream_end = "response.completed (or incomplete/failed)"

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

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.responses.create(**kwargs)

    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        opened: Awaitable[Any] = client.responses.create(**kwargs)
        return opened

    def accumulator(self) -> ResponsesStreamAccumulator:
        return ResponsesStreamAccumulator()

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

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "input": "replay"}

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        return rendering.render(result, model=model, stream=stream)


WIRE = OpenAIResponsesWire()
PLUGIN = WirePlugin(
    codec=WIRE,
    batch_api="xpeval.adapters.wires.batch.openai:API",
    acceptance=(
        AcceptanceMode("openai-responses", "openai", strict=False),
        AcceptanceMode("openai-responses-strict", "openai-strict", strict=True),
    ),
)
"""The wire as `catalog.BUNDLED_WIRES` registers it; its acceptance modes are judged by the
checker's rule sets of the same names (`evals/acceptance/checker/rules/`)."""
