"""Anthropic Messages answers as the emulator serves them: a `message` of content blocks, or the
event stream `message_start`, block start/delta/stop events, `message_delta`, `message_stop`."""

from __future__ import annotations

import json

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult, Usage
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules.anthropic import ANTHROPIC_MESSAGES
from xpeval.adapters.wires.render._frames import (
    json_response,
    retry_after_header,
    sent_in_stream,
    sse_frame,
    sse_response,
    text_pieces,
)


def render(result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
    if result.error is not None:
        return _render_error(result.error, stream=stream)
    message = _message(result, model)
    if not stream:
        return json_response(200, message)
    return sse_response(_stream(message, result.usage or Usage()))


def _blocks(result: TurnResult) -> list[JsonObject]:
    """Content blocks: the thinking blocks a decode kept, the text, then the calls."""
    blocks: list[JsonObject] = list((result.provider_data.get(ANTHROPIC_MESSAGES) or {}).get("thinking", []))
    if result.text is not None:
        blocks.append({"type": "text", "text": result.text})
    blocks.extend(
        {
            "type": "tool_use",
            "id": call.id or f"toolu_emulated_{index}",
            "name": call.name,
            "input": call.arguments,
            "caller": {"type": "direct"},
        }
        for index, call in enumerate(result.tool_calls)
    )
    return blocks


def _message(result: TurnResult, model: str) -> JsonObject:
    usage = result.usage or Usage()
    return {
        "id": result.response_id or "msg_emulated",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(result),
        "stop_reason": result.raw_finish_reason or ("tool_use" if result.tool_calls else "end_turn"),
        "stop_sequence": None,
        "stop_details": None,
        "usage": {
            **_input_counts(usage),
            "cache_creation": {
                "ephemeral_5m_input_tokens": usage.cache_write_tokens or 0,
                "ephemeral_1h_input_tokens": 0,
            },
            "output_tokens": usage.output_tokens or 0,
            "service_tier": "standard",
            "inference_geo": "not_available",
        },
    }


def _input_counts(usage: Usage) -> JsonObject:
    """Anthropic's input counts: `input_tokens` are only those neither read from nor written to
    the prompt cache (the canonical count includes both)."""
    read, written = usage.cache_read_tokens or 0, usage.cache_write_tokens or 0
    return {
        "input_tokens": max(0, (usage.input_tokens or 0) - read - written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
    }


def _event(data: JsonObject) -> bytes:
    return sse_frame(data, data["type"])


def _stream(message: JsonObject, usage: Usage) -> list[bytes]:
    opening = {
        **message,
        "content": [],
        "stop_reason": None,
        # The API's opening count is 1 token; never more than the final count (the decoder keeps
        # the opening count when the final one is 0, so a 1 there would outlive a final 0).
        "usage": {**message["usage"], "output_tokens": min(1, usage.output_tokens or 0)},
    }
    frames = [_event({"type": "message_start", "message": opening}), _event({"type": "ping"})]
    for index, block in enumerate(message["content"]):
        frames.extend(_block_events(index, block))
    final_usage = {**_input_counts(usage), "output_tokens": usage.output_tokens or 0}
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None, "stop_details": None}
    frames.append(_event({"type": "message_delta", "delta": stop, "usage": final_usage}))
    frames.append(_event({"type": "message_stop"}))
    return frames


def _block_events(index: int, block: JsonObject) -> list[bytes]:
    start, deltas = _block_start_and_deltas(block)
    frames = [_event({"type": "content_block_start", "index": index, "content_block": start})]
    frames.extend(_event({"type": "content_block_delta", "index": index, "delta": delta}) for delta in deltas)
    frames.append(_event({"type": "content_block_stop", "index": index}))
    return frames


def _block_start_and_deltas(block: JsonObject) -> tuple[JsonObject, list[JsonObject]]:
    """How a block opens empty and then arrives in deltas (a block of another kind: whole)."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}, [
            {"type": "text_delta", "text": p} for p in text_pieces(block["text"])
        ]
    if block["type"] == "tool_use":
        raw = json.dumps(block["input"]) if block["input"] else ""
        return {**block, "input": {}}, [
            {"type": "input_json_delta", "partial_json": p} for p in text_pieces(raw)
        ]
    if block["type"] == "thinking":
        deltas: list[JsonObject] = [
            {"type": "thinking_delta", "thinking": p} for p in text_pieces(block.get("thinking", ""))
        ]
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    return block, []


def _render_error(error: ProviderError, *, stream: bool) -> RenderedResponse:
    body = {"type": "error", "error": {"type": error.type or "api_error", "message": error.message}}
    if sent_in_stream(error, stream=stream):
        return sse_response([sse_frame(body, "error")])
    return json_response(error.status or 500, body, retry_after_header(error))
