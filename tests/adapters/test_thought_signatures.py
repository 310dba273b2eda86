"""Gemini thought signatures come back on the calls they arrived with (real recording)."""

from __future__ import annotations

import asyncio
import base64
import json

from tests._corpus import corpus_path
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ToolResultMessage, ToolSpec, TurnRequest, UserMessage
from xpeval.adapters.registry import create_adapter
from xpeval.evals.cassettes import load_cassette
from xpeval.evals.cassettes.ordered_replay import InOrderReplay


def test_a_recorded_thought_signature_is_echoed_on_the_replayed_call() -> None:
    path = corpus_path(
        "cassettes",
        "google-generate-content",
        "pydantic-ai__test_google_streaming_tool_call_thought_signature.yaml",
    )
    interactions = load_cassette(path)
    replay = InOrderReplay(interactions)
    sent: list[dict[str, object]] = []

    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return replay(request)

    adapter = create_adapter("google-genai", AdapterSettings(transport=httpx2.MockTransport(handler)))
    tool = ToolSpec(
        name="get_country", description="The country.", parameters={"type": "object", "properties": {}}
    )
    first = TurnRequest(
        model="gemini-3-pro-preview", messages=[UserMessage(content="Capital?")], tools=[tool], stream=True
    )
    result = asyncio.run(adapter.turn(first))
    (call,) = result.tool_calls
    signature = call.provider_data["thought_signature"]
    recorded = json.loads(interactions[0].response_body.decode().split("data: ", 2)[1].split("\n")[0])
    recorded_part = recorded["candidates"][0]["content"]["parts"][0]
    assert base64.b64decode(signature) == base64.b64decode(recorded_part["thoughtSignature"])

    follow_up = first.model_copy(
        update={
            "messages": [
                *first.messages,
                result.to_message(),
                ToolResultMessage(tool_call_id=call.id, name=call.name, content="Mexico"),
            ]
        }
    )
    asyncio.run(adapter.turn(follow_up))
    model_turn = sent[1]["contents"][1]  # type: ignore[index]
    echoed = [p for p in model_turn["parts"] if "functionCall" in p]
    # the SDK serializes bytes as URL-safe base64
    assert echoed and base64.urlsafe_b64decode(echoed[0]["thoughtSignature"]) == base64.b64decode(signature)
