"""Anthropic Messages (`POST /v1/messages`): content blocks, `tool_use` / `tool_result`."""

from __future__ import annotations

import re
from collections.abc import Awaitable
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
from xpeval.adapters.wires.loop_rules.anthropic import ANTHROPIC_MESSAGES
from xpeval.adapters.wires.loop_rules.anthropic import RULES as REASONING_STATE
from xpeval.adapters.wires.render import anthropic as rendering

WIRE_NAME: WireName = ANTHROPIC_MESSAGES
DEFAULT_MAX_TOKENS = 1024
"""Anthropic requires max_tokens; used when the request sets no limit."""

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "other",
}
_THINKING_BLOCKS = ("thinking", "redacted_thinking")


def normalize_finish(raw: str | None, has_calls: bool) -> FinishReason | None:
    if raw is None:
        return "tool_calls" if has_calls else None
    return _FINISH.get(raw, "other")


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return _tokens(
        getattr(usage, "input_tokens", None),
        getattr(usage, "cache_read_input_tokens", None),
        getattr(usage, "cache_creation_input_tokens", None),
        getattr(usage, "output_tokens", None),
    )


_COUNTS = (
    ("input_tokens", "input_tokens"),
    ("cache_read_tokens", "cache_read_input_tokens"),
    ("cache_write_tokens", "cache_creation_input_tokens"),
    ("output_tokens", "output_tokens"),
)
"""The stream accumulator's counts and the usage fields they are read from."""


def _tokens(uncached: int | None, read: int | None, written: int | None, output: int | None) -> Usage | None:
    """The canonical usage of Anthropic's counts: its `input_tokens` are only the tokens after the
    last cache breakpoint, so the input is those plus the cache reads and the cache writes."""
    if uncached is None and read is None and written is None and output is None:
        return None
    inputs = (
        None
        if uncached is None and read is None and written is None
        else (uncached or 0) + (read or 0) + (written or 0)
    )
    return Usage(
        input_tokens=inputs,
        output_tokens=output,
        total_tokens=(inputs or 0) + (output or 0),
        cache_read_tokens=read,
        cache_write_tokens=written,
    )


def _block_dict(block: Any) -> JsonObject:
    return block if isinstance(block, dict) else block.model_dump(mode="json", exclude_none=True)


def _decode_blocks(
    blocks: list[Any], raw_inputs: dict[int, str] | None = None
) -> tuple[str, str, list[ToolCall], list[JsonObject]]:
    text, reasoning, calls, thinking = [], [], [], []
    for index, block in enumerate(blocks):
        kind = getattr(block, "type", None)
        if kind == "text":
            text.append(block.text or "")
        elif kind in _THINKING_BLOCKS:
            reasoning.append(getattr(block, "thinking", "") or "")
            thinking.append(_block_dict(block))
        elif kind == "tool_use":
            raw = (raw_inputs or {}).get(index)
            if raw is not None:
                arguments, error = parse_arguments(raw)
                if error is None and not raw.strip():
                    arguments = block.input if isinstance(block.input, dict) else {}
            else:
                value = block.input
                arguments, error = (
                    (value, None) if isinstance(value, dict) else ({}, "tool input is not an object")
                )
            calls.append(
                ToolCall(
                    id=block.id or None,
                    name=block.name,
                    arguments=arguments,
                    raw_arguments=raw,
                    parse_error=error,
                )
            )
    return "".join(text), "".join(reasoning), calls, thinking


def _result(
    message_id: Any,
    model: Any,
    blocks: list[Any],
    stop_reason: str | None,
    usage: Usage | None,
    raw_inputs: dict[int, str] | None = None,
    error: ProviderError | None = None,
) -> TurnResult:
    text, reasoning, calls, thinking = _decode_blocks(blocks, raw_inputs)
    return TurnResult(
        text=none_if_empty(text),
        reasoning=none_if_empty(reasoning),
        tool_calls=calls,
        finish_reason="error" if error else normalize_finish(stop_reason, bool(calls)),
        raw_finish_reason=stop_reason,
        usage=usage,
        response_id=message_id or None,
        model=model or None,
        error=error,
        provider_data=_kept(thinking, blocks),
        status=200,
    )


def _kept(thinking: list[JsonObject], blocks: list[Any]) -> JsonObject:
    """What a turn keeps for the next: its thinking blocks and, when thinking came between other
    blocks (interleaved thinking), the blocks' order, which goes back unchanged."""
    if not thinking:
        return {}
    kinds = [getattr(b, "type", None) for b in blocks]
    order = [
        "thinking" if k in _THINKING_BLOCKS else k
        for k in kinds
        if k in (*_THINKING_BLOCKS, "text", "tool_use")
    ]
    first_other = next((i for i, k in enumerate(order) if k != "thinking"), len(order))
    if "thinking" in order[first_other:]:
        return {WIRE_NAME: {"thinking": thinking, "order": order}}
    return {WIRE_NAME: {"thinking": thinking}}


class AnthropicStreamAccumulator:
    """Reassembles raw message stream events; `input_json_delta` fragments become whole inputs."""

    def __init__(self) -> None:
        self.events = 0
        self.terminal = False
        """`message_stop` arrived: nothing else proves the stream is whole."""
        self.message_id: str | None = None
        self.model: str | None = None
        self.blocks: dict[int, Any] = {}
        self.text: dict[int, list[str]] = {}
        self.json: dict[int, list[str]] = {}
        self.signatures: dict[int, str] = {}
        self.stop_reason: str | None = None
        self.input_tokens: int | None = None
        self.cache_read_tokens: int | None = None
        self.cache_write_tokens: int | None = None
        self.output_tokens: int | None = None

    def add(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        self.events += 1
        if kind == "message_stop":
            self.terminal = True
        elif kind == "message_start":
            self._start(event.message)
        elif kind == "content_block_start":
            self.blocks[event.index] = event.content_block
        elif kind == "content_block_delta":
            self._add_delta(event.index, event.delta)
        elif kind == "message_delta":
            self._end(event)

    def _start(self, message: Any) -> None:
        self.message_id, self.model = message.id, message.model
        if message.usage is not None:
            self._count(message.usage, later=False)

    def _add_delta(self, index: int, delta: Any) -> None:
        dtype = getattr(delta, "type", None)
        if dtype == "text_delta":
            self.text.setdefault(index, []).append(delta.text)
        elif dtype == "thinking_delta":
            self.text.setdefault(index, []).append(delta.thinking)
        elif dtype == "input_json_delta":
            self.json.setdefault(index, []).append(delta.partial_json or "")
        elif dtype == "signature_delta":
            self.signatures[index] = delta.signature

    def _end(self, event: Any) -> None:
        if event.delta.stop_reason is not None:
            self.stop_reason = event.delta.stop_reason
        usage = getattr(event, "usage", None)
        if usage is not None:
            self._count(usage, later=True)

    def _count(self, usage: Any, *, later: bool) -> None:
        """The counts of `message_start`, then those `message_delta` has (a later count that is
        absent or zero keeps the earlier one)."""
        for ours, theirs in _COUNTS:
            value = getattr(usage, theirs, None)
            setattr(self, ours, (value or getattr(self, ours)) if later else value)

    def result(self, error: ProviderError | None = None) -> TurnResult:
        blocks = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            kind = getattr(block, "type", None)
            if kind == "text":
                block = block.model_copy(
                    update={"text": (block.text or "") + "".join(self.text.get(index, []))}
                )
            elif kind == "thinking":
                update: JsonObject = {"thinking": (block.thinking or "") + "".join(self.text.get(index, []))}
                if index in self.signatures:
                    update["signature"] = self.signatures[index]
                block = block.model_copy(update=update)
            blocks.append(block)
        raw_inputs = {}
        for position, index in enumerate(sorted(self.blocks)):
            if getattr(self.blocks[index], "type", None) == "tool_use" and index in self.json:
                raw_inputs[position] = "".join(self.json[index])
        usage = _tokens(
            self.input_tokens, self.cache_read_tokens, self.cache_write_tokens, self.output_tokens
        )
        return _result(self.message_id, self.model, blocks, self.stop_reason, usage, raw_inputs, error)


def _tool_input(call: ToolCall) -> JsonObject:
    return call.arguments


def _encode_messages(request: TurnRequest, tools: PreparedTools) -> tuple[str | None, list[JsonObject]]:
    ids = wire_call_ids(request.messages)
    system: list[str] = []
    out: list[JsonObject] = []

    def user_blocks() -> list[JsonObject]:
        # Anthropic wants every tool_result of a turn in the one user message after it.
        if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
            return out[-1]["content"]  # type: ignore[no-any-return,unused-ignore]
        out.append({"role": "user", "content": []})
        return out[-1]["content"]  # type: ignore[no-any-return,unused-ignore]

    for m_index, message in enumerate(request.messages):
        if isinstance(message, SystemMessage):
            system.append(message.content)
        elif isinstance(message, UserMessage):
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append({"type": "text", "text": message.content})
            else:
                out.append({"role": "user", "content": message.content})
        elif isinstance(message, AssistantMessage):
            uses = [
                {
                    "type": "tool_use",
                    "id": ids[(m_index, c_index)],
                    "name": tools.wire_name(call.name),
                    "input": _tool_input(call),
                }
                for c_index, call in enumerate(message.tool_calls)
            ]
            blocks = _assistant_blocks(message, uses)
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        elif isinstance(message, ToolResultMessage):
            block: JsonObject = {
                "type": "tool_result",
                "tool_use_id": ids[(m_index, -1)],
                "content": message.content,
            }
            if message.is_error:
                block["is_error"] = True
            user_blocks().append(block)
    return ("\n\n".join(system) if system else None), out


def _assistant_blocks(message: AssistantMessage, uses: list[JsonObject]) -> list[JsonObject]:
    """An assistant turn's blocks: its thinking blocks first, or in the order they came when
    thinking was interleaved (the last assistant turn must carry them unmodified)."""
    own = message.provider_data.get(WIRE_NAME) or {}
    thinking: list[JsonObject] = list(own.get("thinking") or [])
    text = [{"type": "text", "text": message.content}] if message.content else []
    pending = {"thinking": thinking, "text": text, "tool_use": list(uses)}
    blocks = [pending[kind].pop(0) for kind in own.get("order") or [] if pending.get(kind)]
    return blocks + pending["thinking"] + pending["text"] + pending["tool_use"]


@cache
def _params_adapter(stream: bool) -> TypeAdapter[Any]:
    from anthropic.types import message_create_params as params

    typed = params.MessageCreateParamsStreaming if stream else params.MessageCreateParamsNonStreaming
    return TypeAdapter(typed)


class AnthropicMessagesWire(BodyDescribedRequests, Codec):
    name: WireName = WIRE_NAME
    request_paths: tuple[re.Pattern[str], ...] = (re.compile(r"/messages/?(\?|$)"),)
    reasoning_state = REASONING_STATE
    stream_end = "message_stop"

    def encode(self, request: TurnRequest, tools: PreparedTools) -> JsonObject:
        system, messages = _encode_messages(request, tools)
        kwargs: JsonObject = {
            "model": request.model,
            "max_tokens": request.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": messages,
            "stream": request.stream,
        }
        if system is not None:
            kwargs["system"] = system
        sent = tools.sent
        if sent:
            layout = self.tool_layout(tools.dialect, tools.strict)
            kwargs["tools"] = [layout.definition(t.name, t.description, t.parameters) for t in sent]
            choice = request.tool_choice
            if isinstance(choice, ForceTool):
                kwargs["tool_choice"] = {"type": "tool", "name": tools.wire_name(choice.name)}
            else:
                kwargs["tool_choice"] = {"type": {"auto": "auto", "none": "none", "required": "any"}[choice]}
        if request.temperature is not None:
            # messages.create() takes no `temperature` keyword in this SDK line; the API does.
            kwargs["extra_body"] = {"temperature": request.temperature}
        return kwargs

    def tool_layout(self, dialect: str, strict: bool | None) -> ToolLayout:
        # `strict` is sent only to turn strict tool use on.
        return ToolLayout((), "input_schema", True if strict else None)

    def tool_definitions(self, kwargs: JsonObject) -> list[JsonObject]:
        return listed_tools(kwargs)

    def validate_encoded(self, kwargs: JsonObject) -> None:
        body = {k: v for k, v in kwargs.items() if k != "extra_body"}
        validate_params(_params_adapter(bool(kwargs.get("stream"))), body)

    async def call(self, client: Any, kwargs: JsonObject) -> Any:
        return await client.messages.create(**kwargs)

    def open_stream(self, client: Any, kwargs: JsonObject) -> Awaitable[Any]:
        opened: Awaitable[Any] = client.messages.create(**kwargs)
        return opened

    def accumulator(self) -> AnthropicStreamAccumulator:
        return AnthropicStreamAccumulator()

    def decode(self, response: Any) -> TurnResult:
        if not isinstance(getattr(response, "content", None), list):
            return TurnResult(error=not_the_wire("Messages response (no content)"), finish_reason="error")
        return _result(
            response.id,
            response.model,
            list(response.content or []),
            response.stop_reason,
            _usage(response.usage),
        )

    def error_from_exception(self, exc: BaseException) -> ProviderError:
        import anthropic

        return stainless_error(exc, anthropic)

    def minimal_request(self, model: str) -> JsonObject:
        return {"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": "replay"}]}

    def render(self, result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
        return rendering.render(result, model=model, stream=stream)


WIRE = AnthropicMessagesWire()
PLUGIN = WirePlugin(
    codec=WIRE,
    batch_api="xpeval.adapters.wires.batch.anthropic:API",
    acceptance=(
        AcceptanceMode("anthropic", "anthropic"),
        AcceptanceMode("anthropic-strict", "anthropic-strict", strict=True),
    ),
)
"""The wire as `catalog.BUNDLED_WIRES` registers it; its acceptance modes are judged by the
checker's rule sets of the same names (`evals/acceptance/checker/rules/`)."""
