"""Anthropic's thinking blocks (docs/provider-loop-rules.md, "Anthropic").

With extended thinking and tools, the last assistant message (the one before the lastmost set of
`tool_use` / `tool_result` blocks) must start with the `thinking` / `redacted_thinking` blocks
it was answered with, unmodified: a missing first block, an edited or dropped block and a
signature that is not the block's own are three different 400s. Earlier assistant messages may
omit their thinking blocks.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult, WireName
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules import FOREIGN, Mutation, carried_state, made_signature, paired
from xpeval.adapters.wires.render._frames import json_response

ANTHROPIC_MESSAGES: WireName = "anthropic-messages"
"""The wire's name, which is also the key of its own entry in `provider_data`: what decode
keeps for a later turn, which encode sends back and render serves."""

THINKING = ("thinking", "redacted_thinking")
_COMPARED = ("type", "thinking", "signature", "data")
_MISSING = (
    "messages.{m}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the "
    "lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from "
    "previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
_MODIFIED = (
    "messages.{m}.content.{b}: `thinking` or `redacted_thinking` blocks in the latest assistant message "
    "cannot be modified. These blocks must remain as they were in the original response."
)
_SIGNATURE = "messages.{m}.content.{b}: Invalid `signature` in `thinking` block"
_PHRASES = (
    "Expected `thinking` or `redacted_thinking`",
    "blocks in the latest assistant message",
    "Invalid `signature`",
)


def _refusal(message: str) -> RenderedResponse:
    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_emulated",
    }
    return json_response(400, body)


def _blocks(message: JsonObject) -> list[JsonObject]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _same(sent: JsonObject, kept: JsonObject) -> bool:
    return all(sent.get(key) == kept.get(key) for key in _COMPARED)


def _thinking_refusal(m: int, blocks: list[JsonObject], kept: list[JsonObject]) -> str | None:
    """Why Anthropic refuses the last assistant message `blocks` (message `m`) that was answered
    with the thinking blocks `kept`; None when it starts with a thinking block and carries every
    kept one unmodified, in order (interleaved thinking keeps its place between the blocks)."""
    if not blocks or blocks[0].get("type") not in THINKING:
        return _MISSING.format(m=m, found=blocks[0].get("type") if blocks else "nothing")
    sent = [(b, block) for b, block in enumerate(blocks) if block.get("type") in THINKING]
    for n in range(max(len(sent), len(kept))):
        if n >= len(sent) or n >= len(kept):
            return _MODIFIED.format(m=m, b=sent[n][0] if n < len(sent) else len(blocks))
        b, block = sent[n]
        if _same(block, kept[n]):
            continue
        same_text = block.get("type") == kept[n].get("type") == "thinking" and (
            block.get("thinking") == kept[n].get("thinking")
        )
        return (_SIGNATURE if same_text else _MODIFIED).format(m=m, b=b)
    return None


class AnthropicThinkingBlocks:
    state = "thinking_blocks"
    mutations: tuple[Mutation, ...] = ("drop_state", "reorder_state", "foreign_signature", "drop_redacted")

    def with_state(self, result: TurnResult, conversation: str) -> TurnResult:
        thinking = [
            {
                "type": "thinking",
                "thinking": f"Which tools answer this ({conversation})?",
                "signature": made_signature(conversation, "thinking"),
            },
            {"type": "redacted_thinking", "data": made_signature(conversation, "redacted")},
        ]
        return result.model_copy(
            update={
                "reasoning": thinking[0]["thinking"],
                "provider_data": {**result.provider_data, ANTHROPIC_MESSAGES: {"thinking": thinking}},
            }
        )

    def check(self, served: Sequence[TurnResult], body: JsonObject, url: str) -> RenderedResponse | None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        for position, reply in paired(served, assistant):
            kept = (reply.provider_data.get(ANTHROPIC_MESSAGES) or {}).get("thinking") or []
            blocks = _blocks(messages[position])
            if not kept or not any(b.get("type") == "tool_use" for b in blocks):
                return None
            refusal = _thinking_refusal(position, blocks, kept)
            return _refusal(refusal) if refusal else None
        return None

    def mutate(self, mutation: Mutation, body: JsonObject) -> JsonObject:
        mutated = copy.deepcopy(body)
        for message in mutated.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "assistant":
                message["content"] = _mutated_blocks(mutation, _blocks(message))
        return mutated

    def refuses(self, error: ProviderError) -> bool:
        return carried_state(
            error,
            (
                "Expected `thinking` or `redacted_thinking`",
                "blocks in the latest assistant message",
                "`signature`",
            ),
        )


def _mutated_blocks(mutation: Mutation, blocks: list[JsonObject]) -> list[JsonObject]:
    thinking = [b for b in blocks if b.get("type") in THINKING]
    rest = [b for b in blocks if b.get("type") not in THINKING]
    if mutation == "drop_state":
        return rest
    if mutation == "reorder_state":
        return rest + thinking
    if mutation == "drop_redacted":
        return [b for b in blocks if b.get("type") != "redacted_thinking"]
    if mutation == "foreign_signature":
        for block in thinking:
            if "signature" in block:
                block["signature"] = made_signature(FOREIGN, "thinking")
    return blocks


RULES = AnthropicThinkingBlocks()
