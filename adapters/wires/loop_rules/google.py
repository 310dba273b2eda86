"""Gemini's thought signatures (docs/provider-loop-rules.md, "Gemini").

A thinking Gemini model returns `thoughtSignature` on the first `functionCall` part of a turn
(with parallel calls only the first part carries one) and refuses a request of the same user
turn whose function-call part lost it ("missing") or carries other bytes ("Corrupted"); the
signature is compared as bytes, so standard and URL-safe base64 of the same bytes are one.
Earlier user turns are not validated. Gemini 3 also returns 8-character `functionCall` ids.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult, WireName
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules import (
    FOREIGN,
    Mutation,
    carried_state,
    made_signature,
    paired,
    signature_bytes,
)
from xpeval.adapters.wires.render._frames import json_response

GOOGLE_GENAI: WireName = "google-genai"
"""The wire's name, which is also the key of its own entry in `provider_data`: what decode
keeps for a later turn, which encode sends back and render serves."""

SIGNATURE = "thought_signature"
"""Where a decoded call keeps its signature (`ToolCall.provider_data`)."""
_MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to "
    "work correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
    "function call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)

_CORRUPTED = "Corrupted thought signature."


def _refusal(message: str) -> RenderedResponse:
    return json_response(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})


def _call_parts(content: JsonObject) -> list[JsonObject]:
    return [p for p in content.get("parts") or [] if isinstance(p, dict) and "functionCall" in p]


def _current_turn_start(contents: list[JsonObject]) -> int:
    """Where the current user turn starts: after the last user content that is not only function
    responses (signatures of earlier turns are not validated)."""
    start = 0
    for index, content in enumerate(contents):
        parts = content.get("parts") or []
        if content.get("role") == "user" and any(
            isinstance(p, dict) and "functionResponse" not in p for p in parts
        ):
            start = index + 1
    return start


def _part_refusal(part: JsonObject | None, expected: bytes, position: int) -> RenderedResponse | None:
    if part is None:
        return None
    sent = part.get("thoughtSignature")
    if not sent:
        name = (part.get("functionCall") or {}).get("name", "")
        return _refusal(_MISSING.format(name=name, position=position))
    return None if signature_bytes(sent) == expected else _refusal(_CORRUPTED)


class GeminiThoughtSignatures:
    state = "thought_signatures"
    mutations: tuple[Mutation, ...] = ("drop_state", "reorder_state", "move_signature", "foreign_signature")

    def with_state(self, result: TurnResult, conversation: str) -> TurnResult:
        calls = []
        for index, call in enumerate(result.tool_calls):
            short_id = hashlib.sha256(f"{conversation}:{call.id}:{index}".encode()).hexdigest()[:8]
            data = dict(call.provider_data)
            if index == 0:
                data[SIGNATURE] = made_signature(conversation, f"call:{short_id}")
            calls.append(call.model_copy(update={"id": short_id, "provider_data": data}))
        return result.model_copy(update={"tool_calls": calls})

    def check(self, served: Sequence[TurnResult], body: JsonObject, url: str) -> RenderedResponse | None:
        contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
        start = _current_turn_start(contents)
        model = [i for i, c in enumerate(contents) if c.get("role") == "model"]
        for position, reply in paired(served, model):
            if position < start:
                continue
            parts = _call_parts(contents[position])
            for index, call in enumerate(reply.tool_calls):
                expected = signature_bytes(call.provider_data.get(SIGNATURE))
                if expected is None:
                    continue
                part = parts[index] if index < len(parts) else None
                refusal = _part_refusal(part, expected, position + 1)
                if refusal is not None:
                    return refusal
        return None

    def mutate(self, mutation: Mutation, body: JsonObject) -> JsonObject:
        mutated = copy.deepcopy(body)
        for content in mutated.get("contents") or []:
            if isinstance(content, dict) and content.get("role") == "model":
                _mutate_parts(mutation, content)
        return mutated

    def refuses(self, error: ProviderError) -> bool:
        return carried_state(error, ("missing a thought_signature", _CORRUPTED))


def _mutate_parts(mutation: Mutation, content: JsonObject) -> None:
    calls = _call_parts(content)
    if mutation == "drop_state":
        for part in content.get("parts") or []:
            part.pop("thoughtSignature", None)
    elif mutation == "reorder_state" and len(calls) > 1:
        others = [p for p in content["parts"] if p not in calls]
        content["parts"] = others + calls[::-1]
    elif mutation == "move_signature" and len(calls) > 1 and "thoughtSignature" in calls[0]:
        calls[1]["thoughtSignature"] = calls[0].pop("thoughtSignature")
    elif mutation == "foreign_signature":
        for part in calls:
            if "thoughtSignature" in part:
                part["thoughtSignature"] = made_signature(FOREIGN, "call")


RULES = GeminiThoughtSignatures()
