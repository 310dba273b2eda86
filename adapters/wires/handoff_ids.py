"""Tool-call ids for a conversation handed to another wire (issue 34, "Handoff").

A history written through one provider carries that provider's call ids; another provider takes
only ids of its own format (Anthropic and Bedrock `^[a-zA-Z0-9_-]+$`, at most 64; Mistral nine
alphanumerics; Gemini 3 eight characters; Responses `call_...`). `map_call_ids` rewrites every
call id of a conversation into the target's format with one map per conversation: a bijection
between the conversation's calls and the new ids, every result keeping its call's id, and the
source id of each new one recoverable (`CallIdMap.source`). A source id already in the target's
format and not yet taken is kept.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from xpeval.adapters.contract import AssistantMessage, Message, ToolResultMessage, WireName
from xpeval.adapters.wires._calls import wire_call_ids

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


@dataclass(frozen=True)
class CallIdFormat:
    """The call ids a wire takes back: which ones fit, and how a new one is spelt."""

    pattern: re.Pattern[str]
    prefix: str
    length: int
    """Characters after the prefix."""

    def fits(self, call_id: str | None) -> bool:
        return call_id is not None and self.pattern.fullmatch(call_id) is not None

    def make(self, seed: str) -> str:
        digest = hashlib.sha256(seed.encode()).digest()
        while len(digest) < self.length:
            digest += hashlib.sha256(digest).digest()
        return self.prefix + "".join(_ALNUM[b % len(_ALNUM)] for b in digest[: self.length])


_TOOLU = CallIdFormat(re.compile(r"[a-zA-Z0-9_-]{1,64}"), "toolu_", 24)
FORMATS: dict[WireName, CallIdFormat] = {
    "anthropic-messages": _TOOLU,
    "bedrock-converse": CallIdFormat(re.compile(r"[a-zA-Z0-9_-]{1,64}"), "tooluse_", 22),
    "mistral-chat": CallIdFormat(re.compile(r"[a-zA-Z0-9]{9}"), "", 9),
    "google-genai": CallIdFormat(re.compile(r"[a-zA-Z0-9]{8}"), "", 8),
    "openai-responses": CallIdFormat(re.compile(r"call_[a-zA-Z0-9]{1,59}"), "call_", 24),
    "openai-chat": CallIdFormat(re.compile(r"call_[a-zA-Z0-9_-]{1,35}"), "call_", 24),
}
"""Each wire's call-id format (docs/provider-loop-rules.md, "Handoff: call ids")."""


@dataclass
class CallIdMap:
    """One conversation's call ids: each new id and the source id it stands for (None when the
    source call had none)."""

    target_of: dict[tuple[int, int], str] = field(default_factory=dict)
    """(message index, call index) -> the new id; a result's key is (message index, -1)."""
    source_of: dict[str, str | None] = field(default_factory=dict)

    def source(self, new_id: str) -> str | None:
        """The source id `new_id` stands for (KeyError for an id this map did not make)."""
        return self.source_of[new_id]


def map_call_ids(messages: Sequence[Message], target: WireName) -> tuple[list[Message], CallIdMap]:
    """`messages` with every call id in `target`'s format and each result answering its call's
    new id; with the map that reverses it. A wire without a known format keeps every id."""
    fmt = FORMATS.get(target)
    linked = wire_call_ids(messages)  # each call's id, and the call each result answers
    mapping = CallIdMap()
    waiting: dict[str, deque[str]] = {}  # linked id -> new ids of its calls not yet answered
    out: list[Message] = []
    for m_index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = []
            for c_index, call in enumerate(message.tool_calls):
                new_id = _new_id(fmt, call.id, f"{m_index}:{c_index}:{call.id}", mapping.source_of)
                mapping.target_of[(m_index, c_index)] = new_id
                mapping.source_of[new_id] = call.id
                waiting.setdefault(linked[(m_index, c_index)], deque()).append(new_id)
                calls.append(call.model_copy(update={"id": new_id}))
            out.append(message.model_copy(update={"tool_calls": calls}))
        elif isinstance(message, ToolResultMessage):
            queue = waiting.get(linked[(m_index, -1)])
            if queue:  # the earliest unanswered call it answers; an orphan result keeps its id
                mapping.target_of[(m_index, -1)] = queue.popleft()
                message = message.model_copy(update={"tool_call_id": mapping.target_of[(m_index, -1)]})
            out.append(message)
        else:
            out.append(message)
    return out, mapping


def _new_id(fmt: CallIdFormat | None, source: str | None, seed: str, taken: dict[str, str | None]) -> str:
    if fmt is None:
        candidate = source or f"call_{seed}"
        return candidate if candidate not in taken else _new_id(None, None, seed + "'", taken)
    if fmt.fits(source) and source not in taken:
        assert source is not None
        return source
    candidate = fmt.make(seed)
    while candidate in taken:
        seed += "'"
        candidate = fmt.make(seed)
    return candidate


__all__ = ["FORMATS", "CallIdFormat", "CallIdMap", "map_call_ids"]
