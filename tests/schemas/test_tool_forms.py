"""`xpeval schemas --tools PATH`: every common tool form read into rows, one per tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.schemas._cli import WEATHER_SCHEMA, schemas, write

SEARCH_SCHEMA = {"type": "object", "properties": {"query": {"type": "string", "minLength": 1}}}
FAST = ("--json", "--no-fidelity", "--adapters", "openai-chat")


def _rows(capsys: pytest.CaptureFixture[str], path: Path) -> list[dict[str, Any]]:
    code, lines, _, err = schemas(capsys, *FAST, "--tools", str(path))
    assert code == 0, err
    return lines


def _sent_parameters(line: dict[str, Any]) -> Any:
    return line["rewritten"]["function"]["parameters"]


def test_an_openai_chat_tools_file_gives_a_row_per_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "openai_tools.json",
        [
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "w", "parameters": WEATHER_SCHEMA},
            },
            {"type": "function", "function": {"name": "ping"}},  # OpenAI: no parameters = none
        ],
    )
    lines = _rows(capsys, path)
    assert [(line["schema"], line["tool"], line["form"]) for line in lines] == [
        ("openai_tools#get_weather", "get_weather", "openai-chat"),
        ("openai_tools#ping", "ping", "openai-chat"),
    ]
    assert _sent_parameters(lines[0]) == WEATHER_SCHEMA
    assert _sent_parameters(lines[1]) == {"type": "object", "properties": {}}
    assert {line["source"] for line in lines} == {str(path)}


def test_an_openai_responses_tools_file_is_read_strict_flag_and_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "responses.json",
        [
            {
                "type": "function",
                "name": "get_weather",
                "description": "w",
                "parameters": WEATHER_SCHEMA,
                "strict": True,
            }
        ],
    )
    [line] = _rows(capsys, path)
    assert (line["schema"], line["form"]) == ("responses#get_weather", "openai-responses")
    assert _sent_parameters(line) == WEATHER_SCHEMA


def test_a_single_anthropic_tool_is_keyed_by_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "search.json", {"name": "search", "description": "s", "input_schema": SEARCH_SCHEMA}
    )
    [line] = _rows(capsys, path)
    assert (line["schema"], line["tool"], line["form"]) == ("search", "search", "anthropic")
    assert _sent_parameters(line)["properties"] == SEARCH_SCHEMA["properties"]


@pytest.mark.parametrize("envelope", [False, True], ids=["result", "json-rpc"])
def test_an_mcp_tools_list_result_is_read_bare_or_in_its_json_rpc_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], envelope: bool
) -> None:
    result = {
        "tools": [
            {
                "name": "search",
                "title": "Search",
                "inputSchema": SEARCH_SCHEMA,
                "annotations": {"readOnlyHint": True},
            },
            {"name": "get_weather", "description": "w", "inputSchema": WEATHER_SCHEMA},
        ],
        "nextCursor": None,
    }
    document = {"jsonrpc": "2.0", "id": 2, "result": result} if envelope else result
    lines = _rows(capsys, write(tmp_path / "server.json", document))
    assert [(line["schema"], line["form"]) for line in lines] == [
        ("server#search", "mcp"),
        ("server#get_weather", "mcp"),
    ]
    assert _sent_parameters(lines[1]) == WEATHER_SCHEMA


def test_a_list_may_mix_every_form(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mixed = [
        {"name": "own", "description": "", "parameters": WEATHER_SCHEMA},
        {"type": "function", "function": {"name": "chat", "parameters": WEATHER_SCHEMA}},
        {"type": "function", "name": "responses", "parameters": WEATHER_SCHEMA},
        {"name": "anthropic", "input_schema": WEATHER_SCHEMA},
        {"name": "mcp", "inputSchema": WEATHER_SCHEMA},
        {"tools": [{"name": "mcp_listed", "inputSchema": WEATHER_SCHEMA}]},
    ]
    lines = _rows(capsys, write(tmp_path / "mixed.json", mixed))
    assert [(line["tool"], line["form"]) for line in lines] == [
        ("own", "xpeval"),
        ("chat", "openai-chat"),
        ("responses", "openai-responses"),
        ("anthropic", "anthropic"),
        ("mcp", "mcp"),
        ("mcp_listed", "mcp"),
    ]
    assert all(_sent_parameters(line) == WEATHER_SCHEMA for line in lines)


def test_a_folder_gives_every_tool_of_every_file_each_form_detected_per_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path / "a" / "chat.json", [{"type": "function", "function": {"name": f"t{i}"}} for i in range(3)]
    )
    write(tmp_path / "b.json", {"name": "b", "input_schema": SEARCH_SCHEMA})
    write(tmp_path / "notes.txt", "not read")
    lines = _rows(capsys, tmp_path)
    assert [(line["schema"], line["form"]) for line in lines] == [
        ("a/chat#t0", "openai-chat"),
        ("a/chat#t1", "openai-chat"),
        ("a/chat#t2", "openai-chat"),
        ("b", "anthropic"),
    ]


def test_every_adapter_measures_every_tool_of_a_file_with_fidelity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "two.json",
        [{"name": "a", "input_schema": SEARCH_SCHEMA}, {"name": "b", "inputSchema": WEATHER_SCHEMA}],
    )
    code, lines, _, err = schemas(
        capsys, "--json", "--examples", "3", "--tools", str(path), "--adapters", "moonshot", "vertex-ai"
    )
    assert code == 0, err
    assert [(line["schema"], line["adapter"]) for line in lines] == [
        ("two#a", "moonshot"), ("two#a", "vertex-ai"), ("two#b", "moonshot"), ("two#b", "vertex-ai"),
    ]  # fmt: skip
    assert all(line["loss_rate"] is not None for line in lines)


def test_parallel_workers_read_a_files_tools_in_the_same_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "many.json", [{"name": f"t{i}", "inputSchema": WEATHER_SCHEMA} for i in range(4)])
    args = ["--json", "--no-fidelity", "--tools", str(path), "--adapters", "vertex-ai"]
    _, one, _, _ = schemas(capsys, *args)
    _, two, _, _ = schemas(capsys, *args, "--workers", "2")
    assert (
        [line["schema"] for line in two]
        == [line["schema"] for line in one]
        == [f"many#t{i}" for i in range(4)]
    )


def test_a_built_in_provider_tool_is_skipped_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "responses.json",
        [{"type": "web_search"}, {"type": "function", "name": "get_weather", "parameters": WEATHER_SCHEMA}],
    )
    code, lines, _, err = schemas(capsys, *FAST, "--tools", str(path))
    assert code == 0 and [line["tool"] for line in lines] == ["get_weather"]
    assert f"skipped {path}[0]" in err and "'web_search'" in err
