"""A case turn may name the adapter that plays it: the conversation so far is converted for it
(ids, reasoning state) and the turn continues there; a handoff a rule makes impossible is an error
of its own kind, `handoff`, never a crash (docs/provider-loop-rules.md, "Handoff")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from xpeval.adapters.adapter import Adapter, AdapterSettings
from xpeval.adapters.contract import ToolCall, TurnResult
from xpeval.adapters.registry import create_adapter
from xpeval.adapters.wires import get_wire
from xpeval.adapters.wires.handoff import GEMINI_FOREIGN_SIGNATURE
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.emulator import Reply, ScriptedTransport
from xpeval.evals.running.play import play_case

VIENNA = ToolCall(id="call_vienna_1", name="get_current_weather", arguments={"city": "Vienna"})
FORECAST = ToolCall(
    id="call_forecast_1",
    name="get_forecast",
    arguments={"location": {"city": "Vienna", "country_code": "AT"}, "days": 3},
)


def _case(**follow_up: object) -> Case:
    case = next(item.case for item in load_cases() if item.case.id == "weather_multi_turn_01")
    first = case.follow_ups[0].model_copy(update=follow_up)
    return case.model_copy(update={"follow_ups": [first]})


def _adapter(
    adapter_id: str, replies: list[TurnResult], strict: bool = False
) -> tuple[Adapter, ScriptedTransport]:
    wire = get_wire(create_adapter(adapter_id).contract.wire)
    script = ScriptedTransport(wire, [Reply(result=r) for r in replies], strict=strict)
    return create_adapter(adapter_id, AdapterSettings(transport=script.transport(), timeout=10.0)), script


def test_a_turn_naming_another_adapter_continues_there_with_the_history_converted() -> None:
    openai, _ = _adapter("openai-chat", [TurnResult(tool_calls=[VIENNA]), TurnResult(text="3C, light snow.")])
    gemini, script = _adapter(
        "google-genai", [TurnResult(tool_calls=[FORECAST]), TurnResult(text="Snow, then sun.")], strict=True
    )
    outcome = asyncio.run(
        play_case(
            openai,
            _case(adapter="google-genai"),
            "gpt-4.1-mini",
            adapter_id="openai-chat",
            switch=lambda adapter_id, turn: {("google-genai", 1): gemini}[(adapter_id, turn)],
        )
    )
    assert outcome.error is None, outcome.error
    assert [[c.name for c in calls] for calls in outcome.calls_per_turn] == [
        ["get_current_weather"],
        ["get_forecast"],
    ]
    first = script.request_json(0)["contents"]
    assert isinstance(first, list)
    model_turn = next(c for c in first if c["role"] == "model" and "functionCall" in c["parts"][0])
    sent = model_turn["parts"][0]
    assert sent["thoughtSignature"] == GEMINI_FOREIGN_SIGNATURE  # Gemini's skip signature on a foreign call
    assert len(sent["functionCall"]["id"]) == 8  # and a Gemini 3 call id, its result answering it
    answers = [p["functionResponse"]["id"] for c in first for p in c["parts"] if "functionResponse" in p]
    assert answers == [sent["functionCall"]["id"]]


def test_an_impossible_handoff_ends_the_episode_as_a_handoff_error() -> None:
    # The first turn stops at its step limit with its call answered: a pending tool loop, which
    # Claude with thinking on refuses from another provider.
    openai, _ = _adapter("openai-chat", [TurnResult(tool_calls=[VIENNA])])
    outcome = asyncio.run(
        play_case(
            openai,
            _case(adapter="anthropic-messages"),
            "gpt-4.1-mini",
            max_steps=1,
            adapter_id="openai-chat",
            switch=lambda adapter_id, turn: openai,
        )
    )
    assert outcome.error is not None and outcome.error.kind == "handoff"
    assert "thinking-first" in outcome.error.message
    assert not outcome.error.retryable


def test_a_turn_naming_an_unknown_adapter_is_a_handoff_error_not_a_crash() -> None:
    openai, _ = _adapter("openai-chat", [TurnResult(tool_calls=[VIENNA]), TurnResult(text="3C.")])
    outcome = asyncio.run(
        play_case(openai, _case(adapter="no-such-adapter"), "gpt-4.1-mini", adapter_id="openai-chat")
    )
    assert outcome.error is not None and outcome.error.kind == "handoff"
    assert "no-such-adapter" in outcome.error.message


def test_a_follow_up_without_an_adapter_keeps_its_case_digest() -> None:
    case = _case()
    dumped = json.dumps(case.model_dump(mode="json"))
    assert '"adapter"' not in dumped
    assert '"adapter": "google-genai"' in json.dumps(_case(adapter="google-genai").model_dump(mode="json"))


def _run_rows(tmp_path: Path, adapter: str, strict: bool = False) -> list[dict[str, object]]:
    from xpeval.evals.cassettes.meta import Mode
    from xpeval.evals.emulator.case_script import CaseEmulator
    from xpeval.evals.emulator.server import EmulatorServer
    from xpeval.evals.running.suite import SuiteConfig, run_suite

    cases = tmp_path / "cases"
    cases.mkdir()
    raw = _case(adapter=adapter).model_dump(mode="json")
    (cases / "handoff.yaml").write_text(json.dumps({"cases": [raw]}))
    results = tmp_path / "results.jsonl"
    with EmulatorServer(strict=strict) as server:
        config = SuiteConfig(
            mode=Mode.LIVE,
            target="emulator",
            allow_emulator=True,
            adapters=("openai-compatible",),
            case_dir=cases,
            results=results,
            reports=tmp_path / "reports",
            no_baseline=True,
            retries=0,
        )
        run_suite(config, emulator=CaseEmulator(server))
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    return [r for r in rows if r.get("case_id") and r.get("final")]


def test_a_run_reports_a_handoff_it_cannot_make_as_its_own_error_kind(tmp_path: Path) -> None:
    rows = _run_rows(tmp_path, "no-such-adapter")
    assert [(r["case_id"], r["error_kind"]) for r in rows] == [("weather_multi_turn_01", "handoff")]


def test_a_handoff_error_fails_the_gate_whatever_the_error_rate(tmp_path: Path) -> None:
    from xpeval.evals.verdict.file_gate import GateOptions, gate_file

    _run_rows(tmp_path, "no-such-adapter")
    cases = GateOptions(no_baseline=True, max_error_rate=1.0, case_dir=tmp_path / "cases")
    report = gate_file(tmp_path / "results.jsonl", cases)
    assert not report.passed
    assert "conformance:weather_multi_turn_01" in [f.metric for f in report.failures]


def test_a_run_against_the_strict_emulator_continues_a_case_through_the_adapter_its_turn_names(
    tmp_path: Path,
) -> None:
    # openai-compatible's reasoning_content goes to Gemini, which gets its skip signature instead.
    rows = _run_rows(tmp_path, "google-genai", strict=True)
    assert [(r["case_id"], r["error_kind"], r["correct"]) for r in rows] == [
        ("weather_multi_turn_01", None, True)
    ]
