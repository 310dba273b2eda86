"""The loopback emulator: every adapter's URL shape, streamed frames, and the faults it scripts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import ToolCall, TurnRequest, TurnResult, UserMessage
from xpeval.adapters.registry import adapter_ids, create_adapter, effective_contract
from xpeval.evals.emulator import EmulatorServer, Reply

DIRECT = [a for a in adapter_ids() if effective_contract(a).chain == (a,)]
REQUEST = TurnRequest(model="emulated-model", messages=[UserMessage(content="Weather in Paris?")])
RESULT = TurnResult(
    text="Sunny, 21 C.", tool_calls=[ToolCall(id="call_9", name="get_weather", arguments={"city": "Paris"})]
)


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def turn(
    emulator: EmulatorServer, adapter_id: str, *replies: Reply, stream: bool = False, **settings: Any
) -> TurnResult:
    script = emulator.script(list(replies))

    async def go() -> TurnResult:
        settings_ = AdapterSettings(transport=emulator.transport(script), **settings)
        adapter = create_adapter(adapter_id, settings_)
        try:
            return await asyncio.wait_for(adapter.turn(REQUEST.model_copy(update={"stream": stream})), 20)
        finally:
            await adapter.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_every_adapter_gets_its_wires_answer_at_its_own_url(
    xpeval_adapter_id: str, emulator: EmulatorServer, stream: bool
) -> None:
    result = turn(emulator, xpeval_adapter_id, Reply(result=RESULT), stream=stream)
    assert result.error is None
    assert (result.text, result.tool_calls[0].name, result.tool_calls[0].arguments) == (
        "Sunny, 21 C.",
        "get_weather",
        {"city": "Paris"},
    )


@pytest.mark.parametrize(
    ("shaped", "settings", "path"),
    [
        (
            "vertex-ai",
            {"project": "proj-1", "location": "europe-west4"},
            "/projects/proj-1/locations/europe-west4/publishers/google/models/emulated-model:generateContent",
        ),
        ("vertex-ai", {}, "/publishers/google/models/emulated-model:generateContent"),
        ("azure-openai", {}, "/openai/responses?api-version="),
        ("azure", {}, "/openai/v1/responses"),
        ("google-genai", {}, "/models/emulated-model:generateContent"),
        ("anthropic-messages", {}, "/v1/messages"),
        ("mimo", {}, "/v1/chat/completions"),
    ],
)
def test_provider_url_shapes_are_served(
    emulator: EmulatorServer, shaped: str, settings: dict[str, Any], path: str
) -> None:
    result = turn(emulator, shaped, Reply(result=RESULT), **settings)
    assert result.error is None and result.text == "Sunny, 21 C."
    assert path in emulator.received[-1].target


def test_stream_frames_arrive_as_separate_flushes(emulator: EmulatorServer) -> None:
    script = emulator.script([Reply(result=TurnResult(text="a" * 64), chunk_delay=0.05)])

    async def read() -> list[float]:
        arrivals = []
        async with httpx2.AsyncClient(transport=emulator.transport(script)) as client:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
            url = "https://api.openai.com/v1/chat/completions"
            async with client.stream("POST", url, json=body) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                async for _ in response.aiter_raw():
                    arrivals.append(time.perf_counter())
        return arrivals

    arrivals = asyncio.run(read())
    assert len(arrivals) >= 5, "one read per flushed frame"
    assert arrivals[-1] - arrivals[0] >= 0.15


@pytest.mark.parametrize("direct", DIRECT)
def test_an_http_error_carries_its_status_and_retry_after(direct: str, emulator: EmulatorServer) -> None:
    result = turn(emulator, direct, Reply.http_error(429, "slow down", retry_after=7))
    assert result.error is not None
    assert (result.error.status, result.error.retry_after, result.error.kind) == (429, 7.0, "http")
    assert result.error.retryable


@pytest.mark.parametrize("direct", DIRECT)
def test_an_error_inside_a_stream_is_a_stream_error(direct: str, emulator: EmulatorServer) -> None:
    result = turn(emulator, direct, Reply.stream_error("overloaded mid-stream"), stream=True)
    assert result.error is not None and result.error.kind == "stream"
    assert "overloaded mid-stream" in result.error.message


@pytest.mark.parametrize("direct", DIRECT)
def test_a_stream_cut_short_is_a_connection_error(direct: str, emulator: EmulatorServer) -> None:
    result = turn(emulator, direct, Reply(result=TurnResult(text="b" * 300), truncate_after=2), stream=True)
    assert result.error is not None and result.error.kind == "connection"


def test_a_slow_response_meets_the_clients_timeout(emulator: EmulatorServer) -> None:
    started = time.perf_counter()
    result = turn(emulator, "openai-chat", Reply(result=RESULT, delay=2.0), timeout=0.3)
    assert result.error is not None and result.error.kind == "timeout"
    assert time.perf_counter() - started < 1.9


def test_an_unknown_path_and_an_exhausted_script_are_clear_errors(emulator: EmulatorServer) -> None:
    script = emulator.script([])

    async def send(url: str) -> httpx2.Response:
        async with httpx2.AsyncClient(transport=emulator.transport(script)) as client:
            return await client.post(url, json={"model": "m"})

    unknown = asyncio.run(send("https://api.example.com/v1/embeddings"))
    assert unknown.status_code == 404 and "no wire serves POST /v1/embeddings" in unknown.text
    exhausted = asyncio.run(send("https://api.openai.com/v1/chat/completions"))
    assert exhausted.status_code == 500 and "has no reply left" in exhausted.text


def test_concurrent_scripts_answer_only_their_own_episode(emulator: EmulatorServer) -> None:
    scripts = {
        f"episode-{i}": emulator.script([Reply(result=TurnResult(text=f"answer {i}"))]) for i in range(8)
    }

    async def all_at_once() -> dict[str, str | None]:
        async def one(name: str, script: str) -> tuple[str, str | None]:
            settings = AdapterSettings(transport=emulator.transport(script))
            adapter = create_adapter("anthropic-messages", settings)
            try:
                return name, (await adapter.turn(REQUEST)).text
            finally:
                await adapter.aclose()

        return dict(await asyncio.gather(*(one(n, s) for n, s in scripts.items())))

    texts = asyncio.run(all_at_once())
    assert texts == {name: f"answer {name.split('-')[1]}" for name in scripts}
