"""Secrets, everywhere: planted in the environment and a base URL's query, echoed back by the
provider in its text, a tool call's arguments, a 401 message and a header — found in no file a
run writes (results, parquet, scorecards, cassettes) and in no log or console line."""

from __future__ import annotations

import logging
import secrets as random
from pathlib import Path

import httpx2
import pandas as pd
import pytest

from xpeval.adapters import secrets as known
from xpeval.adapters.contract import ProviderError, ToolCall, TurnResult
from xpeval.adapters.registry import adapter_ids, effective_contract, providers
from xpeval.adapters.wires import get_wire
from xpeval.evals.cases import Case
from xpeval.evals.cassettes import Mode
from xpeval.evals.emulator import EmulatorServer, Reply
from xpeval.evals.running.suite import SuiteConfig, run_suite

KEY_VARIABLES = sorted({var for provider in providers() for var in provider.key_vars})
CASES = ("calc_simple_01", "weather_simple_01", "calendar_multi_turn_01")


def planted(label: str) -> str:
    return f"planted-{label}-{random.token_hex(10)}"


class EchoingProvider:
    """A provider that hands every secret it was sent straight back, everywhere it can."""

    def __init__(self, server: EmulatorServer, echoed: list[str]) -> None:
        self.server = server
        self.echoed = echoed

    def upstream_for(self, case: Case, adapter_id: str) -> httpx2.AsyncBaseTransport:
        secret = " ".join(self.echoed)
        headers = {"x-echo": secret, "set-cookie": f"sid={self.echoed[0]}"}
        call = ToolCall(id="call_1", name=case.tools[0].name, arguments={"note": secret, secret[:20]: 1})
        if case.id == "weather_simple_01":
            reply = Reply.http_error(
                401, f"Incorrect API key provided: {secret}", error_type="invalid_api_key"
            )
        else:
            reply = Reply(result=TurnResult(text=f"Your key is {secret}", tool_calls=[call]), headers=headers)
        return self.server.transport(self.server.script([reply] * 40))


def every_text(folder: Path) -> dict[str, str]:
    texts = {}
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        texts[str(path)] = path.read_bytes().decode("utf-8", "replace")
        if path.suffix == ".parquet":
            texts[f"{path} (decoded)"] = pd.read_parquet(path).to_csv()
    return texts


@pytest.mark.slow
def test_no_planted_or_echoed_secret_reaches_any_file_or_log(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    known.forget_all()
    env_keys = {name: planted(name.lower()) for name in KEY_VARIABLES}
    for name, value in env_keys.items():
        monkeypatch.setenv(name, value)
    token, signature = planted("token"), planted("sig")
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", f"https://llm.example/v1?token={token}&team=qa")
    monkeypatch.setenv("MOONSHOT_BASE_URL", f"https://api.moonshot.ai/v1?Signature={signature}")
    everything = [*env_keys.values(), token, signature]
    caplog.set_level(logging.DEBUG)

    with EmulatorServer() as server:
        outcome = run_suite(
            SuiteConfig(
                mode=Mode.RECORD,
                target="emulator",
                adapters=tuple(adapter_ids()),
                cases=CASES,
                cassettes=tmp_path / "cassettes",
                results=tmp_path / "reports" / "results.jsonl",
                reports=tmp_path / "reports",
                concurrency=2,
                retries=0,
            ),
            emulator=EchoingProvider(server, everything),
            log=print,
        )
        sent = list(server.received)
    assert len(outcome.frame) == len(CASES) * len(adapter_ids())
    assert any(token in r.target for r in sent), "the base URL's query really went out"
    assert all("/v1?" not in r.target.split("?", 1)[0] for r in sent), "paths are built before the query"
    assert any(
        value in r.headers.values() or f"Bearer {value}" in r.headers.values()
        for r in sent
        for value in env_keys.values()
    ), "real keys were really sent"
    texts = every_text(tmp_path)
    texts["stdout+stderr"] = "".join(capfd.readouterr())
    texts["logs"] = caplog.text
    leaks = {where: [v for v in everything if v in text] for where, text in texts.items()}
    assert {where: found for where, found in leaks.items() if found} == {}
    results = (tmp_path / "reports" / "results.jsonl").read_text()
    assert "<scrubbed>" in results and "Incorrect API key provided: <scrubbed>" in results


def test_a_base_url_with_a_query_keeps_its_query_and_correct_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from xpeval.adapters.adapter import AdapterSettings
    from xpeval.adapters.contract import TurnRequest, UserMessage
    from xpeval.adapters.registry import create_adapter

    seen: list[httpx2.URL] = []
    for adapter_id in ("openai-compatible", "anthropic-messages", "google-genai", "azure"):
        wire = get_wire(effective_contract(adapter_id).wire)

        def answer(request: httpx2.Request) -> httpx2.Response:
            seen.append(request.url)
            rendered = wire.render(TurnResult(text="ok"), model="m", stream=False)  # noqa: B023
            return httpx2.Response(rendered.status, headers=rendered.headers, content=rendered.body)

        settings = AdapterSettings(
            model="m",
            base_url="https://proxy.example/base?tenant=t1&sig=abcdefgh123",
            transport=httpx2.MockTransport(answer),
        )
        adapter = create_adapter(adapter_id, settings)
        result = asyncio.run(adapter.turn(TurnRequest(model="m", messages=[UserMessage(content="hi")])))
        assert result.error is None, (adapter_id, result.error)
    for url in seen:
        assert url.path.startswith("/base/") and "?" not in url.path, url
        assert url.params["tenant"] == "t1" and url.params["sig"] == "abcdefgh123"
    _ = ProviderError
