"""OpenAI Responses answers as the emulator serves them: a `response` object, or its stream of
typed, numbered events ending in `response.completed` (or `response.incomplete`)."""

from __future__ import annotations

import json
import time

from xpeval.adapters.contract import JsonObject, ProviderError, ToolCall, TurnResult, Usage
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules.openai_responses import OPENAI_RESPONSES
from xpeval.adapters.wires.render._frames import (
    json_response,
    retry_after_header,
    sent_in_stream,
    sse_frame,
    sse_response,
    text_pieces,
)

_TERMINAL = {"completed": "response.completed", "incomplete": "response.incomplete"}


def render(result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
    if result.error is not None:
        return _render_error(result.error, stream=stream)
    response = _response(result, model)
    if not stream:
        return json_response(200, response)
    return sse_response(_events(response))


def _message(result: TurnResult, message_id: str = "msg_emulated_0") -> JsonObject | None:
    content: list[JsonObject] = []
    if result.text is not None:
        content.append({"type": "output_text", "text": result.text, "annotations": [], "logprobs": []})
    if result.refusal is not None:
        content.append({"type": "refusal", "refusal": result.refusal})
    if not content:
        return None
    return {
        "id": message_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": content,
    }


def _function_call(index: int, call: ToolCall) -> JsonObject:
    return {
        "id": call.provider_data.get("item_id") or f"fc_emulated_{index}",
        "type": "function_call",
        "status": "completed",
        "call_id": call.id or f"call_emulated_{index}",
        "name": call.name,
        "arguments": call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments),
    }


def _output(result: TurnResult) -> list[JsonObject]:
    """Output items: the reasoning items a decode kept, the message, then the calls; in the
    output order the decode kept, when it kept one."""
    own = result.provider_data.get(OPENAI_RESPONSES) or {}
    order = [ref for ref in own.get("output") or [] if isinstance(ref, dict)]
    message_id = next((ref.get("id") for ref in order if ref.get("type") == "message"), None)
    output: list[JsonObject] = list(own.get("reasoning", []))
    message = _message(result, message_id or "msg_emulated_0")
    if message is not None:
        output.append(message)
    output.extend(_function_call(index, call) for index, call in enumerate(result.tool_calls))
    by_id = {item["id"]: item for item in output if item.get("id")}
    ordered = [by_id.pop(ref.get("id")) for ref in order if ref.get("id") in by_id]
    return ordered + [item for item in output if all(item is not placed for placed in ordered)]


def _usage(usage: Usage | None) -> JsonObject:
    usage = usage or Usage()
    return {
        "input_tokens": usage.input_tokens or 0,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.output_tokens or 0,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens or (usage.input_tokens or 0) + (usage.output_tokens or 0),
    }


def _response(result: TurnResult, model: str) -> JsonObject:
    now = int(time.time())
    status = result.raw_finish_reason or "completed"
    return {
        "id": result.response_id or "resp_emulated",
        "object": "response",
        "created_at": now,
        "status": status,
        "background": False,
        "completed_at": now if status == "completed" else None,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "metadata": {},
        "model": model,
        "output": _output(result),
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
        "usage": _usage(result.usage),
        "user": None,
    }


def _events(response: JsonObject) -> list[bytes]:
    """The stream of `response`: opening events, each output item's events, the terminal event."""
    opening = {**response, "status": "in_progress", "output": [], "usage": None, "completed_at": None}
    events: list[JsonObject] = [
        {"type": "response.created", "response": opening},
        {"type": "response.in_progress", "response": opening},
    ]
    for index, item in enumerate(response["output"]):
        events.extend(_item_events(index, item))
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": _TERMINAL.get(response["status"], "response.completed"), "response": response})
    # Every event carries its place in the stream.
    return [
        sse_frame({**event, "sequence_number": number}, event["type"]) for number, event in enumerate(events)
    ]


def _item_events(index: int, item: JsonObject) -> list[JsonObject]:
    """The events that stream one output item, up to (not including) its `output_item.done`."""
    if item["type"] == "message":
        added = {**item, "status": "in_progress", "content": []}
        parts = [
            event
            for content_index, part in enumerate(item["content"])
            for event in _part_events(item["id"], index, content_index, part)
        ]
        return [_added(index, added), *parts]
    if item["type"] == "function_call":
        return [
            _added(index, {**item, "status": "in_progress", "arguments": ""}),
            *_argument_events(index, item),
        ]
    return [_added(index, item)]


def _added(index: int, item: JsonObject) -> JsonObject:
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def _argument_events(index: int, item: JsonObject) -> list[JsonObject]:
    where = {"item_id": item["id"], "output_index": index}
    events: list[JsonObject] = [
        {"type": "response.function_call_arguments.delta", **where, "delta": piece, "obfuscation": "emulated"}
        for piece in text_pieces(item["arguments"])
    ]
    events.append({"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]})
    return events


def _part_events(item_id: str, index: int, content_index: int, part: JsonObject) -> list[JsonObject]:
    """The events that stream one content part (output text or a refusal) of a message."""
    refusal = part["type"] == "refusal"
    field_name, kind = ("refusal", "response.refusal") if refusal else ("text", "response.output_text")
    value = part[field_name]
    empty = {**part, field_name: ""}
    where = {"item_id": item_id, "output_index": index, "content_index": content_index}
    extra: JsonObject = {} if refusal else {"logprobs": []}
    padding: JsonObject = {} if refusal else {"obfuscation": "emulated"}
    events: list[JsonObject] = [{"type": "response.content_part.added", **where, "part": empty}]
    events += [
        {"type": f"{kind}.delta", **where, "delta": piece, **extra, **padding} for piece in text_pieces(value)
    ]
    events.append({"type": f"{kind}.done", **where, field_name: value, **extra})
    events.append({"type": "response.content_part.done", **where, "part": part})
    return events


def _render_error(error: ProviderError, *, stream: bool) -> RenderedResponse:
    if sent_in_stream(error, stream=stream):
        event = {
            "type": "error",
            "code": error.type,
            "message": error.message,
            "param": None,
            "sequence_number": 0,
        }
        return sse_response([sse_frame(event, "error")])
    body = {"error": {"message": error.message, "type": error.type, "param": None, "code": None}}
    return json_response(error.status or 500, body, retry_after_header(error))
