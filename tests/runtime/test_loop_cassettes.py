"""The agent loop against real recorded multi-turn conversations, one or more per wire.

Each cassette's responses are replayed in order through the adapter registered for its wire;
the loop must execute the recorded calls through its router, send the results back, and end
COMPLETED having used every recorded response, growing the conversation exactly as the
recording's own client did.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from pydantic import BaseModel, SecretStr

from tests._corpus import corpus_path
from tests.runtime.replay import RecordingReplay
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import Message, ToolResultMessage, UserMessage
from xpeval.adapters.registry import create_adapter
from xpeval.adapters.wires import get_wire
from xpeval.evals.runtime import AgentLoop, AgentState, AgentStatus, ToolRegistry

pytestmark = pytest.mark.corpus


@dataclass(frozen=True)
class Recording:
    adapter: str
    file: str
    tools: tuple[str, ...]
    conversation_key: str
    """The request field holding the conversation (its length grows by what the loop appends)."""


RECORDINGS = [
    Recording(
        "openai-chat",
        "openai-chat/mirascope__test_call_with_tool_error__openai_gpt_4o_completions.yaml",
        ("passphrase_test_tool",),
        "messages",
    ),
    Recording(
        "openai-chat",
        "openai-chat/pydantic-ai__test_compatible_api_with_tool_calls_without_id.yaml",
        ("get_current_time",),
        "messages",
    ),
    Recording(
        "openai-chat",
        "openai-chat/pydantic-ai__test_snowflake_tool_calling.yaml",
        ("get_weather",),
        "messages",
    ),
    Recording(
        "openai-responses",
        "openai-responses/llm__test_responses_round_trips_encrypted_reasoning.yaml",
        ("lookup_population", "can_have_dragons"),
        "input",
    ),
    Recording(
        "openai-responses",
        "openai-responses/llm__test_responses_tool_use_streaming.yaml",
        ("multiply",),
        "input",
    ),
    Recording(
        "anthropic-messages",
        "anthropic-messages/mirascope__test_call_with_tools__anthropic_claude_sonnet_4_0__sync.yaml",
        ("secret_retrieval_tool",),
        "messages",
    ),
    Recording(
        "anthropic-messages",
        "anthropic-messages/mirascope__test_call_with_tools__anthropic_claude_sonnet_4_0__stream.yaml",
        ("secret_retrieval_tool",),
        "messages",
    ),
    Recording(
        "anthropic-messages",
        "anthropic-messages/crewai__TestAnthropicNativeToolCalling."
        "test_anthropic_parallel_native_tool_calling_test_agent_kickoff.yaml",
        ("parallel_local_search_one", "parallel_local_search_two", "parallel_local_search_three"),
        "messages",
    ),
    Recording(
        "anthropic-messages",
        "anthropic-messages/llm-anthropic__test_fixed_version_tool_chain_with_thinking_display_regression.yaml",
        ("fixed_version",),
        "messages",
    ),
    Recording(
        "google-genai",
        "google-generate-content/mirascope__test_call_with_tools__google_gemini_2_5_flash__sync.yaml",
        ("secret_retrieval_tool",),
        "contents",
    ),
    Recording(
        "google-genai",
        "google-generate-content/mirascope__test_call_with_tools__google_gemini_2_5_flash__stream.yaml",
        ("secret_retrieval_tool",),
        "contents",
    ),
    Recording(
        "google-genai",
        "google-generate-content/llm-gemini__test_tools.yaml",
        ("pelican_name_generator",),
        "contents",
    ),
    Recording(
        "google-genai",
        "google-generate-content/chatlas__test_tools_sequential.yaml",
        ("weather_forecast", "equipment"),
        "contents",
    ),
]


class AnyArguments(BaseModel):
    """Accepts whatever the recorded model sent: these tests are about the loop, not the schema."""


def registry_for(tools: tuple[str, ...]) -> ToolRegistry:
    registry = ToolRegistry()
    for name in tools:
        registry.register(name, f"{name} (replayed)", AnyArguments, handler=_answer_for(name))
    return registry.seal()


def _answer_for(name: str) -> Callable[[AnyArguments], str]:
    return lambda args: f"{name}: 42"


def run_replayed(recording: Recording, replay: RecordingReplay, prompt: str | list[Message]) -> AgentState:
    first = replay.interactions[0]
    stream = get_wire(create_adapter(recording.adapter).contract.wire).is_stream(
        first.uri, first.request_json()
    )

    async def go() -> AgentState:
        adapter = create_adapter(
            recording.adapter, AdapterSettings(transport=replay.transport(), api_key=SecretStr("test"))
        )
        try:
            loop = AgentLoop(
                adapter,
                registry_for(recording.tools),
                model="replayed-model",
                max_steps=6,
                stream=stream,
                clock=lambda: 0,
            )
            return await loop.run(prompt)
        finally:
            await adapter.aclose()

    return asyncio.run(go())


def conversation_sizes(bodies: list[object], key: str) -> list[int]:
    return [len(body[key]) for body in bodies if isinstance(body, dict)]


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda r: f"{r.adapter}:{r.file.split('/')[-1][:60]}")
def test_the_loop_runs_a_recorded_tool_conversation_to_completed(recording: Recording) -> None:
    replay = RecordingReplay(corpus_path("cassettes", recording.file))
    state = run_replayed(recording, replay, "replayed prompt")

    assert state.status is AgentStatus.COMPLETED, state.error
    assert replay.remaining == 0 and state.step_count == len(replay.interactions)
    calls = [call for turn in state.turns for call in turn.tool_calls]
    results = [m for m in state.messages if isinstance(m, ToolResultMessage)]
    assert calls and [r.name for r in results] == [c.name for c in calls]
    assert all(not r.is_error for r in results), [r.content for r in results if r.is_error]
    assert state.turns[-1].text, "the run ended without the model's final answer"
    recorded = conversation_sizes([i.request_json() for i in replay.interactions], recording.conversation_key)
    ours = conversation_sizes(replay.sent, recording.conversation_key)
    assert [n - ours[0] for n in ours] == [n - recorded[0] for n in recorded]
    assert [row.outcome for row in state.audit] == ["ok"] * len(calls)


def test_a_conversation_continues_across_runs_as_recorded() -> None:
    """chatlas' Databricks recording: two user turns, each a tool round trip, over one stream."""
    recording = Recording(
        "openai-chat", "openai-chat/chatlas__test_databricks_tool_variations.yaml", ("get_date",), "messages"
    )
    replay = RecordingReplay(corpus_path("cassettes", recording.file))
    first = run_replayed(recording, replay, "what is the date?")
    assert first.status is AgentStatus.COMPLETED and first.step_count == 2
    second = run_replayed(recording, replay, [*first.messages, UserMessage(content="and again?")])
    assert second.status is AgentStatus.COMPLETED and second.step_count == 2
    assert replay.remaining == 0
    recorded = conversation_sizes([i.request_json() for i in replay.interactions], "messages")
    ours = conversation_sizes(replay.sent, "messages")
    assert [n - ours[0] for n in ours] == [n - recorded[0] for n in recorded]


def test_a_recorded_provider_error_ends_the_run_failed_with_the_error_kept() -> None:
    """Groq answered the first turn with HTTP 400 tool_use_failed."""
    recording = Recording(
        "openai-chat",
        "openai-chat/pydantic-ai__test_groq__test_tool_use_failed_error.yaml",
        ("get_something_by_name",),
        "messages",
    )
    replay = RecordingReplay(corpus_path("cassettes", recording.file))
    state = run_replayed(recording, replay, "replayed prompt")
    assert state.status is AgentStatus.FAILED and state.step_count == 1
    assert state.error is not None and state.error.status == 400
    assert "Tool call validation failed" in state.error.message
    assert replay.remaining == 2
