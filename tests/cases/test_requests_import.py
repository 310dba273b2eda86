"""`xpeval cases requests`: OpenAI Chat request bodies (one per line) become unlabelled cases that
replay the same request; a line that cannot be one is refused with its number, nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests._cli import Cli
from xpeval.adapters.contract import (
    AssistantMessage,
    ForceTool,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    TurnRequest,
    UserMessage,
)
from xpeval.adapters.registry import create_adapter
from xpeval.evals.cases import load_cases

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": PARAMETERS,
    },
}


def body(**extra: Any) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "_input", "content": "You are a travel agent."},
            {"role": "user", "content": [{"type": "text", "text": "Weather in Rome?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "functions.get_weather:0", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "sunny"},
            {"role": "user", "content": "And Paris?"},
        ],
        "tools": [WEATHER],
        "tool_choice": "auto",
        **extra,
    }  # fmt: skip


def write(path: Path, *lines: Any) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_each_request_becomes_an_unlabelled_case_carrying_the_whole_conversation(
    tmp_path: Path, cli: Cli
) -> None:
    source = write(
        tmp_path / "traffic.jsonl",
        body(temperature=0.6, parallel_tool_calls=True),
        body(tool_choice={"type": "function", "function": {"name": "get_weather"}}),
    )
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "cases"))
    assert done.returncode == 0, done.stderr
    assert "2 unlabelled cases" in done.stderr and "temperature (1)" in done.stderr
    first, second = (item.case for item in load_cases(tmp_path / "cases"))
    assert (first.id, first.category, first.expected, first.origin) == (
        "traffic_00001",
        "unlabelled",
        None,
        "requests",
    )
    assert first.messages == [
        SystemMessage(content="You are a travel agent."),
        UserMessage(content="Weather in Rome?"),
        AssistantMessage(
            tool_calls=[
                ToolCall(id="functions.get_weather:0", name="get_weather", arguments={"city": "Rome"},
                         raw_arguments='{"city": "Rome"}')
            ]
        ),
        ToolResultMessage(tool_call_id="functions.get_weather:0", name="get_weather", content="sunny"),
        UserMessage(content="And Paris?"),
    ]  # fmt: skip
    assert first.tools == [
        ToolSpec(name="get_weather", description="Weather for a city", parameters=PARAMETERS)
    ]
    assert second.tool_choice == ForceTool(name="get_weather")


def test_a_case_sends_the_request_it_was_made_from(tmp_path: Path, cli: Cli) -> None:
    original = body(tool_choice="required")
    done = cli("cases", "requests", str(write(tmp_path / "t.jsonl", original)), "--out", str(tmp_path / "c"))
    assert done.returncode == 0, done.stderr
    (case,) = (item.case for item in load_cases(tmp_path / "c"))
    request: TurnRequest = case.turn_request("gpt-4.1-mini")
    sent = create_adapter("openai-chat").prepare(request).kwargs
    assert sent["tool_choice"] == "required"
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assert sent["tools"][0]["function"]["parameters"] == PARAMETERS
    assert sent["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Rome"}'


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "line 2: invalid JSON"),
        (json.dumps({"messages": []}), "line 2: messages: a non-empty list is required"),
        (json.dumps(body(response_format={"type": "json_object"})), "line 2: response_format: not a key"),
        (json.dumps(body(parallel_tool_calls=False)), "line 2: parallel_tool_calls: false is not carried"),
        (json.dumps({"messages": [{"role": "robot", "content": "x"}]}), "line 2: messages[0].role: 'robot'"),
        (
            json.dumps({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}),
            "line 2: messages[0].content: only text content",
        ),
        (
            json.dumps({"messages": [{"role": "tool", "tool_call_id": "x", "content": "1"}]}),
            "line 2: messages[0].tool_call_id: answers no call",
        ),
        (
            json.dumps(body(tool_choice={"type": "function", "function": {"name": "nope"}})),
            "line 2: tool_choice",
        ),
        ("[" * 10_000, "line 2: JSON nests more than 200 levels"),
    ],
)
def test_a_line_that_is_not_a_request_is_refused_with_its_number_and_nothing_is_written(
    tmp_path: Path, line: str, reason: str, cli: Cli
) -> None:
    source = write(tmp_path / "t.jsonl", body(), line)
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and reason in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()
