"""OpenAI Chat Completions (`POST /chat/completions`), and every server that copies it."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import TypeAdapter

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
from xpeval.adapters.exchange import current as current_exchange
from xpeval.adapters.schema import PreparedTools
from xpeval.adapters.wires._base import (
    BodyDescribedRequests,
    Codec,
    PendingCall,
    RenderedResponse,
    ReplyAccumulator,
    error_fields,
    none_if_empty,
    not_the_wire,
    parse_arguments,
    stainless_error,
    validate_params,
)
from xpeval.adapters.wires._calls import wire_call_ids
from xpeval.adapters.wires._layout import ToolLayout, listed_tools
from xpeval.adapters.wires.catalog import AcceptanceMode, WirePlugin
from xpeval.adapters.wires.loop_rules.openai_chat import OPENAI_CHAT, REASONING_FIELDS, kept_field
from xpeval.adapters.wires.loop_rules.openai_chat import RULES as REASONING_STATE
from xpeval.adapters.wires.render import openai_chat as rendering

_FINISH: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "error": "error",
}


def normalize_finish(raw: str | None, has_calls: bool) -> FinishReason | None:
    # gpt-4o answers a forced call with "stop"; Snowflake sends "": the calls decide.
    if has_calls and raw in (None, "", "stop", "tool_calls", "function_call"):
        return "tool_calls"
    if raw is None:
        return None
    if raw == "":
        return "stop"
    return _FINISH.get(raw, "other")


def _reasoning_field(obj: Any) -> tuple[str, str] | None:
    """(field, text) of the reasoning a message or delta carries (`reasoning_content`, or
    `reasoning` on the servers that name it so)."""
    extra = getattr(obj, "model_extra", None) or {}
    for key in REASONING_FIELDS:
        value = extra.get(key)
        if isinstance(value, str) and value:
            return key, value
    return None


def _kept_reasoning(field_name: str | None, text: str | None) -> JsonObject:
    """What a turn keeps for the next: its reasoning under the field it came in, which the
    servers that return it require back before a tool turn (docs/provider-loop-rules.md)."""
    return {OPENAI_CHAT: {field_name: text}} if field_name and text else {}


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return Usage(
        input_tokens=getattr(usage, "prompt_tokens", None),
        output_tokens=getattr(usage, "completion_tokens", None),
        total_tokens=getattr(usage, "total_tokens", None),
    )


EMPTY_ARGUMENTS = "arguments are empty: not a JSON object (this wire sends `{}` for a call without arguments)"


def _call(call_id: str | None, name: str, raw: str | None) -> ToolCall:
    """A call as this wire carries it: `arguments` is JSON text, so empty text (or none) is no
    JSON object, as the K2 vendor verifier counts it, not "no arguments" (the OpenAI API sends
    `"{}"`; docs/reference-runs.md, "Two definitions")."""
    if raw is None or not raw.strip():
        return ToolCall(
            id=call_id or None, name=name, arguments={}, raw_arguments=raw, parse_error=EMPTY_ARGUMENTS
        )
    arguments, error = parse_arguments(raw)
    return ToolCall(id=call_id or None, name=name, arguments=arguments, raw_arguments=raw, parse_error=error)


@dataclass
class _PendingCall(PendingCall):
    index: Any = None

    def looks_complete(self) -> bool:
        """Whether the argument text so far is a whole JSON value (checked only when a second
        name arrives at this index, so the parse is rare)."""
        if not self.arguments or not self.arguments[-1].rstrip().endswith(("}", "]")):
            return False
        return parse_arguments("".join(self.arguments))[1] is None

    def starts_another(self, piece: Any) -> bool:
        """Whether `piece`, streamed at this call's index, is the head of another call.

        Servers reuse an index for several calls (Ollama and several sglang parsers put every
        parallel call at index 0: docs/stream-shapes.md); the OpenAI SDK's accumulator then glues
        their names and arguments together. A different id, a different name, or the same
        name again after whole arguments, is another call; a piece without either continues.
        """
        if piece.id and self.id:
            return bool(piece.id != self.id)
        name = piece.function.name if piece.function is not None else None
        if name and self.name:
            return bool(name != self.name) or self.looks_complete()
        return False


class ChatStreamAccumulator(ReplyAccumulator):
    """Reassembles chat.completion.chunk events into whole calls, in the provider's order.

    A call is the pieces streamed at one index until another call's head arrives at it
    (`_PendingCall.starts_another`); a piece without an index continues the last call unless
    it is a head. The stream is whole once a choice carries its `finish_reason` (or `[DONE]`
    closed it: some servers send no finish reason).
    """

    def __init__(self) -> None:
        super().__init__()
        self.refusal: list[str] = []
        self.reasoning_field: str | None = None
        self.calls: list[_PendingCall] = []
        self.open: dict[Any, _PendingCall] = {}
        """The call each index is currently streaming (`None`: pieces sent without an index)."""

    @property
    def terminal(self) -> bool:
        if self.finish is not None:
            return True
        exchange = current_exchange()
        return exchange is not None and b"[DONE]" in exchange.tail

    def add(self, chunk: Any) -> None:
        self.events += 1
        self.response_id = self.response_id or getattr(chunk, "id", None) or None
        self.model = self.model or getattr(chunk, "model", None) or None
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) not in (0, None):
                continue
            delta = choice.delta
            if delta is not None:
                self._add_delta(delta)
            if choice.finish_reason is not None:
                self.finish = choice.finish_reason

    def _add_delta(self, delta: Any) -> None:
        if delta.content:
            self.text.append(delta.content)
        if delta.refusal:
            self.refusal.append(delta.refusal)
        reasoning = _reasoning_field(delta)
        if reasoning:
            self.reasoning_field = self.reasoning_field or reasoning[0]
            self.reasoning.append(reasoning[1])
        for piece in delta.tool_calls or []:
            self._add_call_piece(piece)

    def _slot_for(self, piece: Any) -> _PendingCall:
        index = getattr(piece, "index", None)
        slot = self.open.get(index)
        if slot is None and index is None and self.calls and not _is_head(piece):
            slot = self.calls[-1]
        if slot is None or slot.starts_another(piece):
            slot = _PendingCall(index=index)
            self.calls.append(slot)
        self.open[index] = slot
        return slot

    def _add_call_piece(self, piece: Any) -> None:
        slot = self._slot_for(piece)
        if piece.id and not slot.id:
            slot.id = piece.id
        function = piece.function
        if function is None:
            return
        if function.name and not slot.name:
            slot.name = function.name
        if function.arguments:
            slot.arguments.append(function.arguments)

    def result(self, error: ProviderError | None = None) -> TurnResult:
        calls = [_call(c.id, c.name, c.text) for c in self.calls if c.name]
        nameless = [c for c in self.calls if not c.name and (c.id or c.text.strip())]
        if error is None and nameless:
            error = _nameless_call(nameless[0])
        return self.reply(
            calls,
            "error" if error else normalize_finish(self.finish, bool(calls)),
            error,
            refusal=none_if_empty("".join(self.refusal)),
            provider_data=_kept_reasoning(self.reasoning_field, "".join(self.reasoning)),
            status=200,
        )


def _is_head(piece: Any) -> bool:
    """Whether a call piece opens a call (it carries the call's id or its name)."""
    return bool(piece.id or (piece.function is not None and piece.function.name))


def _nameless_call(call: _PendingCall) -> ProviderError:
    """A streamed call that never got a name: the stream split one call's pieces over two
    indices (LibreChat's agents API did: docs/stream-shapes.md), so no call can be trusted whole."""
    which = f"id {call.id!r}" if call.id else f"index {call.index!r}"
    return ProviderError(
        message=f"a streamed tool call ({which}) has arguments or an id but never a name", kind="decode"
    )


def _encode_message(
    message: Any, m_index: int, ids: dict[tuple[int, int], str], tools: PreparedTools
) -> JsonObject:
    if isinstance(message, SystemMessage):
        return {"role": "system", "content": message.content}
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        out: JsonObject = {"role": "assistant", "content": message.content}
        kept = message.provider_data.get(OPENAI_CHAT) or {}
        field_name = kept_field(kept)
        if field_name is not None:
            out[field_name] = kept[field_name]
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": ids[(m_index, c_index)],
                    "type": "function",
                    "function": {
                        "name": tools.wire_name(call.name),
                        "arguments": call.raw_arguments
                        if call.raw_arguments is not None
                        else json.dumps(call.arguments),
                    },
                }
                for c_index, call in enumerate(message.tool_calls)
            ]
        return out
    assert isinstance(message, ToolResultMessage)
    return {"role": "tool", "tool_call_id": ids[(m_index, -1)], "content": message.content}


@cache
def _params_adapter(stream: bool) -> TypeAdapter[Any]:
    from openai.types.chat import completion_create_params as params

    typed = params.CompletionCreateParamsStreaming if stream else params.CompletionCreateParamsNonStreaming
    return TypeAdapter(typed)


class OpenAIChatWire(BodyDescribedRequests, Codec):
    name: WireName = OPENAI_CHAT
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/chat/completions/?(\?|$)"),)
    reasoning_state = REASONING_STATE
    stream_end = "a choice's finish_reason or [DONE]"

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        ids = wire_call_ids(request.messages)
        kwargs: JsonObject = {
            "model": request.model,
            "messages": [_encode_message(m, i, ids, tools) for i, m in enumerate(request.messages)],
            "stream": request.stream,
        }
        sent = tools.sent
        if sent:
            layout = self.tool_layout(tools.dialect, tools.strict)
            kwargs["tools"] = [layout.definition(t.name, t.description, t.parameters) for t in sent]
            choice = request.tool_choice
            kwargs["tool_choice"] = (
                {"type": "function", "function": {"name": tools.wire_name(choice.name)}}
                if isinstance(choice, ForceTool)
                else choice
            )
        if request.stream:
            kwargs["stream_options"] = {"include_usage": True}
        if request.max_output_tokens is not None:
            kwargs["max_completion_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            kwargs["temperature"] = request.temperature
        return kwargs

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        return ToolLayout(("function",), "parameters", strict, (("type", "function"),))

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        return listed_tools(kwargs)

    def validate_encoded(self, kwargs: JsonObject) -> None:
        validate_params(_params_adapter(bool(kwargs.get("stream"))), kwargs)

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.chat.completions.create(**kwargs)

    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        opened: Awaitable[Any] = client.chat.completions.create(**kwargs)
        return opened

    def accumulator(self) -> ChatStreamAccumulator:
        return ChatStreamAccumulator()

    def decode(self, response: Any) -> TurnResult:
        without_choice = _without_choice(response)
        if without_choice is not None:
            return without_choice
        choice = response.choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            # Azure's content filter answers a choice with its finish reason and no message.
            return TurnResult(
                finish_reason=normalize_finish(choice.finish_reason, False),
                raw_finish_reason=choice.finish_reason,
                usage=_usage(response.usage),
                response_id=response.id or None,
                model=response.model or None,
                status=200,
            )
        calls = _message_calls(message)
        reasoning = _reasoning_field(message)
        return TurnResult(
            text=none_if_empty(message.content),
            refusal=none_if_empty(getattr(message, "refusal", None)),
            reasoning=reasoning[1] if reasoning else None,
            provider_data=_kept_reasoning(*reasoning) if reasoning else {},
            tool_calls=calls,
            finish_reason=normalize_finish(choice.finish_reason, bool(calls)),
            raw_finish_reason=choice.finish_reason,
            usage=_usage(response.usage),
            response_id=response.id or None,
            model=response.model or None,
            status=200,
        )

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        import openai

        return stainless_error(exc, openai)

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "messages": [{"role": "user", "content": "replay"}]}

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        return rendering.render(result, model=model, stream=stream)


def _without_choice(response: Any) -> TurnResult | None:
    """What a body without a choice says: the error object in it (OpenRouter answers some
    failures in a 200 body), else that it is no chat completion. None when it has a choice."""
    choices = getattr(response, "choices", None)
    if isinstance(choices, list) and choices:
        return None
    extra = getattr(response, "model_extra", None) or {}
    if extra.get("error"):
        return TurnResult(error=_body_error(extra["error"]), status=200)
    what = "chat completion with a choice" if isinstance(choices, list) else "chat completion (no choices)"
    return TurnResult(error=not_the_wire(what), finish_reason="error")


def _message_calls(message: Any) -> list[ToolCall]:
    """A message's calls; the legacy `function_call` only when it has no `tool_calls`."""
    calls = [
        _call(tc.id, tc.function.name, tc.function.arguments)
        for tc in (message.tool_calls or [])
        if getattr(tc, "function", None) is not None and tc.function.name
    ]
    legacy = getattr(message, "function_call", None)
    if not calls and legacy is not None and legacy.name:
        calls = [_call(None, legacy.name, legacy.arguments)]
    return calls


def _body_error(body: Any) -> ProviderError:
    """An error object found in a 200 body (OpenRouter answers some failures this way)."""
    etype, message = error_fields(body)
    return ProviderError(status=200, type=etype, message=message or "error in response body", kind="http")


WIRE = OpenAIChatWire()
PLUGIN = WirePlugin(
    codec=WIRE,
    batch_api="xpeval.adapters.wires.batch.openai:API",
    acceptance=(
        AcceptanceMode("openai-chat", "openai"),
        AcceptanceMode("openai-chat-strict", "openai-strict", strict=True),
        AcceptanceMode("moonshot", "moonshot"),
    ),
)
"""The wire as `catalog.BUNDLED_WIRES` registers it; its acceptance modes are judged by the
checker's rule sets of the same names (`evals/acceptance/checker/rules/`)."""
