"""Gemini answers as the emulator serves them: one `GenerateContentResponse`, or (`alt=sse`) a
stream of them, text in pieces and whole function calls, the last carrying the finish reason
and the usage."""

from __future__ import annotations

import json

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult, Usage
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules.google import GOOGLE_GENAI
from xpeval.adapters.wires.render._frames import json_response, retry_after_header, sse_response

_STATUS_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_PIECE = 16
"""Characters of text per streamed chunk."""


def render(result: TurnResult, *, model: str, stream: bool) -> RenderedResponse:
    if result.error is not None:
        return _render_error(result.error)
    chunks = _Chunks(result, model)
    parts = _parts(result)
    if not stream:
        return json_response(200, chunks.chunk(parts, last=True))
    pieces = [*_text_pieces(result), *(part for part in parts if "functionCall" in part)]
    frames = [_sse(chunks.chunk([piece], last=i == len(pieces) - 1)) for i, piece in enumerate(pieces)]
    return sse_response(frames or [_sse(chunks.chunk([{"text": ""}], last=True))])


def _text_signature(result: TurnResult) -> str | None:
    signature: str | None = (result.provider_data.get(GOOGLE_GENAI) or {}).get("text_thought_signature")
    return signature


def _parts(result: TurnResult) -> list[JsonObject]:
    """The whole answer's parts: the text (with its thought signature), then each call."""
    parts: list[JsonObject] = []
    if result.text is not None:
        part: JsonObject = {"text": result.text}
        signature = _text_signature(result)
        if signature:
            part["thoughtSignature"] = signature
        parts.append(part)
    for call in result.tool_calls:
        function_call: JsonObject = {"name": call.name, "args": call.arguments}
        if call.id:
            function_call["id"] = call.id
        part = {"functionCall": function_call}
        if call.provider_data.get("thought_signature"):
            part["thoughtSignature"] = call.provider_data["thought_signature"]
        parts.append(part)
    return parts


def _text_pieces(result: TurnResult) -> list[JsonObject]:
    """The text in streamed pieces; the first carries the thought signature."""
    if not result.text:
        return []
    signature = _text_signature(result)
    pieces: list[JsonObject] = []
    for start in range(0, len(result.text), _PIECE):
        piece: JsonObject = {"text": result.text[start : start + _PIECE]}
        if start == 0 and signature:
            piece["thoughtSignature"] = signature
        pieces.append(piece)
    return pieces


class _Chunks:
    """Builds `GenerateContentResponse` chunks of one answer; the last carries its finish reason
    and usage metadata."""

    def __init__(self, result: TurnResult, model: str) -> None:
        usage = result.usage or Usage()
        prompt, output = usage.input_tokens or 0, usage.output_tokens or 0
        self.meta = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": usage.total_tokens or prompt + output,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
            "serviceTier": "standard",
        }
        self.finish = result.raw_finish_reason or "STOP"
        self.base = {"modelVersion": model, "responseId": result.response_id or "emulated-response"}

    def chunk(self, parts: list[JsonObject], *, last: bool) -> JsonObject:
        candidate: JsonObject = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if last:
            candidate["finishReason"] = self.finish
        body: JsonObject = {"candidates": [candidate]}
        if last:
            body["usageMetadata"] = self.meta
        return {**body, **self.base}


def _sse(body: JsonObject) -> bytes:
    # Gemini frames its stream with CRLF line endings.
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\r\n\r\n"


def _render_error(error: ProviderError) -> RenderedResponse:
    code = error.status or 500
    body = {
        "error": {
            "code": code,
            "message": error.message,
            "status": error.type or _STATUS_CODES.get(code, "UNKNOWN"),
        }
    }
    if error.kind == "stream":
        return sse_response([_sse(body)])
    return json_response(code, body, retry_after_header(error))
