"""Live schema acceptance, against the emulator answering as real providers do.

Each adapter with a live provider is sent every corpus tool once. The emulator answers a probe
with a real provider's rejection (an HTTP 400 carrying a message recorded from that provider,
`shared/corpus/errors`) where the offline checker says the sent schema is refused, and with a
normal answer elsewhere. The built-in adapters' passes leave the checker nothing to refuse, so
the test also registers adapters whose dialect lags their provider's rules (a plugin that sends
another provider's dialect): their refusals are what the real messages answer. Then a
disagreement and a newly refused tool are injected and must be alerts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests._corpus import corpus_path
from tests.acceptance.test_provider_rejections import REPLAYS
from tests.nightly._fake import FakeServers, PerfectModel, set_keys
from tests.nightly.conftest import with_
from xpeval.adapters.contract import TurnResult
from xpeval.adapters.registry import DirectEntry, get_entry, register_adapter, unregister_adapter
from xpeval.adapters.schema import Dialect
from xpeval.evals.acceptance.sources.tool_files import FoundTool, read_tools
from xpeval.evals.emulator import EmulatorServer, Reply
from xpeval.evals.nightly.config import NightlyConfig
from xpeval.evals.nightly.outcome import EXIT_ALERTS, EXIT_PASSED
from xpeval.evals.nightly.run import run_nightly
from xpeval.evals.nightly.schema_probes import predict
from xpeval.evals.results.history import load_schema_history

LAGGING: dict[str, tuple[str, Dialect]] = {
    # adapter id: (the adapter whose wire and provider it has, the dialect it sends)
    "lagging-openai-chat": ("openai-chat", "gemini-json-schema"),
    "lagging-openai-strict": ("openai-chat", "anthropic-strict"),
    "lagging-anthropic": ("anthropic-messages", "gemini-json-schema"),
    "lagging-gemini": ("google-genai", "openai"),
}
ADAPTERS = ("openai-chat", "openai-responses", "anthropic-messages", "google-genai", "moonshot", *LAGGING)
CORPUS_FILE = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini", "moonshot": "moonshot"}
"""The corpus file of each provider's recorded rejections."""


@pytest.fixture
def lagging() -> Iterator[None]:
    for adapter_id, (parent, dialect) in LAGGING.items():
        entry = get_entry(parent)
        assert isinstance(entry, DirectEntry)
        register_adapter(
            adapter_id,
            DirectEntry(
                wire=entry.wire, schema_dialect=dialect, provider=entry.provider, factory=entry.factory
            ),
        )
    yield
    for adapter_id in LAGGING:
        unregister_adapter(adapter_id)


class RealRejections:
    """Real rejection messages of a provider, by the checker rule they show (the replays of
    tests/acceptance/test_provider_rejections.py tie each recorded message to its rule)."""

    def __init__(self) -> None:
        folder = corpus_path("errors")
        self.lines: dict[str, list[dict[str, Any]]] = {
            provider: [json.loads(raw) for raw in (folder / f"{name}.jsonl").read_text().splitlines()]
            for provider, name in CORPUS_FILE.items()
        }
        self.used: set[str] = set()
        self.by_rule: set[str] = set()

    def message(self, provider: str, rules: tuple[str, ...]) -> str:
        lines = self.lines[provider]
        for rule in rules:
            for replay in REPLAYS:
                if replay.provider == provider and replay.rule == rule:
                    line = next(line for line in lines if replay.fragment in line["message"])
                    self.used.add(line["message"])
                    self.by_rule.add(line["message"])
                    return str(line["message"])
        line = next(line for line in lines if line["status"] == 400)
        self.used.add(line["message"])
        return str(line["message"])


class ProviderScripts:
    """One emulator script per (adapter, tool): a real 400 where the checker refuses, else an answer."""

    def __init__(self, server: EmulatorServer, tools: list[FoundTool], rejections: RealRejections) -> None:
        self.server = server
        self.tools = tools
        self.rejections = rejections
        self.flipped: dict[tuple[str, str], str] = {}
        """(adapter, tool) -> "accept" or "refuse": the provider answers against the checker."""
        self.scripts: dict[tuple[str, str], str] = {}
        self.predicted: dict[tuple[str, str], str] = {}
        self.pool = httpx2.AsyncHTTPTransport()
        """One connection pool for every probe of a night (one TLS context, not one per probe)."""

    def transport(self, adapter_id: str, key: str) -> Any:
        if (adapter_id, key) not in self.scripts:
            tool = next(t for t in self.tools if t.key == key)
            predicted, rules, _ = predict(adapter_id, tool)
            self.predicted[(adapter_id, key)] = predicted
            provider = get_entry(adapter_id).provider.name
            refuse = predicted == "refused"
            refuse = {"accept": False, "refuse": True}.get(self.flipped.get((adapter_id, key), ""), refuse)
            if refuse:
                message = self.rejections.message(provider, rules or ("-",))
                reply = Reply.http_error(400, message, error_type="invalid_request_error")
            else:
                reply = Reply(result=TurnResult(text="OK"))
            self.scripts[(adapter_id, key)] = self.server.script([reply])
        return self.server.transport(self.scripts[(adapter_id, key)], pool=self.pool)


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as running:
        yield running


@pytest.fixture
def live(monkeypatch: pytest.MonkeyPatch) -> None:
    set_keys(monkeypatch, ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MOONSHOT_API_KEY"])


def _nightly(config: NightlyConfig) -> NightlyConfig:
    return with_(config, adapters=ADAPTERS, cases=("weather_simple_01",), categories=(), schemas=True)


@pytest.mark.corpus
def test_live_answers_are_recorded_next_to_the_checkers_prediction(
    config: NightlyConfig,
    model: PerfectModel,
    server: EmulatorServer,
    lagging: None,
    live: None,
    tmp_path: Path,
) -> None:
    tools = read_tools([Path(__file__).resolve().parents[2] / "evals" / "acceptance" / "corpus"]).tools
    rejections = RealRejections()
    scripts = ProviderScripts(server, tools, rejections)

    outcome = run_nightly(_nightly(config), servers=FakeServers(), probe_upstream=scripts.transport)

    assert outcome.exit_code == EXIT_PASSED, outcome.summary()
    assert len(outcome.probes) == len(ADAPTERS) * len(tools)
    by_answer = {
        answer: [p for p in outcome.probes if p.answer == answer] for answer in ("accepted", "refused")
    }
    refused = by_answer["refused"]
    assert refused and all(p.predicted == "refused" and p.status == 400 and p.rules for p in refused)
    assert {p.message for p in refused} <= rejections.used, "each refusal carries the provider's own text"
    assert len(rejections.by_rule) >= 6, "real messages matched to the rule the checker names"
    assert {p.adapter for p in refused} == set(LAGGING), "the built-in adapters send nothing the rules refuse"
    assert all(p.agrees is not False for p in outcome.probes)
    not_sent = [p for p in outcome.probes if p.answer == "not-sent"]
    assert not_sent and all(p.predicted == "not-sent" and p.message for p in not_sent)
    assert len(server.received) == len(outcome.probes) - len(not_sent), "one request per sent pair"
    stored = load_schema_history(config.history)
    assert len(stored) == len(outcome.probes) and set(stored["run"]) == {outcome.run}
    assert (config.run.reports / "schema_acceptance_live.csv").is_file()
    assert f"live schema acceptance: {len(outcome.probes)} probes" in outcome.summary()
    providers = sorted({get_entry(p.adapter).provider.name for p in refused})
    print(
        f"{len(refused)} refusals answered with {len(rejections.used)} real rejection messages "
        f"({len(rejections.by_rule)} matched to the rule the checker names) of {', '.join(providers)}"
    )


def _probe_body(server: EmulatorServer, adapter_script: str) -> dict[str, Any]:
    request = next(r for r in server.received if r.script == adapter_script)
    body: dict[str, Any] = request.json()
    return body


@pytest.mark.corpus
def test_a_probe_is_one_user_message_one_tool_auto_and_the_smallest_budget(
    config: NightlyConfig, model: PerfectModel, server: EmulatorServer, lagging: None, live: None
) -> None:
    tools = read_tools(
        [Path(__file__).resolve().parents[2] / "evals" / "acceptance" / "corpus" / "basic"]
    ).tools[:1]
    corpus = tools[0].path
    assert corpus is not None
    scripts = ProviderScripts(server, tools, RealRejections())
    nightly = with_(
        _nightly(config), adapters=("openai-chat", "openai-responses", "anthropic-messages"), corpus=corpus
    )

    run_nightly(nightly, servers=FakeServers(), probe_upstream=scripts.transport)

    chat = _probe_body(server, scripts.scripts[("openai-chat", tools[0].key)])
    assert len(chat["messages"]) == 1 and chat["messages"][0]["role"] == "user"
    assert len(chat["tools"]) == 1 and chat["tool_choice"] == "auto" and chat["max_completion_tokens"] == 1
    responses = _probe_body(server, scripts.scripts[("openai-responses", tools[0].key)])
    assert len(responses["tools"]) == 1 and responses["max_output_tokens"] == 16
    messages = _probe_body(server, scripts.scripts[("anthropic-messages", tools[0].key)])
    assert (
        len(messages["tools"]) == 1
        and messages["max_tokens"] == 1
        and messages["tool_choice"]["type"] == "auto"
    )


@pytest.mark.slow
@pytest.mark.corpus
def test_a_disagreement_and_a_newly_refused_tool_are_alerts(
    config: NightlyConfig, model: PerfectModel, server: EmulatorServer, lagging: None, live: None
) -> None:
    tools = read_tools([Path(__file__).resolve().parents[2] / "evals" / "acceptance" / "corpus"]).tools
    rejections = RealRejections()
    first = ProviderScripts(server, tools, rejections)
    nightly = _nightly(config)
    good = run_nightly(nightly, servers=FakeServers(), probe_upstream=first.transport)
    assert good.exit_code == EXIT_PASSED, good.summary()

    accepted = next(p for p in good.probes if p.adapter == "anthropic-messages" and p.answer == "accepted")
    refused = next(p for p in good.probes if p.adapter == "lagging-gemini" and p.answer == "refused")
    second = ProviderScripts(server, tools, rejections)
    second.flipped = {
        (accepted.adapter, accepted.schema): "refuse",
        (refused.adapter, refused.schema): "accept",
    }
    tonight = run_nightly(nightly, servers=FakeServers(), probe_upstream=second.transport)

    assert tonight.exit_code == EXIT_ALERTS
    schema = [a for a in tonight.alerts if a.kind == "schema"]
    newly = [a for a in schema if a.against == f"last good nightly {good.run}"]
    assert [(a.adapter, a.cases) for a in newly] == [("anthropic-messages", (accepted.schema,))]
    assert "newly refused (accepted then): 400: " in newly[0].change
    disagreements = {(a.adapter, a.cases[0]): a.change for a in schema if a.against == "the offline checker"}
    assert set(disagreements) == {(accepted.adapter, accepted.schema), (refused.adapter, refused.schema)}
    assert (
        "refused, the checker predicts accepted: 400: " in disagreements[(accepted.adapter, accepted.schema)]
    )
    assert "accepted, the checker predicts refused (" in disagreements[(refused.adapter, refused.schema)]
    summary = tonight.summary()
    assert (
        f"SCHEMA anthropic-messages (claude-haiku-4-5) schema acceptance vs last good nightly {good.run}"
        in summary
    )
    assert summary.splitlines()[-1] == "nightly: FAILED (3 alert(s))"


def test_a_probe_retries_as_the_runner_does_and_honours_retry_after_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 429 with `Retry-After: 0` is retried at once (the probe's own loop read 0 as absent and
    waited 1 s), and the retry's answer is the probe's."""
    from xpeval.evals.nightly import schema_probes
    from xpeval.evals.nightly.plan import AdapterTarget
    from xpeval.evals.running.suite import SuiteConfig

    answers = iter(
        [
            httpx2.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}}),
            httpx2.Response(
                200,
                json={
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "gpt-4.1-mini",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "OK"},
                        }
                    ],
                },
            ),
        ]
    )
    transport = httpx2.MockTransport(lambda request: next(answers))
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr("xpeval.evals.nightly.schema_probes.asyncio.sleep", sleep)
    tool = read_tools(
        [Path(__file__).resolve().parents[2] / "evals" / "acceptance" / "corpus" / "basic"]
    ).tools[0]
    target = AdapterTarget("openai-chat", "provider", ("gpt-4.1-mini",))

    probes = schema_probes.probe_schemas(
        [target], [tool], SuiteConfig(retries=2), upstream=lambda adapter, key: transport
    )

    assert [p.answer for p in probes] == ["accepted"]
    assert waited == [0.0]
