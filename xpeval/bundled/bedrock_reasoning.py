"""Bedrock Converse's signed reasoning blocks (docs/provider-loop-rules.md, "Bedrock Converse"),
written against `xpeval.plugin` only.

Claude on Bedrock returns its extended thinking as `reasoningContent` blocks (`reasoningText`
with `text` and `signature`, or `redactedContent`) and Bedrock passes Anthropic's rule on: the
last assistant message before the lastmost `toolUse` / `toolResult` set must start with them,
unmodified. Its refusal is a `ValidationException` whose message quotes Anthropic's
("The model returned the following errors: ...").
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

from xpeval.plugin import (
    FOREIGN,
    JsonObject,
    Mutation,
    ProviderError,
    RenderedResponse,
    TurnResult,
    carried_state,
    json_response,
    made_signature,
    paired,
)

WIRE = "bedrock-converse"
REASONING = "reasoningContent"
_PREFIX = "The model returned the following errors: "
_FOUND = {"text": "text", "toolUse": "tool_use", "toolResult": "tool_result", "image": "image"}
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


def kept_reasoning(data: JsonObject) -> list[JsonObject]:
    """The reasoning blocks a decoded turn kept (`{"reasoningText": ...}` or
    `{"redactedContent": <base64>}`), in order."""
    kept = (data.get(WIRE) or {}).get("reasoning") or []
    return [block for block in kept if isinstance(block, dict)]


def _refusal(message: str) -> RenderedResponse:
    headers = {"x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    return json_response(400, {"message": _PREFIX + message}, headers)


def _found(block: JsonObject) -> str:
    return next((_FOUND.get(key, key) for key in block), "nothing")


def _reasoning_refusal(m: int, blocks: list[JsonObject], kept: list[JsonObject]) -> str | None:
    if not blocks or REASONING not in blocks[0]:
        return _MISSING.format(m=m, found=_found(blocks[0]) if blocks else "nothing")
    sent = []
    for block in blocks:
        if REASONING not in block:
            break
        sent.append(block[REASONING])
    for b in range(max(len(sent), len(kept))):
        if b >= len(sent) or b >= len(kept):
            return _MODIFIED.format(m=m, b=b)
        if sent[b] == kept[b]:
            continue
        text = (sent[b].get("reasoningText") or {}).get("text")
        same_text = text is not None and text == (kept[b].get("reasoningText") or {}).get("text")
        return (_SIGNATURE if same_text else _MODIFIED).format(m=m, b=b)
    return None


class BedrockReasoningBlocks:
    state = "reasoning_blocks"
    mutations: tuple[Mutation, ...] = ("drop_state", "reorder_state", "foreign_signature", "drop_redacted")

    def with_state(self, result: TurnResult, conversation: str) -> TurnResult:
        text = f"Which tools answer this ({conversation})?"
        reasoning = [
            {"reasoningText": {"text": text, "signature": made_signature(conversation, "reasoning")}},
            {"redactedContent": made_signature(conversation, "redacted")},
        ]
        data = {**result.provider_data, WIRE: {"reasoning": reasoning}}
        return result.model_copy(update={"reasoning": text, "provider_data": data})

    def check(self, served: Sequence[TurnResult], body: JsonObject, url: str) -> RenderedResponse | None:
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
        for position, reply in paired(served, assistant):
            kept = kept_reasoning(reply.provider_data)
            blocks = [b for b in messages[position].get("content") or [] if isinstance(b, dict)]
            if not kept or not any("toolUse" in b for b in blocks):
                return None
            refusal = _reasoning_refusal(position, blocks, kept)
            return _refusal(refusal) if refusal else None
        return None

    def mutate(self, mutation: Mutation, body: JsonObject) -> JsonObject:
        mutated = copy.deepcopy(body)
        for message in mutated.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "assistant":
                message["content"] = _mutated(mutation, [b for b in message.get("content") or []])
        return mutated

    def refuses(self, error: ProviderError) -> bool:
        return carried_state(error, _PHRASES)


def _mutated(mutation: Mutation, blocks: list[JsonObject]) -> list[JsonObject]:
    reasoning = [b for b in blocks if REASONING in b]
    rest = [b for b in blocks if REASONING not in b]
    if mutation == "drop_state":
        return rest
    if mutation == "reorder_state":
        return rest + reasoning
    if mutation == "drop_redacted":
        return [b for b in blocks if "redactedContent" not in (b.get(REASONING) or {})]
    if mutation == "foreign_signature":
        for block in reasoning:
            text = block[REASONING].get("reasoningText")
            if isinstance(text, dict) and "signature" in text:
                text["signature"] = made_signature(FOREIGN, "reasoning")
    return blocks


RULES = BedrockReasoningBlocks()
