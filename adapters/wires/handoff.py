"""A conversation written through one adapter, converted for another (issue 34, "Handoff").

`hand_off(messages, source, target)` returns the history the target is sent: every call id in
the target's format (`handoff_ids.map_call_ids`, one reversible map per conversation), and each
piece of reasoning state kept, converted or dropped as the target's provider requires, each
decision a `HandoffDecision` naming its rule (`HANDOFF_RULES`, with their sources in
docs/provider-loop-rules.md, "Handoff"). A history no conversion makes acceptable carries an
`impossible` decision naming the rule; it is a value, never an exception.

The target is judged as the strict emulator plays it: with reasoning on. State signed or
encrypted by a provider is bound to the provider (and model, project or organisation) that
issued it, so it survives only when both sides speak the same wire to the same provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from xpeval.adapters.contract import (
    AssistantMessage,
    JsonObject,
    Message,
    ToolCall,
    ToolResultMessage,
    TurnResult,
    WireName,
)
from xpeval.adapters.wires.handoff_ids import CallIdMap, map_call_ids
from xpeval.adapters.wires.loop_rules import ReasoningStateRules
from xpeval.adapters.wires.loop_rules.anthropic import ANTHROPIC_MESSAGES
from xpeval.adapters.wires.loop_rules.google import GOOGLE_GENAI
from xpeval.adapters.wires.loop_rules.openai_chat import OPENAI_CHAT
from xpeval.adapters.wires.loop_rules.openai_responses import OPENAI_RESPONSES

Action = Literal["kept", "converted", "dropped", "impossible"]
ACTIONS: tuple[Action, ...] = ("kept", "converted", "dropped", "impossible")

GEMINI_FOREIGN_SIGNATURE = "skip_thought_signature_validator"
"""The signature Gemini takes on a function call it did not produce (docs/provider-loop-rules.md,
"Handoff"): URL-safe base64 of bytes, so it goes out as this very text."""
REASONING_PLACEHOLDER = "(reasoning from another provider is not available)"
"""`reasoning_content` for a foreign tool-call turn without reasoning text: the servers check
its presence, not its bytes."""


@dataclass(frozen=True)
class HandoffRule:
    """Why a piece of history is kept, converted, dropped, or why a handoff cannot be made."""

    id: str
    summary: str
    source: str
    """Where the rule is written down: a section of docs/provider-loop-rules.md and its evidence."""


_SECTION = "docs/provider-loop-rules.md, Handoff"
HANDOFF_RULES: dict[str, HandoffRule] = {
    rule.id: rule
    for rule in (
        HandoffRule(
            "same-issuer",
            "The target speaks the source's wire to the same provider: its state goes back as it came.",
            f"{_SECTION} (each provider's 'What it requires')",
        ),
        HandoffRule(
            "call-ids",
            "A call id not in the target's format is replaced, its result answering the new id.",
            "docs/provider-loop-rules.md, Handoff: call ids",
        ),
        HandoffRule(
            "bound-to-issuer",
            "Signed or encrypted state (thinking signatures, thought signatures, encrypted reasoning "
            "items and their item ids, Bedrock reasoning signatures) verifies only with the provider that "
            "issued it: another provider gets none of it.",
            f"{_SECTION} (Vertex AI: signatures scoped to conversation, model and project; Anthropic: "
            "signatures bound to the model; Responses: encrypted content that cannot be verified)",
        ),
        HandoffRule(
            "no-slot",
            "Unsigned reasoning text or a tool plan the target has no field for is dropped.",
            _SECTION,
        ),
        HandoffRule(
            "reasoning-content-presence",
            "A target that requires `reasoning_content` on every tool-call turn gets the source's "
            "reasoning text there, or a placeholder: only its presence is checked.",
            f"{_SECTION}; docs/provider-loop-rules.md, OpenAI Chat family",
        ),
        HandoffRule(
            "gemini-foreign-calls",
            "Gemini takes a function call it did not produce with the documented skip signature on the "
            "turn's first call.",
            _SECTION,
        ),
        HandoffRule(
            "thinking-first",
            "With thinking on, Claude (Anthropic, Bedrock) refuses a pending tool loop whose last assistant "
            "turn does not start with its own signed thinking: a foreign turn has none that verifies.",
            f"{_SECTION}; docs/provider-loop-rules.md, Anthropic (the 'Expected `thinking`' refusal)",
        ),
    )
}


@dataclass(frozen=True)
class HandoffDecision:
    """What happened to one piece of the history: a value a report can show."""

    what: str
    """The piece: `thinking blocks`, `thought signature`, `reasoning items`, `reasoning_content`,
    `reasoning blocks`, `tool plan`, `call id`, or `provider data (<wire>)`."""
    action: Action
    rule: str
    """The id of its rule in `HANDOFF_RULES`."""
    message: int | None = None
    """Its message's index in the history, when it is one message's."""

    def row(self) -> dict[str, object]:
        return {"what": self.what, "action": self.action, "rule": self.rule, "message": self.message}


@dataclass(frozen=True)
class Party:
    """One side of a handoff: an adapter, its wire, its provider and the reasoning state it
    declares (`Capabilities.reasoning_state`)."""

    adapter: str
    wire: WireName
    provider: str
    reasoning_state: frozenset[str] = frozenset()

    def same_issuer(self, other: Party) -> bool:
        return self.wire == other.wire and self.provider == other.provider


@dataclass(frozen=True)
class Handoff:
    """The converted history, its call-id map and every decision made."""

    messages: list[Message]
    call_ids: CallIdMap
    decisions: tuple[HandoffDecision, ...]

    @property
    def impossible(self) -> HandoffDecision | None:
        """The decision that makes this handoff impossible, if any."""
        return next((d for d in self.decisions if d.action == "impossible"), None)


_STATE_NAMES: dict[str, str] = {
    ANTHROPIC_MESSAGES: "thinking blocks",
    GOOGLE_GENAI: "thought signature",
    OPENAI_RESPONSES: "reasoning items",
    OPENAI_CHAT: "reasoning_content",
    "bedrock-converse": "reasoning blocks",
    "cohere-chat": "tool plan",
}
_UNSIGNED = frozenset({OPENAI_CHAT, "cohere-chat"})
"""Wires whose kept state is plain text, bound to no issuer."""
_CALL_STATE = {"thought_signature": "thought signature", "item_id": "reasoning item id"}
_THINKING_STATES = frozenset({"thinking_blocks", "reasoning_blocks"})


def reasoning_text(message: AssistantMessage) -> str | None:
    """The reasoning text a turn kept, whatever wire wrote it (thinking text, reasoning text,
    `reasoning_content`); None when it kept none."""
    data = message.provider_data
    pieces: list[str] = []
    for block in (data.get(ANTHROPIC_MESSAGES) or {}).get("thinking") or []:
        if isinstance(block, dict) and isinstance(block.get("thinking"), str):
            pieces.append(block["thinking"])
    for block in (data.get("bedrock-converse") or {}).get("reasoning") or []:
        text = (block.get("reasoningText") or {}).get("text") if isinstance(block, dict) else None
        if isinstance(text, str):
            pieces.append(text)
    chat = data.get(OPENAI_CHAT) or {}
    pieces += [chat[name] for name in ("reasoning_content", "reasoning") if isinstance(chat.get(name), str)]
    text = "\n".join(p for p in pieces if p.strip())
    return text or None


def _own_state(message: AssistantMessage, index: int, action: Action, rule: str) -> list[HandoffDecision]:
    decisions = [
        HandoffDecision(_STATE_NAMES.get(key, f"provider data ({key})"), action, rule, index)
        for key, value in message.provider_data.items()
        if value
    ]
    names = {_CALL_STATE.get(k, k) for call in message.tool_calls for k in call.provider_data}
    decisions += [HandoffDecision(name, action, rule, index) for name in sorted(names)]
    return decisions


def _foreign_turn(
    message: AssistantMessage, index: int, target: Party
) -> tuple[AssistantMessage, list[HandoffDecision]]:
    """A foreign assistant turn with its state dropped, and what the target requires added."""
    decisions: list[HandoffDecision] = []
    for key, value in message.provider_data.items():
        if not value:
            continue
        what = _STATE_NAMES.get(key, f"provider data ({key})")
        keeps_text = (
            key == OPENAI_CHAT and "reasoning_content" in target.reasoning_state and message.tool_calls
        )
        if keeps_text:
            continue  # carried over below, as the target's reasoning_content
        decisions.append(
            HandoffDecision(what, "dropped", "no-slot" if key in _UNSIGNED else "bound-to-issuer", index)
        )
    for name in sorted({_CALL_STATE.get(k, k) for call in message.tool_calls for k in call.provider_data}):
        decisions.append(HandoffDecision(name, "dropped", "bound-to-issuer", index))
    data: JsonObject = {}
    calls: list[ToolCall] = [call.model_copy(update={"provider_data": {}}) for call in message.tool_calls]
    if "reasoning_content" in target.reasoning_state and calls:
        data[OPENAI_CHAT] = {"reasoning_content": reasoning_text(message) or REASONING_PLACEHOLDER}
        decisions.append(
            HandoffDecision("reasoning_content", "converted", "reasoning-content-presence", index)
        )
    if "thought_signatures" in target.reasoning_state and calls:
        calls[0] = calls[0].model_copy(
            update={"provider_data": {"thought_signature": GEMINI_FOREIGN_SIGNATURE}}
        )
        decisions.append(HandoffDecision("thought signature", "converted", "gemini-foreign-calls", index))
    return message.model_copy(update={"provider_data": data, "tool_calls": calls}), decisions


def _pending_loop_turn(messages: Sequence[Message]) -> int | None:
    """The index of the last assistant turn when its calls' results follow it (a tool loop the
    next turn continues); None when the history ends elsewhere."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)), default=None)
    if last is None:
        return None
    message = messages[last]
    assert isinstance(message, AssistantMessage)
    answered = any(isinstance(m, ToolResultMessage) for m in messages[last + 1 :])
    return last if message.tool_calls and answered else None


def hand_off(messages: Sequence[Message], source: Party, target: Party) -> Handoff:
    """`messages`, written through `source`, as `target` is sent them, with every decision."""
    mapped, call_ids = map_call_ids(messages, target.wire)
    decisions: list[HandoffDecision] = []
    for m_index, (before, after) in enumerate(zip(messages, mapped, strict=True)):
        if isinstance(before, AssistantMessage) and isinstance(after, AssistantMessage):
            decisions += [
                HandoffDecision("call id", "converted", "call-ids", m_index)
                for old, new in zip(before.tool_calls, after.tool_calls, strict=True)
                if old.id != new.id
            ]
    out: list[Message] = []
    for m_index, message in enumerate(mapped):
        if not isinstance(message, AssistantMessage):
            out.append(message)
        elif source.same_issuer(target):
            decisions += _own_state(message, m_index, "kept", "same-issuer")
            out.append(message)
        else:
            converted, made = _foreign_turn(message, m_index, target)
            decisions += made
            out.append(converted)
    pending = _pending_loop_turn(out)
    thinking = target.reasoning_state & _THINKING_STATES
    if pending is not None and thinking and not source.same_issuer(target):
        what = "thinking blocks" if "thinking_blocks" in thinking else "reasoning blocks"
        decisions.append(HandoffDecision(what, "impossible", "thinking-first", pending))
    return Handoff(messages=out, call_ids=call_ids, decisions=tuple(decisions))


def demanded_state(
    messages: Sequence[Message],
    source: Party,
    target: Party,
    conversation: str,
    rules: ReasoningStateRules | None,
) -> list[TurnResult]:
    """The history's assistant turns as the strict emulator holds them for `target` (`rules`: its
    wire's reasoning-state rules): what its provider demands back in each, derived from the
    recording and the target's declarations, never from the conversion it judges. The turns of
    the target's own wire and provider: the state they came with. Another's: Gemini's skip
    signature on each turn's first call, a `reasoning_content` on each tool-call turn, and, for
    Claude with thinking on, thinking it issued itself (which no foreign turn carries: the
    emulator answers Anthropic's refusal)."""
    served: list[TurnResult] = []
    turns = [m for m in messages if isinstance(m, AssistantMessage)]
    for index, turn in enumerate(turns):
        if source.same_issuer(target):
            served.append(
                TurnResult(
                    text=turn.content, tool_calls=list(turn.tool_calls), provider_data=turn.provider_data
                )
            )
            continue
        calls = [call.model_copy(update={"provider_data": {}}) for call in turn.tool_calls]
        data: JsonObject = {}
        if calls and "thought_signatures" in target.reasoning_state:
            calls[0] = calls[0].model_copy(
                update={"provider_data": {"thought_signature": GEMINI_FOREIGN_SIGNATURE}}
            )
        if calls and "reasoning_content" in target.reasoning_state:
            data[OPENAI_CHAT] = {"reasoning_content": "present"}
        result = TurnResult(text=turn.content, tool_calls=calls, provider_data=data)
        if rules is not None and target.reasoning_state & _THINKING_STATES:
            result = rules.with_state(result, f"{conversation}#{index}")
        served.append(result)
    return served


def declared_behaviour(party: Party) -> dict[str, str]:
    """What an adapter does with another provider's history, by its declarations: each piece and
    its action with the rule (`xpeval adapters --capabilities`)."""
    behaviour: dict[str, str] = {
        "call ids": "converted (call-ids)",
        "signed state": "dropped (bound-to-issuer)",
    }
    if "reasoning_content" in party.reasoning_state:
        behaviour["reasoning_content"] = "converted (reasoning-content-presence)"
    else:
        behaviour["reasoning text"] = "dropped (no-slot)"
    if "thought_signatures" in party.reasoning_state:
        behaviour["thought signature"] = "converted (gemini-foreign-calls)"
    if party.reasoning_state & _THINKING_STATES:
        behaviour["pending tool loop"] = "impossible (thinking-first)"
    return behaviour


__all__ = [
    "ACTIONS",
    "GEMINI_FOREIGN_SIGNATURE",
    "HANDOFF_RULES",
    "REASONING_PLACEHOLDER",
    "Action",
    "Handoff",
    "HandoffDecision",
    "HandoffRule",
    "Party",
    "declared_behaviour",
    "demanded_state",
    "hand_off",
    "reasoning_text",
]
