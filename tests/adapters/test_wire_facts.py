"""What the wires state about themselves is what they do: the paths they serve, where their
requests carry a tool, how a recording must be served to their SDK."""

from __future__ import annotations

import ast
import asyncio
import json
import re
from pathlib import Path

import pytest

from xpeval.adapters.contract import ToolSpec, TurnRequest, TurnResult, UserMessage, WireName
from xpeval.adapters.registry import effective_contract
from xpeval.adapters.schema import DIALECTS, Dialect, prepare_tools
from xpeval.adapters.wires import get_wire, wire_for_path, wire_names
from xpeval.evals.conformance._fixtures import WEATHER, request, scripted
from xpeval.evals.emulator import Reply

NOW = ToolSpec(name="now", description="The time.", parameters={"type": "object", "properties": {}})


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_every_adapters_request_goes_to_a_path_its_own_wire_serves(
    xpeval_adapter_id: str, stream: bool
) -> None:
    adapter, script = scripted(xpeval_adapter_id, Reply(result=TurnResult(text="ok")))
    asyncio.run(adapter.turn(request(stream=stream)))
    (sent,) = script.requests
    served = wire_for_path(str(sent.url))
    assert served is not None and served.name == effective_contract(xpeval_adapter_id).wire
    assert served.is_stream(str(sent.url), json.loads(sent.content)) is stream


def test_a_path_no_wire_serves_has_no_wire() -> None:
    assert wire_for_path("https://oauth2.googleapis.com/token") is None
    assert wire_for_path("/v1/models") is None


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("wire_name", wire_names())
def test_encode_lays_every_tool_out_as_the_wires_layout_says(wire_name: WireName, dialect: Dialect) -> None:
    wire = get_wire(wire_name)
    tools = prepare_tools(dialect, [WEATHER])
    sent = tools.sent[0]
    turn = TurnRequest(model="m", messages=[UserMessage(content="hi")], tools=[WEATHER])
    layout = wire.tool_layout(dialect, tools.strict)
    assert wire.tool_definitions(wire.encode(turn, tools)) == [
        layout.definition(sent.name, sent.description, sent.parameters)
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("wire_name", wire_names())
def test_only_a_layout_that_says_so_omits_the_schema_of_a_tool_without_arguments(
    wire_name: WireName, dialect: Dialect
) -> None:
    wire = get_wire(wire_name)
    tools = prepare_tools(dialect, [NOW])
    turn = TurnRequest(model="m", messages=[UserMessage(content="hi")], tools=[NOW])
    layout = wire.tool_layout(dialect, tools.strict)
    (definition,) = wire.tool_definitions(wire.encode(turn, tools))
    assert (layout.schema(definition) is None) is layout.schema_optional


def test_a_recording_is_served_to_the_sdk_as_recorded_unless_its_wire_reframes_it() -> None:
    headers = {"content-type": "application/json"}
    array = json.dumps([{"candidates": []}, {"candidates": []}]).encode()
    google = get_wire("google-genai")
    streamed = "https://g/v1beta/models/m:streamGenerateContent"
    new_headers, body = google.replayable_response(streamed, headers, array)
    assert new_headers["content-type"] == "text/event-stream"
    assert body.count(b"data: ") == 2
    assert google.replayable_response(streamed + "?alt=sse", headers, array) == (headers, array)
    for name in wire_names():
        if name != "google-genai":
            served = get_wire(name).replayable_response("/v1/chat/completions", headers, array)
            assert served == (headers, array)


def test_the_model_a_recording_names_is_read_where_its_wire_puts_it() -> None:
    assert get_wire("openai-chat").recorded_model("/v1/chat/completions", {"model": "gpt"}) == "gpt"
    assert get_wire("anthropic-messages").recorded_model("/v1/messages", None) is None
    gemini = "/v1beta/models/gemini-x:generateContent"
    assert get_wire("google-genai").recorded_model(gemini, {}) == "gemini-x"


def test_every_test_the_wire_rules_name_exists() -> None:
    """adapters/wires/RULES.md backs each rule with a named test: each must exist."""
    repo = Path(__file__).resolve().parents[2]
    text = (repo / "adapters" / "wires" / "RULES.md").read_text(encoding="utf-8")
    defined = {
        node.name
        for folder in (repo / "tests", repo / "evals" / "conformance")
        for path in folder.rglob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }
    files = re.findall(r"`((?:tests|evals/conformance)/[\w/]+\.py)", text)
    named = set(re.findall(r"`(?:(?:tests|evals/conformance)/[\w/]+\.py)?(?:::)?(test_\w+)`", text))
    assert files and named
    assert [f for f in files if not (repo / f).is_file()] == []
    assert sorted(named - defined) == []
