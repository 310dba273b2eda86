"""OpenAI Responses' reasoning items (docs/provider-loop-rules.md, "OpenAI Responses").

With `store: false` a reasoning model's reasoning items come back with `encrypted_content` and
must be sent back whole, each followed by the item it produced, matched by id (`fc_...` for a
function call, which may also go back by its `call_id` alone; `msg_...` for a message: a final
answer's reasoning item sent back before an assistant message without its id is refused). An
item sent by id without its reasoning item, a reasoning item without its encrypted content (the
server looks it up, and nothing was stored) and encrypted content that is not the item's own
are refused too.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Sequence
from typing import Any

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult, WireName
from xpeval.adapters.wires._base import RenderedResponse
from xpeval.adapters.wires.loop_rules import FOREIGN, Mutation, carried_state, made_signature
from xpeval.adapters.wires.render._frames import json_response

OPENAI_RESPONSES: WireName = "openai-responses"
"""The wire's name, which is also the key of its own entry in `provider_data`: what decode
keeps for a later turn, which encode sends back and render serves."""

_WITHOUT_FOLLOWING = "Item '{id}' of type 'reasoning' was provided without its required following item."
_WITHOUT_REASONING = (
    "Item '{id}' of type '{type}' was provided without its required 'reasoning' item: '{rs}'."
)
_NOT_STORED = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with "
    "`store` set to true, or remove this item from your input."
)

_NOT_VERIFIED = "The encrypted content {shown} could not be verified."


def _refusal(message: str, *, status: int = 400, code: str | None = None) -> RenderedResponse:
    error = {"message": message, "type": "invalid_request_error", "param": "input", "code": code}
    return json_response(status, {"error": error})


def _shown(content: str) -> str:
    """Encrypted content as OpenAI's message quotes it: its head and tail."""
    return f"{content[:4]}...{content[-4:]}"


def _encrypted_refusal(sent: JsonObject, kept: JsonObject) -> RenderedResponse | None:
    content = kept.get("encrypted_content")
    if not content:
        return None
    if not sent.get("encrypted_content"):
        return _refusal(_NOT_STORED.format(id=kept.get("id")), status=404)
    if sent["encrypted_content"] != content:
        shown = _shown(str(sent["encrypted_content"]))
        return _refusal(_NOT_VERIFIED.format(shown=shown), code="invalid_encrypted_content")
    return None


def _reply_refusal(reply: TurnResult, items: list[JsonObject]) -> RenderedResponse | None:
    own = reply.provider_data.get(OPENAI_RESPONSES) or {}
    refs = [r for r in own.get("output") or [] if isinstance(r, dict)]
    kept = {r.get("id"): r for r in own.get("reasoning") or [] if isinstance(r, dict)}
    where = {item.get("id"): index for index, item in enumerate(items) if item.get("id")}
    for n, ref in enumerate(refs):
        if ref.get("type") == "reasoning":
            produced = refs[n + 1] if n + 1 < len(refs) else None
            refusal = _item_refusal(ref, produced, kept.get(ref.get("id")) or {}, items, where)
            if refusal is not None:
                return refusal
    return None


def _item_refusal(
    ref: JsonObject,
    produced: JsonObject | None,
    kept: JsonObject,
    items: list[JsonObject],
    where: dict[Any, int],
) -> RenderedResponse | None:
    """The refusal of one reasoning item (`ref`) of a served reply, as the request sends it."""
    at = where.get(ref.get("id"))
    if at is None:
        if produced is not None and produced.get("id") in where:
            return _refusal(_WITHOUT_REASONING.format(id=produced["id"], type=produced["type"], rs=ref["id"]))
        return None
    refusal = _encrypted_refusal(items[at], kept)
    if refusal is not None:
        return refusal
    follower = items[at + 1] if at + 1 < len(items) else {}
    if produced is None or not _follows(follower, produced):
        return _refusal(_WITHOUT_FOLLOWING.format(id=ref.get("id")))
    return None


def _follows(item: JsonObject, produced: JsonObject) -> bool:
    """Whether `item` is the one its reasoning item produced: by its id, or a function call by
    its `call_id` (a recorded request sending the call without its `fc_` id was accepted; a
    message without its `msg_` id is refused)."""
    if item.get("id"):
        return bool(item["id"] == produced.get("id"))
    return (
        item.get("type") == "function_call"
        and bool(item.get("call_id"))
        and (item.get("call_id") == produced.get("call_id"))
    )


class ResponsesReasoningItems:
    state = "reasoning_items"
    mutations: tuple[Mutation, ...] = (
        "drop_state",
        "reorder_state",
        "strip_encrypted_content",
        "foreign_signature",
    )

    def with_state(self, result: TurnResult, conversation: str) -> TurnResult:
        tag = hashlib.sha256(f"{conversation}:{result.text}:{len(result.tool_calls)}".encode()).hexdigest()[
            :24
        ]
        reasoning = {
            "id": f"rs_{tag}",
            "type": "reasoning",
            "summary": [],
            "encrypted_content": "gAAAAA" + made_signature(conversation, tag),
        }
        refs: list[JsonObject] = [{"type": "reasoning", "id": reasoning["id"]}]
        if result.text is not None or result.refusal is not None:
            refs.append({"type": "message", "id": f"msg_{tag}"})
        calls = []
        for index, call in enumerate(result.tool_calls):
            item_id = f"fc_{tag}_{index}"
            refs.append({"type": "function_call", "id": item_id, "call_id": call.id})
            calls.append(
                call.model_copy(update={"provider_data": {**call.provider_data, "item_id": item_id}})
            )
        own = {"reasoning": [reasoning], "output": refs}
        return result.model_copy(
            update={"tool_calls": calls, "provider_data": {**result.provider_data, OPENAI_RESPONSES: own}}
        )

    def check(self, served: Sequence[TurnResult], body: JsonObject, url: str) -> RenderedResponse | None:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        for reply in served:
            refusal = _reply_refusal(reply, items)
            if refusal is not None:
                return refusal
        return None

    def mutate(self, mutation: Mutation, body: JsonObject) -> JsonObject:
        mutated = copy.deepcopy(body)
        items = [i for i in mutated.get("input") or [] if isinstance(i, dict)]
        reasoning = [i for i in items if i.get("type") == "reasoning"]
        if mutation == "drop_state":
            mutated["input"] = [i for i in items if i.get("type") != "reasoning"]
        elif mutation == "reorder_state":
            for item in reasoning:
                at = items.index(item)
                if at + 1 < len(items):
                    items[at], items[at + 1] = items[at + 1], items[at]
            mutated["input"] = items
        elif mutation == "strip_encrypted_content":
            for item in reasoning:
                item.pop("encrypted_content", None)
        elif mutation == "foreign_signature":
            for item in reasoning:
                if "encrypted_content" in item:
                    item["encrypted_content"] = "gAAAAA" + made_signature(FOREIGN, "reasoning")
        return mutated

    def refuses(self, error: ProviderError) -> bool:
        return carried_state(
            error,
            (
                "of type 'reasoning' was provided without its required following item",
                "without its required 'reasoning' item",
                "Items are not persisted when `store` is set to false",
                "could not be verified",
            ),
        )


RULES = ResponsesReasoningItems()
