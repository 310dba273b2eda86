"""`reasoning_content` on the OpenAI Chat family (docs/provider-loop-rules.md, "OpenAI Chat").

DeepSeek (thinking mode), Moonshot's Kimi and Xiaomi's MiMo return the model's reasoning in the
assistant message's `reasoning_content` and, with thinking on, refuse a request whose assistant
tool-call message lacks it: the field must be present and non-empty (its bytes are not
compared). Servers that name the field `reasoning` (OpenRouter, vLLM) get it back under that name.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult, WireName
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules import Mutation, carried_state, paired
from xpeval.adapters.wires.render._frames import json_response

OPENAI_CHAT: WireName = "openai-chat"
"""The wire's name, which is also the key of its own entry in `provider_data`: what decode
keeps for a later turn, which encode sends back and render serves."""

REASONING_FIELDS = ("reasoning_content", "reasoning")
"""The message fields a server returns its reasoning in, and takes it back in."""
_DEEPSEEK = (
    "Missing `reasoning_content` field in the assistant message at message index {index}. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
_MOONSHOT = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}"
)


def _refusal(url: str, index: int) -> RenderedResponse:
    if "moonshot" in url:
        return json_response(
            400, {"error": {"message": _MOONSHOT.format(index=index), "type": "invalid_request_error"}}
        )
    error = {
        "message": _DEEPSEEK.format(index=index),
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_request_error",
    }
    return json_response(400, {"error": error})


def kept_field(data: JsonObject) -> str | None:
    """The reasoning field a decoded reply kept (`provider_data[openai-chat]`), if any."""
    return next((name for name in REASONING_FIELDS if data.get(name)), None)


class ChatReasoningContent:
    state = "reasoning_content"
    mutations: tuple[Mutation, ...] = ("drop_state",)

    def with_state(self, result: TurnResult, conversation: str) -> TurnResult:
        reasoning = f"The user's request needs these tools ({conversation})."
        return result.model_copy(
            update={
                "reasoning": reasoning,
                "provider_data": {**result.provider_data, OPENAI_CHAT: {"reasoning_content": reasoning}},
            }
        )

    def check(self, served: Sequence[TurnResult], body: JsonObject, url: str) -> RenderedResponse | None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        for position, reply in paired(served, assistant):
            name = kept_field(reply.provider_data.get(OPENAI_CHAT) or {})
            if name is None or not messages[position].get("tool_calls"):
                continue
            sent = messages[position].get(name)
            if not isinstance(sent, str) or not sent.strip():
                return _refusal(url, position)
        return None

    def mutate(self, mutation: Mutation, body: JsonObject) -> JsonObject:
        mutated = copy.deepcopy(body)
        if mutation == "drop_state":
            for message in mutated.get("messages") or []:
                if isinstance(message, dict):
                    for name in REASONING_FIELDS:
                        message.pop(name, None)
        return mutated

    def refuses(self, error: ProviderError) -> bool:
        return carried_state(error, ("Missing `reasoning_content` field", "reasoning_content is missing"))


RULES = ChatReasoningContent()
