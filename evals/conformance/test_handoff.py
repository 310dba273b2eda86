"""The handoff family: a conversation written through each built-in wire continues through this
adapter (plugins' included): its history converted for it (ids, reasoning state kept, converted
or dropped by its declarations), its request passing its SDK's validation, its schema checker and
the strict emulator; or the pair names the rule that makes it impossible
(docs/provider-loop-rules.md, "Handoff").
"""

from __future__ import annotations

import pytest

from xpeval.adapters.contract import (
    AssistantMessage,
    Message,
    SystemMessage,
    TurnResult,
    UserMessage,
)
from xpeval.adapters.registry import BUNDLED_ADAPTERS
from xpeval.adapters.wires.handoff import HANDOFF_RULES
from xpeval.evals.conformance._fixtures import TIME, WEATHER, tool_results_for, two_calls, wire_of
from xpeval.evals.emulator.strict import with_state
from xpeval.evals.handoff.conversations import RecordedConversation
from xpeval.evals.handoff.matrix import check_handoff

SOURCES = ("openai-chat", "openai-responses", "anthropic-messages", "google-genai", *BUNDLED_ADAPTERS)
"""One adapter per wire xpeval ships (the bundled plugin wires included), named without asking the
registry: importing this module registers nothing (tests/handoff/test_handoff_sources.py holds
each to its wire)."""
ANSWER = TurnResult(text="Paris: 21C, 14:05.")


def _conversation(source: str, at_user_turn: bool) -> RecordedConversation:
    """A tool round written through `source`, with the state its provider returns (the strict
    emulator's replies): handed over with its results pending, or after the answer and a new
    user turn."""
    calls, answer = with_state(wire_of(source), [two_calls(), ANSWER], f"handoff:{source}")
    messages: list[Message] = [
        SystemMessage(content="Be brief."),
        UserMessage(content="Weather and time in Paris, in celsius?"),
        calls.to_message(),
        *tool_results_for(calls),
    ]
    if at_user_turn:
        messages += [answer.to_message(), UserMessage(content="And in Rome?")]
    assert any(isinstance(m, AssistantMessage) for m in messages)
    return RecordedConversation(
        id=f"{source}:{'user-turn' if at_user_turn else 'pending'}",
        source=source,
        messages=messages,
        tools=[WEATHER, TIME],
        calls=len(calls.tool_calls),
    )


@pytest.mark.parametrize("source", SOURCES)
def test_a_pending_tool_loop_from_each_built_in_wire_continues_here_or_names_its_rule(
    xpeval_adapter_id: str, source: str
) -> None:
    outcome = check_handoff(_conversation(source, at_user_turn=False), xpeval_adapter_id)
    assert outcome.verdict != "fail", f"{source} -> {xpeval_adapter_id}: {outcome.rule}: {outcome.detail}"
    if outcome.verdict == "impossible":
        assert outcome.rule in HANDOFF_RULES


@pytest.mark.parametrize("source", SOURCES)
def test_a_conversation_from_each_built_in_wire_handed_over_at_a_user_turn_continues_here(
    xpeval_adapter_id: str, source: str
) -> None:
    outcome = check_handoff(_conversation(source, at_user_turn=True), xpeval_adapter_id)
    assert outcome.verdict == "pass", f"{source} -> {xpeval_adapter_id}: {outcome.rule}: {outcome.detail}"
