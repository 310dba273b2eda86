"""OpenAI Chat Completions responses as the emulator serves them: a `chat.completion` body, or a
stream of `chat.completion.chunk` frames ending in a usage chunk and `[DONE]`."""

from __future__ import annotations

import json
import time

from xpeval.adapters.contract import JsonObject, ProviderError, ToolCall, TurnResult, Usage
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules.openai_chat import OPENAI_CHAT, kept_field
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
        return _render_failure(result, result.error, model=model, stream=stream)
    if not stream:
        return json_response(200, _completion(result, model))
    return sse_response(_stream(result, model, ended=True))


def _render_failure(
    result: TurnResult, error: ProviderError, *, model: str, stream: bool
) -> RenderedResponse:
    arrived = bool(result.text or result.tool_calls) or result.raw_finish_reason is not None
    if not (stream and sent_in_stream(error, stream=True) and arrived):
        return _render_error(error, stream=stream)
    # Content arrived before the error frame: send it, then the error (no usage chunk, no [DONE]).
    return sse_response([*_stream(result, model, ended=False), *_render_error(error, stream=True).chunks])


def _finish(result: TurnResult) -> str:
    if result.raw_finish_reason is not None:
        return result.raw_finish_reason
    return "tool_calls" if result.tool_calls else "stop"


def _raw_arguments(call: ToolCall) -> str:
    return call.raw_arguments if call.raw_arguments is not None else json.dumps(call.arguments)


def _calls(result: TurnResult) -> list[JsonObject]:
    return [
        {
            "id": call.id or "",
            "type": "function",
            "function": {"name": call.name, "arguments": _raw_arguments(call)},
        }
        for call in result.tool_calls
    ]


def _reasoning(result: TurnResult) -> JsonObject:
    """The reasoning a decode kept, under the field the server sent it in (`reasoning_content`)."""
    kept = result.provider_data.get(OPENAI_CHAT) or {}
    field_name = kept_field(kept)
    return {field_name: kept[field_name]} if field_name else {}


def _completion(result: TurnResult, model: str) -> JsonObject:
    message: JsonObject = {
        "role": "assistant",
        "content": result.text,
        "refusal": result.refusal,
        "annotations": [],
    }
    calls = _calls(result)
    if calls:
        message["tool_calls"] = calls
    message.update(_reasoning(result))
    return {
        "id": result.response_id or "chatcmpl-emulated",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(result)}],
        "usage": _usage(result.usage),
        "service_tier": "default",
        "system_fingerprint": None,
    }


class _Chunks:
    """Writes `chat.completion.chunk` frames that share one id, creation time and model."""

    def __init__(self, result: TurnResult, model: str) -> None:
        self.base: JsonObject = {
            "id": result.response_id or "chatcmpl-emulated",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "service_tier": "default",
            "system_fingerprint": None,
        }

    def chunk(self, delta: JsonObject, finish_reason: str | None = None) -> bytes:
        # Our requests always ask for include_usage, so every delta chunk carries `usage: null`;
        # `obfuscation` is the padding OpenAI adds to each chunk (its content is random).
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return sse_frame({**self.base, "choices": [choice], "usage": None, "obfuscation": "emulated"})

    def usage(self, usage: Usage | None) -> bytes:
        return sse_frame({**self.base, "choices": [], "usage": _usage(usage)})


def _stream(result: TurnResult, model: str, *, ended: bool) -> list[bytes]:
    """The frames of a streamed answer; `ended=False`: the ones sent before an error frame (the
    finish chunk only when a finish reason arrived, no usage chunk, no `[DONE]`)."""
    chunks = _Chunks(result, model)
    calls = _calls(result)
    opening = "" if result.text is None and not calls and not result.refusal else None
    frames = [chunks.chunk({"role": "assistant", "content": opening, "refusal": None})]
    for field_name, text in _reasoning(result).items():
        frames.extend(chunks.chunk({field_name: piece}) for piece in text_pieces(text))
    if result.text:
        frames.extend(chunks.chunk({"content": piece}) for piece in text_pieces(result.text))
    if result.refusal:
        frames.extend(chunks.chunk({"refusal": piece}) for piece in text_pieces(result.refusal))
    for index, call in enumerate(calls):
        frames.extend(_call_frames(chunks, index, call))
    if ended or result.raw_finish_reason is not None:
        frames.append(chunks.chunk({}, _finish(result)))
    if ended:
        frames.append(chunks.usage(result.usage))
        frames.append(b"data: [DONE]\n\n")
    return frames


def _call_frames(chunks: _Chunks, index: int, call: JsonObject) -> list[bytes]:
    """A call's head (id, name, empty arguments), then its argument text in pieces."""
    function = call["function"]
    head = {
        "index": index,
        "id": call["id"],
        "type": "function",
        "function": {"name": function["name"], "arguments": ""},
    }
    frames = [chunks.chunk({"tool_calls": [head]})]
    frames.extend(
        chunks.chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        for piece in text_pieces(function["arguments"])
    )
    return frames


def _usage(usage: Usage | None) -> JsonObject:
    prompt = (usage.input_tokens if usage else None) or 0
    completion = (usage.output_tokens if usage else None) or 0
    total = (usage.total_tokens if usage else None) or prompt + completion
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _render_error(error: ProviderError, *, stream: bool) -> RenderedResponse:
    body = {"error": {"message": error.message, "type": error.type, "param": None, "code": None}}
    if sent_in_stream(error, stream=stream):
        return sse_response([sse_frame(body)])
    return json_response(error.status or 500, body, retry_after_header(error))
