"""Canonical requests and results the conformance suite sends through every adapter."""

from __future__ import annotations

import pytest

from xpeval.adapters.adapter import Adapter, AdapterSettings, choice_mode
from xpeval.adapters.contract import (
    ForceTool,
    Message,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolResultMessage,
    ToolSpec,
    TurnRequest,
    TurnResult,
    Usage,
    UserMessage,
)
from xpeval.adapters.registry import create_adapter, effective_contract
from xpeval.adapters.wires import Wire, get_wire
from xpeval.evals.emulator import Reply, ScriptedTransport

WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
)
TIME = ToolSpec(
    name="get_time",
    description="Current time in a time zone.",
    parameters={
        "type": "object",
        "properties": {"zone": {"type": "string"}},
        "required": ["zone"],
        "additionalProperties": False,
    },
)
TOOL_CHOICES: list[ToolChoice] = ["auto", "none", "required", ForceTool(name="get_time")]


def request(
    *, stream: bool = False, tool_choice: ToolChoice = "auto", messages: list[Message] | None = None
) -> TurnRequest:
    return TurnRequest(
        model="test-model",
        messages=messages
        or [SystemMessage(content="Be brief."), UserMessage(content="Weather in Paris, in celsius?")],
        tools=[WEATHER, TIME],
        tool_choice=tool_choice,
        stream=stream,
    )


def two_calls() -> TurnResult:
    return TurnResult(
        text="Checking both.",
        tool_calls=[
            ToolCall(id="call_a", name="get_weather", arguments={"city": "Paris", "unit": "celsius"}),
            ToolCall(id="call_b", name="get_time", arguments={"zone": "Europe/Paris"}),
        ],
        usage=Usage(input_tokens=12, output_tokens=7, total_tokens=19),
    )


def tool_results_for(result: TurnResult) -> list[ToolResultMessage]:
    return [
        ToolResultMessage(tool_call_id=call.id, name=call.name, content=f"result of {call.name}")
        for call in result.tool_calls
    ]


def wire_of(adapter_id: str) -> Wire:
    return get_wire(effective_contract(adapter_id).wire)


def scripted(adapter_id: str, *replies: Reply) -> tuple[Adapter, ScriptedTransport]:
    """The registered adapter, talking to an in-process script instead of the network."""
    script = ScriptedTransport(wire_of(adapter_id), list(replies))
    adapter = create_adapter(adapter_id, AdapterSettings(transport=script.transport(), timeout=10.0))
    return adapter, script


def require_declared(adapter_id: str, tool_choice: ToolChoice) -> None:
    """Skip a check of a tool_choice the adapter does not declare: it is refused before any
    request is built (test_capabilities.py checks exactly that), so there is nothing to inspect."""
    mode = choice_mode(tool_choice)
    if mode not in effective_contract(adapter_id).capabilities.tool_choice:
        pytest.skip(
            f"{adapter_id} declares no tool_choice {mode!r} (its refusal is checked in test_capabilities)"
        )
