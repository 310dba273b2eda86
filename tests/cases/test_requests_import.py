"""`xpeval cases requests`: OpenAI Chat request bodies (one per line) become unlabelled cases that
replay the same request; a line that cannot be one is listed with its number and reason and the
others are imported (`--strict`: nothing written); a file of any size is read a line at a time,
each line within its caps, and what is written is what `xpeval cases validate` accepts."""

from __future__ import annotations

import copy
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


REFUSED_LINES = [
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
    (
        json.dumps({"messages": [{"role": "user", "content": "hi", "name": "alice"}]}),
        "line 2: messages[0].name: not carried by a case",
    ),
    (
        json.dumps(body(tools=[WEATHER, {"type": "function", "function": {"name": "get_weather"}}])),
        "line 2: tools[1]: 'get_weather' is offered again (with a different schema than tools[0])",
    ),
    (
        json.dumps(body(tools=[WEATHER, WEATHER])),
        "line 2: tools[1]: 'get_weather' is offered again (with the same",
    ),
    (
        json.dumps(body(tools=[{**WEATHER, "function": {**WEATHER["function"], "strict": True}}])),
        "line 2: tools[0].function.strict: strict tools are not carried",
    ),
    (b"\xff\xfe{}".decode("latin-1"), "line 2: not UTF-8"),
]


@pytest.mark.parametrize(("line", "reason"), REFUSED_LINES)
def test_a_line_that_is_not_a_request_is_listed_with_its_number_and_the_others_are_imported(
    tmp_path: Path, line: str, reason: str, cli: Cli
) -> None:
    source = tmp_path / "t.jsonl"
    source.write_bytes(
        (json.dumps(body()) + "\n").encode()
        + line.encode("latin-1" if "\xff" in line else "utf-8")
        + b"\n"
        + (json.dumps(body()) + "\n").encode()
    )
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    refused = [text for text in done.stderr.splitlines() if text.startswith("requests: refused")]
    assert len(refused) == 1 and reason in refused[0], done.stderr
    assert "2 unlabelled cases" in done.stderr and "1 line(s) refused" in done.stderr
    assert [item.case.id for item in load_cases(tmp_path / "out")] == ["t_00001", "t_00003"]


@pytest.mark.parametrize(("line", "reason"), REFUSED_LINES[:3])
def test_strict_writes_nothing_when_a_line_is_refused(
    tmp_path: Path, line: str, reason: str, cli: Cli
) -> None:
    source = write(tmp_path / "t.jsonl", body(), line, body())
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"), "--strict")
    assert done.returncode == 2
    assert reason in done.stderr and "nothing written (--strict): 1 line(s) refused" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list((tmp_path / "out").iterdir())


def test_a_file_with_no_request_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    done = cli(
        "cases", "requests", str(write(tmp_path / "t.jsonl", "{}", "[]")), "--out", str(tmp_path / "o")
    )
    assert done.returncode == 2 and "no line is a request a case can carry" in done.stderr
    assert done.stderr.count("requests: refused line") == 2


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_a_separator_str_splitlines_knows_stays_inside_its_json_string(
    tmp_path: Path, separator: str, cli: Cli
) -> None:
    text = f"first{separator}second"
    original = body()
    original["messages"][-1]["content"] = text
    source = tmp_path / "t.jsonl"
    source.write_text(json.dumps(original, ensure_ascii=False) + "\n", encoding="utf-8")
    assert separator in source.read_text(encoding="utf-8")
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"))
    assert done.returncode == 0 and "0 line(s) refused" in done.stderr, done.stderr
    assert separator in (tmp_path / "out" / "t.jsonl").read_text(encoding="utf-8")
    (case,) = (item.case for item in load_cases(tmp_path / "out"))
    assert case.messages[-1] == UserMessage(content=text)
    checked = cli("cases", "validate", str(tmp_path / "out"))
    assert checked.returncode == 0 and "1 cases in 1 file(s) are valid" in checked.stdout, checked.stderr


def small_limits(folder: Path, max_input_mb: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(f"[tool.xpeval]\nmax_input_mb = {max_input_mb}\n")
    return folder


def test_a_line_above_the_line_cap_is_listed_not_read_and_the_others_are_imported(
    tmp_path: Path, cli: Cli
) -> None:
    project = small_limits(tmp_path / "project", 0.25)  # a line may be 64 KB
    long = body()
    long["messages"][-1]["content"] = "x" * 200_000
    source = write(tmp_path / "t.jsonl", body(), long, body())
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "requests: refused line 2: a line of 196 KB, above the 64 KB cap on a JSON line" in done.stderr
    assert "raise max_input_mb" in done.stderr
    assert [item.case.id for item in load_cases(tmp_path / "out")] == ["t_00001", "t_00003"]


def test_a_line_standing_for_more_values_than_the_cap_is_listed(tmp_path: Path, cli: Cli) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.xpeval]\nmax_yaml_nodes = 1000\n")
    dense = copy.deepcopy(body())
    dense["tools"][0]["function"]["parameters"]["properties"]["city"]["enum"] = list(range(2_000))
    source = write(tmp_path / "t.jsonl", dense, body())
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "requests: refused line 1: up to 2,0" in done.stderr and "more than 1,000" in done.stderr
    assert [item.case.id for item in load_cases(tmp_path / "out")] == ["t_00002"]


def test_cases_beyond_one_case_file_go_to_more_files_that_validate_accepts(tmp_path: Path, cli: Cli) -> None:
    project = small_limits(tmp_path / "project", 0.25)
    lines = []
    for index in range(12):
        line = body()
        line["messages"][-1]["content"] = f"{index} " + "y" * 40_000
        lines.append(line)
    source = write(tmp_path / "t.jsonl", *lines)
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"), cwd=project)
    assert done.returncode == 0 and "0 line(s) refused" in done.stderr, done.stderr
    written = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert written[-1] == "t.jsonl" and written[:-1] == [f"t.{n}.jsonl" for n in range(2, len(written) + 1)]
    assert len(written) > 1
    assert all((tmp_path / "out" / name).stat().st_size <= 0.25 * 1024 * 1024 for name in written)
    checked = cli("cases", "validate", str(tmp_path / "out"), cwd=project)
    assert checked.returncode == 0, checked.stderr
    assert f"12 cases in {len(written)} file(s) are valid" in checked.stdout


def test_a_tool_message_may_name_the_function_it_answers_and_no_other(tmp_path: Path, cli: Cli) -> None:
    named = body()
    named["messages"][3]["name"] = "get_weather"
    wrong = body()
    wrong["messages"][3]["name"] = "get_time"
    source = write(tmp_path / "t.jsonl", named, wrong)
    done = cli("cases", "requests", str(source), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "refused line 2: messages[3].name: 'get_time' is not the function" in done.stderr
    (case,) = (item.case for item in load_cases(tmp_path / "out"))
    assert case.messages[3] == ToolResultMessage(
        tool_call_id="functions.get_weather:0", name="get_weather", content="sunny"
    )


def test_an_out_folder_that_cannot_be_written_is_one_line(tmp_path: Path, cli: Cli) -> None:
    (tmp_path / "taken").write_text("a file, not a folder")
    done = cli(
        "cases", "requests", str(write(tmp_path / "t.jsonl", body())), "--out", str(tmp_path / "taken")
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"xpeval: {tmp_path / 'taken'}: cannot write the cases there:")
