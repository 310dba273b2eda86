"""Reasoning state from real recordings goes back as the provider requires (docs/provider-loop-rules.md):
the strict rules accept what the real API accepted, and the wire's own follow-ups keep the state."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx2

from tests._corpus import corpus_path
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from xpeval.adapters.registry import create_adapter
from xpeval.adapters.wires.loop_rules.openai_responses import RULES as RESPONSES_RULES
from xpeval.evals.cassettes import load_cassette
from xpeval.evals.cassettes.ordered_replay import InOrderReplay

RESPONSES_RECORDING = (
    "cassettes",
    "openai-responses",
    "llm__test_responses_round_trips_encrypted_reasoning.yaml",
)


def test_a_url_safe_thought_signature_goes_back_as_the_same_bytes() -> None:
    # The SDK hands signatures over as URL-safe base64; a lenient standard decode drops `-`/`_`.
    raw = bytes(range(250, 256)) * 8
    call = ToolCall(
        id="a1b2c3d4",
        name="get_time",
        arguments={"zone": "UTC"},
        provider_data={"thought_signature": base64.urlsafe_b64encode(raw).decode().rstrip("=")},
    )
    adapter = create_adapter("google-genai", AdapterSettings())
    request = TurnRequest(
        model="gemini-3-pro-preview",
        messages=[
            UserMessage(content="Time?"),
            AssistantMessage(tool_calls=[call]),
            ToolResultMessage(tool_call_id="a1b2c3d4", name="get_time", content="12:00"),
        ],
        tools=[
            ToolSpec(
                name="get_time", parameters={"type": "object", "properties": {"zone": {"type": "string"}}}
            )
        ],
    )
    (part,) = adapter.prepare(request).kwargs["contents"][1]["parts"]
    assert part["thought_signature"] == raw
    assert part["function_call"]["id"] == "a1b2c3d4"


def _recorded_tools(body: dict[str, Any]) -> list[ToolSpec]:
    return [
        ToolSpec(name=t["name"], description=t.get("description", ""), parameters=t["parameters"])
        for t in body["tools"]
    ]


def test_recorded_encrypted_reasoning_goes_back_followed_by_what_it_produced() -> None:
    interactions = load_cassette(corpus_path(*RESPONSES_RECORDING))
    recorded = [json.loads(i.request_body or b"{}") for i in interactions]
    outputs = {
        item["call_id"]: item["output"]
        for body in recorded
        for item in body["input"]
        if item.get("type") == "function_call_output"
    }
    sent: list[dict[str, Any]] = []
    replay = InOrderReplay(interactions)

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return replay(request)

    adapter = create_adapter("openai-responses", AdapterSettings(transport=httpx2.MockTransport(handler)))
    messages: list[Message] = [UserMessage(content=recorded[0]["input"][0]["content"])]
    served: list[TurnResult] = []
    for _ in interactions:
        result = asyncio.run(
            adapter.turn(TurnRequest(model="gpt-5.5", messages=messages, tools=_recorded_tools(recorded[0])))
        )
        assert result.error is None, result.error
        served.append(result)
        messages += [result.to_message()]
        messages += [
            ToolResultMessage(tool_call_id=c.id, name=c.name, content=outputs[c.id or ""])
            for c in result.tool_calls
        ]
    assert served[-1].text and not served[-1].tool_calls
    url = "https://api.openai.com/v1/responses"
    for turn in range(1, len(interactions)):
        # What the real API accepted, the strict rules accept; what the wire sends keeps the state.
        assert RESPONSES_RULES.check(served[:turn], recorded[turn], url) is None
        assert RESPONSES_RULES.check(served[:turn], sent[turn], url) is None
        kept = [i for i in sent[turn]["input"] if i.get("type") == "reasoning"]
        original = [i for i in recorded[turn]["input"] if i.get("type") == "reasoning"]
        assert [(i["id"], i["encrypted_content"]) for i in kept] == [
            (i["id"], i["encrypted_content"]) for i in original
        ]
    # A broken loop's follow-up (the reasoning item kept, the item it produced sent elsewhere) is refused.
    moved = RESPONSES_RULES.mutate("reorder_state", sent[1])
    refusal = RESPONSES_RULES.check(served[:1], moved, url)
    assert refusal is not None and refusal.status == 400
    assert b"without its required following item" in refusal.body


def test_a_recorded_bedrock_reasoning_block_goes_back_first_with_its_signature() -> None:
    path = corpus_path(
        "new-wires", "bedrock-converse", "pydantic-ai__test_bedrock_model_thinking_part_stream.yaml"
    )
    interactions = load_cassette(path)
    transport = httpx2.MockTransport(InOrderReplay(interactions))
    adapter = create_adapter("bedrock-converse", AdapterSettings(transport=transport))
    model = "us.anthropic.claude-sonnet-4-20250514-v1:0"
    first = TurnRequest(model=model, messages=[UserMessage(content="Hello")], stream=True)
    result = asyncio.run(adapter.turn(first))
    assert result.error is None and result.reasoning, result.error
    (kept,) = result.provider_data["bedrock-converse"]["reasoning"]
    assert kept["reasoningText"]["text"] == result.reasoning and kept["reasoningText"]["signature"]
    follow_up = first.model_copy(
        update={"messages": [*first.messages, result.to_message(), UserMessage(content="And?")]}
    )
    kwargs = adapter.prepare(follow_up).kwargs
    adapter.wire.validate_encoded(kwargs)  # botocore's own parameter validation
    assert kwargs["messages"][1]["content"][0] == {"reasoningContent": kept}


def test_a_recorded_gemini_follow_up_passes_the_strict_rules_and_a_foreign_signature_does_not() -> None:
    from xpeval.adapters.wires.loop_rules.google import RULES as GEMINI_RULES

    path = corpus_path(
        "cassettes",
        "google-generate-content",
        "pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml",
    )
    interactions = load_cassette(path)
    transport = httpx2.MockTransport(InOrderReplay(interactions))
    adapter = create_adapter("google-genai", AdapterSettings(transport=transport))
    tool = ToolSpec(name="get_country", parameters={"type": "object", "properties": {}})
    first = TurnRequest(
        model="gemini-3-pro-preview", messages=[UserMessage(content="Capital?")], tools=[tool], stream=True
    )
    result = asyncio.run(adapter.turn(first))
    follow_up = json.loads(interactions[1].request_body or b"{}")  # URL-safe base64, accepted by Gemini
    assert GEMINI_RULES.check([result], follow_up, interactions[1].uri) is None
    refusal = GEMINI_RULES.check(
        [result], GEMINI_RULES.mutate("foreign_signature", follow_up), interactions[1].uri
    )
    assert refusal is not None and b"Corrupted thought signature." in refusal.body
    dropped = GEMINI_RULES.check([result], GEMINI_RULES.mutate("drop_state", follow_up), interactions[1].uri)
    assert dropped is not None and b"`default_api:get_country` , position 2" in dropped.body


def test_interleaved_thinking_goes_back_in_the_order_it_came() -> None:
    from anthropic.types import Message as AnthropicMessage

    from xpeval.adapters.wires.anthropic import WIRE as ANTHROPIC
    from xpeval.adapters.wires.loop_rules.anthropic import RULES as ANTHROPIC_RULES

    def thinking(n: int) -> dict[str, str]:
        return {"type": "thinking", "thinking": f"step {n}", "signature": f"c2lnbmF0dXJl{n}"}

    def use(n: int) -> dict[str, Any]:
        return {"type": "tool_use", "id": f"toolu_0{n}", "name": "get_time", "input": {"zone": f"Z{n}"}}

    answer = AnthropicMessage.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [thinking(1), use(1), thinking(2), use(2)],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    result = ANTHROPIC.decode(answer)
    tool = ToolSpec(
        name="get_time", parameters={"type": "object", "properties": {"zone": {"type": "string"}}}
    )
    request = TurnRequest(
        model="claude-sonnet-4-5",
        messages=[
            UserMessage(content="Two zones?"),
            result.to_message(),
            *(ToolResultMessage(tool_call_id=c.id, name=c.name, content="12:00") for c in result.tool_calls),
        ],
        tools=[tool],
    )
    body = create_adapter("anthropic-messages", AdapterSettings()).prepare(request).kwargs
    assert [b["type"] for b in body["messages"][1]["content"]] == [
        "thinking",
        "tool_use",
        "thinking",
        "tool_use",
    ]
    assert ANTHROPIC_RULES.check([result], body, "https://api.anthropic.com/v1/messages") is None
