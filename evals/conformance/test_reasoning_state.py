"""The reasoning-state family: what a provider requires back between turns, for every adapter
that declares reasoning state (`Capabilities.reasoning_state`; docs/provider-loop-rules.md).

Each check plays a conversation against the strict emulator, whose replies carry the wire's
reasoning state (Gemini thought signatures, Anthropic thinking blocks, Responses reasoning
items, `reasoning_content`, Bedrock reasoning blocks) and which answers the provider's real
refusal when a later request drops, moves or alters it. A loop that keeps the state passes; each
mutation a broken loop commits is refused, as the provider's error, under its own error kind.
"""

from __future__ import annotations

import asyncio

import pytest

from xpeval.adapters.adapter import Adapter, AdapterSettings
from xpeval.adapters.contract import Message, TurnResult, UserMessage
from xpeval.adapters.registry import create_adapter, effective_contract
from xpeval.adapters.wires.loop_rules import MUTATIONS, Mutation, ReasoningStateRules, rules_of
from xpeval.evals.conformance._fixtures import request, tool_results_for, two_calls, wire_of
from xpeval.evals.emulator import Reply, ScriptedTransport
from xpeval.evals.emulator.strict import with_state

ANSWER = TurnResult(text="Paris: 21C, 14:05.")


def _rules(adapter_id: str) -> ReasoningStateRules:
    """The wire's rules for an adapter that declares reasoning state (skip one that declares none)."""
    declared = effective_contract(adapter_id).capabilities.reasoning_state
    if not declared:
        pytest.skip(f"{adapter_id} declares no reasoning state")
    rules = rules_of(wire_of(adapter_id))
    assert rules is not None and rules.state in declared, (
        f"{adapter_id} declares reasoning state {sorted(declared)}, but its wire keeps "
        f"{rules.state if rules else 'none'}"
    )
    return rules


def _strict(adapter_id: str, replies: list[TurnResult], mutation: Mutation | None = None) -> Adapter:
    served = with_state(wire_of(adapter_id), replies, f"conformance:{adapter_id}")
    script = ScriptedTransport(
        wire_of(adapter_id), [Reply(result=r) for r in served], strict=True, mutation=mutation
    )
    return create_adapter(adapter_id, AdapterSettings(transport=script.transport(), timeout=10.0))


async def _tool_round(adapter: Adapter, stream: bool) -> TurnResult:
    """Calls with state, their results sent back: the follow-up's result."""
    messages: list[Message] = list(request().messages)
    first = await adapter.turn(request(stream=stream, messages=messages))
    assert first.error is None and first.tool_calls, first.error
    messages += [first.to_message(), *tool_results_for(first)]
    return await adapter.turn(request(stream=stream, messages=messages))


def _streams(adapter_id: str) -> None:
    if not effective_contract(adapter_id).capabilities.streamed_tool_calls:
        pytest.skip(f"{adapter_id} declares no streamed tool calls")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_declared_reasoning_state_goes_back_as_the_provider_requires(
    xpeval_adapter_id: str, stream: bool
) -> None:
    _rules(xpeval_adapter_id)
    if stream:
        _streams(xpeval_adapter_id)
    adapter = _strict(xpeval_adapter_id, [two_calls(), ANSWER])
    result = asyncio.run(_tool_round(adapter, stream))
    assert result.error is None, f"{xpeval_adapter_id} lost its reasoning state: {result.error}"
    assert result.text == ANSWER.text


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_final_answers_reasoning_state_goes_back_in_the_next_user_turn(
    xpeval_adapter_id: str, stream: bool
) -> None:
    _rules(xpeval_adapter_id)
    if stream:
        _streams(xpeval_adapter_id)
    adapter = _strict(xpeval_adapter_id, [TurnResult(text="Which city?"), two_calls(), ANSWER])

    async def play() -> TurnResult:
        messages: list[Message] = list(request().messages)
        answer = await adapter.turn(request(stream=stream, messages=messages))
        assert answer.error is None, answer.error
        messages += [answer.to_message(), UserMessage(content="Paris, in celsius.")]
        calls = await adapter.turn(request(stream=stream, messages=messages))
        assert calls.error is None, f"the final answer's state did not go back whole: {calls.error}"
        messages += [calls.to_message(), *tool_results_for(calls)]
        return await adapter.turn(request(stream=stream, messages=messages))

    result = asyncio.run(play())
    assert result.error is None, f"{xpeval_adapter_id} lost its reasoning state: {result.error}"


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_loop_that_mutates_the_reasoning_state_is_refused_as_a_reasoning_state_error(
    xpeval_adapter_id: str, mutation: Mutation
) -> None:
    rules = _rules(xpeval_adapter_id)
    if mutation not in rules.mutations:
        pytest.skip(f"{mutation} does not apply to {rules.state}")
    adapter = _strict(xpeval_adapter_id, [two_calls(), ANSWER], mutation=mutation)
    result = asyncio.run(_tool_round(adapter, stream=False))
    assert result.error is not None, f"{mutation} of {rules.state} was not refused"
    assert result.error.kind == "reasoning_state" and not result.error.retryable, result.error
