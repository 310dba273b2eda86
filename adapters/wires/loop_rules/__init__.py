"""What a provider requires back between turns: each wire's reasoning-state rules.

A provider that returns reasoning state (Gemini's thought signatures, Anthropic's thinking
blocks, Responses' reasoning items, the OpenAI Chat family's `reasoning_content`, Bedrock's
signed reasoning blocks) refuses a later request whose state was dropped, moved or altered.
A wire states those rules as a `ReasoningStateRules` (its codec's optional `reasoning_state`
member): the strict emulator asks it whether a request keeps the state it served, and answers
the provider's real error body when not; the conformance suite mutates requests with its
operators; an adapter tells the provider's refusal from any other 400 with it.
docs/provider-loop-rules.md holds each rule with its source.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Protocol, get_args

from xpeval.adapters.contract import JsonObject, ProviderError, TurnResult
from xpeval.adapters.wires._base import RenderedResponse

Mutation = Literal[
    "drop_state",
    "reorder_state",
    "move_signature",
    "strip_encrypted_content",
    "foreign_signature",
    "drop_redacted",
]
"""What a loop that mishandles reasoning state does to a request (docs/provider-loop-rules.md):
drops the state, reorders it, moves a signature to another parallel call, strips the encrypted
content, injects another conversation's signature, drops redacted thinking."""
MUTATIONS: tuple[Mutation, ...] = get_args(Mutation)

FOREIGN = "another conversation"
"""The conversation whose signature `foreign_signature` injects."""


class ReasoningStateRules(Protocol):
    """One wire's reasoning-state rules, over the request bodies its SDK sends (REST JSON)."""

    state: str
    """The capability it stands for (`xpeval.adapters.adapter.ReasoningState`)."""
    mutations: tuple[Mutation, ...]
    """The mutations that apply to this wire's state."""

    def with_state(self, result: TurnResult, conversation: str) -> TurnResult:
        """`result` as the provider returns it with its reasoning state (deterministic per
        `conversation`): what the emulator serves to a strict episode."""
        ...

    def check(self, served: Sequence[TurnResult], body: JsonObject, url: str) -> RenderedResponse | None:
        """The provider's refusal of `body` when it does not carry back the state of the replies
        `served` so far in this conversation, as the provider checks it; None when it does."""
        ...

    def mutate(self, mutation: Mutation, body: JsonObject) -> JsonObject:
        """`body` as a loop that commits `mutation` sends it (a copy; `body` is not changed)."""
        ...

    def refuses(self, error: ProviderError) -> bool:
        """Whether `error` is the provider refusing a request for its reasoning state."""
        ...


def rules_of(wire: Any) -> ReasoningStateRules | None:
    """The reasoning-state rules a wire's codec states, None when it has none."""
    rules = getattr(wire, "reasoning_state", None)
    return rules if rules is not None and hasattr(rules, "check") else None


def signature_bytes(value: Any) -> bytes | None:
    """A base64 signature as bytes, from either alphabet (standard or URL-safe), padded or not:
    providers compare signatures as bytes, so both spellings of the same bytes are one."""
    if isinstance(value, bytes):
        return value
    if not isinstance(value, str) or not value:
        return None
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def made_signature(conversation: str, what: str) -> str:
    """A deterministic signature (standard base64 of 48 bytes) for an emulated reply."""
    digest = hashlib.sha384(f"{conversation}\x00{what}".encode()).digest()
    return base64.b64encode(digest).decode()


def paired(served: Sequence[TurnResult], positions: Sequence[int]) -> Iterator[tuple[int, TurnResult]]:
    """Each assistant entry's position in a request paired with the reply it carries back: the
    last entry with the last reply served, and so on backwards (a request carries every earlier
    reply of its conversation, one entry each)."""
    return zip(reversed(positions), reversed(served), strict=False)


def carried_state(error: ProviderError, phrases: Sequence[str]) -> bool:
    """Whether a 4xx error's message holds one of the provider's reasoning-state phrases."""
    if error.status is not None and not 400 <= error.status < 500:
        return False
    message = error.message or ""
    return any(phrase in message for phrase in phrases)


__all__ = [
    "FOREIGN",
    "MUTATIONS",
    "Mutation",
    "ReasoningStateRules",
    "carried_state",
    "made_signature",
    "paired",
    "rules_of",
    "signature_bytes",
]
