"""A conversation converted for another adapter: each piece of reasoning state kept, converted or
dropped as the target requires, each decision a value naming its rule, and a handoff no
conversion can make acceptable named as impossible (docs/provider-loop-rules.md, "Handoff")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xpeval.adapters.contract import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from xpeval.adapters.wires.handoff import (
    GEMINI_FOREIGN_SIGNATURE,
    HANDOFF_RULES,
    REASONING_PLACEHOLDER,
    Party,
    hand_off,
)

ANTHROPIC = Party("anthropic-messages", "anthropic-messages", "anthropic", frozenset({"thinking_blocks"}))
BEDROCK = Party("bedrock-converse", "bedrock-converse", "bedrock", frozenset({"reasoning_blocks"}))
GEMINI = Party("google-genai", "google-genai", "gemini", frozenset({"thought_signatures"}))
VERTEX = Party("vertex-ai", "google-genai", "vertex", frozenset({"thought_signatures"}))
OPENAI_CHAT = Party("openai-chat", "openai-chat", "openai")
MOONSHOT = Party("moonshot", "openai-chat", "moonshot", frozenset({"reasoning_content"}))
RESPONSES = Party("openai-responses", "openai-responses", "openai", frozenset({"reasoning_items"}))
AZURE = Party("azure", "openai-responses", "azure", frozenset({"reasoning_items"}))
MISTRAL = Party("mistral", "mistral-chat", "mistral")

THINKING = {
    "anthropic-messages": {
        "thinking": [
            {"type": "thinking", "thinking": "Weather first.", "signature": "c2lnbmVk"},
            {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
        ]
    }
}


def _loop(call: ToolCall, data: Mapping[str, Any] | None = None, answered: bool = True) -> list[Message]:
    messages: list[Message] = [
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(tool_calls=[call], provider_data=dict(data or {})),
    ]
    if answered:
        messages.append(ToolResultMessage(tool_call_id=call.id, name=call.name, content="21C"))
    return messages


def _turn(messages: list[Message]) -> AssistantMessage:
    turn = messages[1]
    assert isinstance(turn, AssistantMessage)
    return turn


def test_the_same_provider_on_the_same_wire_gets_its_state_back_unchanged() -> None:
    history = _loop(ToolCall(id="toolu_01", name="get_weather"), THINKING)
    handoff = hand_off(history, ANTHROPIC, ANTHROPIC)
    assert handoff.impossible is None
    assert _turn(handoff.messages).provider_data == THINKING
    assert {(d.what, d.action, d.rule) for d in handoff.decisions} == {
        ("thinking blocks", "kept", "same-issuer")
    }


def test_signed_thinking_is_dropped_for_another_provider_and_the_decision_names_why() -> None:
    history = _loop(ToolCall(id="toolu_01", name="get_weather"), THINKING)
    handoff = hand_off(history, ANTHROPIC, OPENAI_CHAT)
    assert _turn(handoff.messages).provider_data == {}
    assert [(d.what, d.action, d.rule, d.message) for d in handoff.decisions if d.what != "call id"] == [
        ("thinking blocks", "dropped", "bound-to-issuer", 1)
    ]


def test_a_reasoning_content_target_gets_the_foreign_reasoning_text_or_a_placeholder() -> None:
    with_text = hand_off(_loop(ToolCall(id="toolu_01", name="get_weather"), THINKING), ANTHROPIC, MOONSHOT)
    assert _turn(with_text.messages).provider_data == {"openai-chat": {"reasoning_content": "Weather first."}}
    without = hand_off(_loop(ToolCall(id="call_1", name="get_weather")), OPENAI_CHAT, MOONSHOT)
    assert _turn(without.messages).provider_data == {
        "openai-chat": {"reasoning_content": REASONING_PLACEHOLDER}
    }
    assert ("reasoning_content", "converted", "reasoning-content-presence") in {
        (d.what, d.action, d.rule) for d in without.decisions
    }


def test_gemini_gets_the_skip_signature_on_a_foreign_turns_first_call_only() -> None:
    calls = [ToolCall(id="call_a", name="get_weather"), ToolCall(id="call_b", name="get_time")]
    history: list[Message] = [
        UserMessage(content="Weather and time?"),
        AssistantMessage(tool_calls=calls),
        ToolResultMessage(tool_call_id="call_a", name="get_weather", content="21C"),
        ToolResultMessage(tool_call_id="call_b", name="get_time", content="14:05"),
    ]
    handoff = hand_off(history, OPENAI_CHAT, GEMINI)
    first, second = _turn(handoff.messages).tool_calls
    assert first.provider_data == {"thought_signature": GEMINI_FOREIGN_SIGNATURE}
    assert second.provider_data == {}
    assert len(first.id or "") == 8  # Gemini 3's call ids


def test_gemini_signatures_from_another_project_are_replaced_not_sent() -> None:
    call = ToolCall(id="abcd1234", name="get_weather", provider_data={"thought_signature": "c2lnbmVk"})
    handoff = hand_off(_loop(call), GEMINI, VERTEX)
    assert _turn(handoff.messages).tool_calls[0].provider_data == {
        "thought_signature": GEMINI_FOREIGN_SIGNATURE
    }
    assert ("thought signature", "dropped", "bound-to-issuer") in {
        (d.what, d.action, d.rule) for d in handoff.decisions
    }


def test_encrypted_reasoning_items_do_not_go_to_another_provider_on_the_same_wire() -> None:
    items = {"openai-responses": {"reasoning": [{"id": "rs_1", "encrypted_content": "gAAA"}], "output": []}}
    call = ToolCall(id="call_1", name="get_weather", provider_data={"item_id": "fc_1"})
    handoff = hand_off(_loop(call, items), RESPONSES, AZURE)
    turn = _turn(handoff.messages)
    assert turn.provider_data == {} and turn.tool_calls[0].provider_data == {}
    assert {(d.what, d.rule) for d in handoff.decisions} == {
        ("reasoning items", "bound-to-issuer"),
        ("reasoning item id", "bound-to-issuer"),
    }
    assert handoff.impossible is None  # Responses takes a history without reasoning items


def test_a_foreign_pending_tool_loop_cannot_go_to_claude_with_thinking_on() -> None:
    for target in (ANTHROPIC, BEDROCK):
        handoff = hand_off(_loop(ToolCall(id="call_1", name="get_weather")), OPENAI_CHAT, target)
        assert handoff.impossible is not None
        assert (handoff.impossible.rule, handoff.impossible.message) == ("thinking-first", 1)
        assert handoff.impossible.rule in HANDOFF_RULES


def test_a_foreign_history_handed_to_claude_at_a_user_turn_is_possible() -> None:
    history = [
        *_loop(ToolCall(id="call_1", name="get_weather")),
        AssistantMessage(content="It is 21C."),
        UserMessage(content="And tomorrow?"),
    ]
    assert hand_off(history, OPENAI_CHAT, ANTHROPIC).impossible is None


def test_call_ids_are_converted_into_the_targets_format_and_results_follow_them() -> None:
    handoff = hand_off(_loop(ToolCall(id="toolu_01_long-id", name="get_weather")), ANTHROPIC, MISTRAL)
    call = _turn(handoff.messages).tool_calls[0]
    result = handoff.messages[2]
    assert isinstance(result, ToolResultMessage)
    assert len(call.id or "") == 9 and (call.id or "").isalnum()
    assert result.tool_call_id == call.id
    assert handoff.call_ids.source(call.id or "") == "toolu_01_long-id"
    assert ("call id", "converted", "call-ids", 1) in {
        (d.what, d.action, d.rule, d.message) for d in handoff.decisions
    }


def test_every_rule_a_decision_can_name_is_written_down_with_its_source() -> None:
    assert all(rule.source and rule.summary for rule in HANDOFF_RULES.values())
    histories = [
        hand_off(_loop(ToolCall(id="toolu_01", name="f"), THINKING), source, target)
        for source in (ANTHROPIC, OPENAI_CHAT, RESPONSES)
        for target in (ANTHROPIC, BEDROCK, GEMINI, VERTEX, MOONSHOT, AZURE, MISTRAL)
    ]
    assert {d.rule for h in histories for d in h.decisions} <= set(HANDOFF_RULES)
