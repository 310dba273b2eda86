"""Planted secrets: recorded through every adapter over real HTTP, found nowhere afterwards.

Each registered adapter records one episode against the loopback emulator with secrets planted
in every place the scrubbing rules cover: the provider's API key from the environment (sent as
authorization / x-api-key / api-key / x-goog-api-key), a cookie, a `key=` query parameter,
response set-cookie and organization/project headers, a configured secret in the prompt and one
echoed in a gzip-compressed response body. Afterwards none of them may appear in the cassette,
in the problem texts an episode hands to the runner's reports, or in any captured log line.
"""

from __future__ import annotations

import asyncio
import logging
import secrets as random
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.cassettes._episodes import MODEL, SIMPLE, answer, builtin_case
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import TurnRequest, UserMessage
from xpeval.adapters.registry import create_adapter, providers
from xpeval.evals.cassettes import CassetteStore, Mode, bind_cassette, load_cassette
from xpeval.evals.emulator import EmulatorServer, Reply

CASE = builtin_case(SIMPLE)
PROVIDER_KEY_VARIABLES = sorted({var for provider in providers() for var in provider.key_vars})


def planted(label: str) -> str:
    return f"planted-{label}-{random.token_hex(8)}"


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def test_no_planted_secret_survives_recording(
    xpeval_adapter_id: str,
    emulator: EmulatorServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    env_keys = {name: planted(name.lower()) for name in PROVIDER_KEY_VARIABLES}
    for name, value in env_keys.items():
        monkeypatch.setenv(name, value)
    prompt_secret, echoed_secret, cookie, query_key = map(planted, ("prompt", "echo", "cookie", "query"))
    response_headers = {
        "set-cookie": f"sid={planted('set-cookie')}; Path=/; HttpOnly",
        "openai-organization": planted("org"),
        "openai-project": planted("project"),
        "anthropic-organization-id": planted("anthropic-org"),
    }
    everything = [
        *env_keys.values(),
        prompt_secret,
        echoed_secret,
        cookie,
        query_key,
        *(v.split("=", 1)[-1].split(";")[0] for v in response_headers.values()),
    ]
    caplog.set_level(logging.DEBUG)

    reply = Reply(result=answer(text=f"You said {echoed_secret}."), headers=response_headers, gzip=True)
    script = emulator.script([reply, reply])
    store = CassetteStore(tmp_path / "cassettes")
    prompt = UserMessage(content=f"My token is {prompt_secret}. Convert 26.2 mi to km.")
    request = TurnRequest(model=MODEL, tools=CASE.tools, messages=[prompt])

    async def record() -> list[str]:
        episode = bind_cassette(
            store,
            xpeval_adapter_id,
            CASE.id,
            Mode.RECORD,
            source="emulated",
            model=MODEL,
            secrets=[prompt_secret, echoed_secret],
            upstream=emulator.transport(script),
        )
        adapter = create_adapter(
            xpeval_adapter_id,
            AdapterSettings(
                model=MODEL, transport=episode.transport, headers={"cookie": f"session={cookie}"}
            ),
        )
        result = await adapter.turn(request)
        assert result.error is None and result.text == f"You said {echoed_secret}."
        sent = emulator.received[-1]
        async with httpx2.AsyncClient(transport=episode.transport) as client:  # Gemini-style `key=`
            separator = "&" if "?" in sent.target else "?"
            response = await client.post(
                f"https://provider.example{sent.target}{separator}key={query_key}",
                content=sent.body,
                headers={"content-type": "application/json"},
            )
            assert response.status_code == 200
        await adapter.aclose()
        return episode.finish()

    assert asyncio.run(record()) == []
    received = emulator.received[-2]
    assert any(
        value in received.headers.values() or f"Bearer {value}" in received.headers.values()
        for value in env_keys.values()
    ), "the adapter must really have sent a planted key"
    assert f"session={cookie}" in received.headers.get("cookie", "")

    async def replay_changed() -> list[str]:
        episode = bind_cassette(
            store,
            xpeval_adapter_id,
            CASE.id,
            Mode.REPLAY,
            source="emulated",
            model=MODEL,
            secrets=[prompt_secret, echoed_secret],
        )
        adapter = create_adapter(xpeval_adapter_id, AdapterSettings(model=MODEL, transport=episode.transport))
        await adapter.turn(request.model_copy(update={"temperature": 0.5}))
        await adapter.aclose()
        return episode.finish()

    problems = asyncio.run(replay_changed())
    assert problems, "the changed request must be reported (with its diff)"
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "problems.txt").write_text("\n".join(problems))

    path = store.path(xpeval_adapter_id, CASE.id, MODEL)
    cassette_text = path.read_text()
    decoded = "\n".join(
        f"{i.uri} {i.request_headers} {i.request_body!r} {i.response_headers} {i.response_body!r}"
        for i in load_cassette(path)
    )
    assert "!!binary" not in cassette_text, "bodies are stored decompressed, so nothing hides in gzip"
    for where, text in [
        ("cassette", cassette_text),
        ("decoded cassette", decoded),
        ("reports", (reports / "problems.txt").read_text()),
        ("logs", caplog.text),
    ]:
        leaked = [value for value in everything if value in text]
        assert leaked == [], f"{where} of {xpeval_adapter_id} leaks {leaked}"
    assert "<scrubbed>" in cassette_text
