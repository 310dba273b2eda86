"""`xpeval cassettes check`: today's requests against the recordings, as the CI gate runs it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._cli import without_project_line
from xpeval.adapters.adapter import AdapterSettings
from xpeval.adapters.contract import JsonObject
from xpeval.adapters.wires.openai_chat import OpenAIChatWire
from xpeval.evals.cases import Case, load_cases
from xpeval.evals.cassettes import CassetteStore, Mode, bind_cassette
from xpeval.evals.cli import main
from xpeval.evals.emulator import EmulatorServer
from xpeval.evals.emulator.case_script import CaseEmulator
from xpeval.evals.running.play import play_case
from xpeval.evals.running.targets import build_adapter

ADAPTERS = ("openai-chat", "google-genai")
CASE_IDS = ("calc_simple_01", "calendar_multi_turn_01")
MODEL = "drift-model"


def _cases() -> list[Case]:
    wanted = {item.case.id: item.case for item in load_cases() if item.case.id in CASE_IDS}
    return [wanted[case_id] for case_id in CASE_IDS]


async def _record_all(store: CassetteStore, emulator: CaseEmulator) -> None:
    for adapter_id in ADAPTERS:
        for number, case in enumerate(_cases()):
            upstream = emulator.upstream_for(case, adapter_id)
            episode = bind_cassette(
                store, adapter_id, case.id, Mode.RECORD, source="emulated", model=MODEL, upstream=upstream
            )
            settings = AdapterSettings(model=MODEL, transport=episode.transport)
            adapter = build_adapter(adapter_id, "emulator", settings)
            outcome = await play_case(adapter, case, MODEL, stream=number % 2 == 1)
            await adapter.aclose()
            assert outcome.error is None
            assert episode.finish() == []


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("drift")
    with EmulatorServer() as server:
        asyncio.run(_record_all(CassetteStore(root / "cassettes"), CaseEmulator(server)))
    (root / "cases.jsonl").write_text("".join(case.model_dump_json() + "\n" for case in _cases()))
    yield root


@pytest.fixture
def project(recorded: Path, tmp_path: Path) -> Path:
    """A fresh copy of the recorded cassettes that a test may edit."""
    for source in recorded.rglob("*"):
        target = tmp_path / source.relative_to(recorded)
        if source.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return tmp_path


def check(project: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(
        [
            "cassettes",
            "check",
            "--cassettes",
            str(project / "cassettes"),
            "--cases",
            str(project / "cases.jsonl"),
            "--adapters",
            ",".join(ADAPTERS),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    progress = ("cassettes checked: ",)  # the command's progress lines (tests/test_progress.py)
    said = without_project_line(captured.err)
    errors = "".join(line for line in said.splitlines(True) if not line.startswith(progress))
    return code, captured.out + errors


def test_cassettes_that_match_todays_requests_pass(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(project, capsys)
    assert (code, out.strip()) == (0, "checked 4 cassette(s): no drift")


def test_a_field_the_adapter_stops_sending_fails_with_the_cassette_and_a_diff(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    encode = OpenAIChatWire.encode

    def without_tool_choice(self: OpenAIChatWire, *args: Any) -> JsonObject:
        kwargs = encode(self, *args)
        kwargs.pop("tool_choice", None)
        return kwargs

    monkeypatch.setattr(OpenAIChatWire, "encode", without_tool_choice)
    code, out = check(project, capsys)
    assert code == 1
    assert (
        "DRIFT openai-chat/drift-model/calc_simple_01" in out
        and "DRIFT openai-chat/drift-model/calendar_multi_turn_01" in out
    )
    assert "google-genai" not in out.split("checked")[0], "the other adapter still matches"
    assert str(project / "cassettes" / "openai-chat" / "drift-model" / "calc_simple_01.yaml") in out
    assert '-  "tool_choice": "auto",' in out
    assert "xpeval run --mode record --adapters openai-chat --cases calc_simple_01" in out
    assert out.strip().endswith("checked 4 cassette(s): 2 drift")


def test_a_later_turn_that_changes_is_drift_too(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    encode = OpenAIChatWire.encode

    def changed_after_the_first_turn(self: OpenAIChatWire, request: Any, tools: Any) -> JsonObject:
        kwargs = encode(self, request, tools)
        if len(request.messages) > 1:
            kwargs["max_completion_tokens"] = 77
        return kwargs

    monkeypatch.setattr(OpenAIChatWire, "encode", changed_after_the_first_turn)
    code, out = check(project, capsys)
    assert code == 1
    assert "DRIFT openai-chat/drift-model/calendar_multi_turn_01" in out and "request 2" in out
    assert '+  "max_completion_tokens": 77,' in out
    assert "openai-chat/drift-model/calc_simple_01" not in out


def test_a_deleted_cassette_fails_naming_it_and_the_record_command(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "cassettes" / "google-genai" / "drift-model" / "calc_simple_01.yaml").unlink()
    code, out = check(project, capsys)
    assert code == 1
    assert "MISSING google-genai/drift-model/calc_simple_01" in out
    assert "xpeval run --mode record --adapters google-genai --cases calc_simple_01" in out


def test_max_age_lists_stale_recordings_without_failing_the_gate(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = project / "cassettes" / "openai-chat" / "drift-model" / "calc_simple_01.yaml"
    text = path.read_text()
    start = text.index("recorded_at: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + "recorded_at: '2020-01-02T03:04:05Z'" + text[end:])
    code, out = check(project, capsys, "--max-age", "30")
    assert code == 0
    assert f"STALE {path}: recorded 2020-01-02" in out
    assert out.strip().endswith("checked 4 cassette(s): no drift; 1 older than 30 days")


def test_a_cassette_for_a_case_that_no_longer_exists_is_an_orphan(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "cases.jsonl").write_text(_cases()[0].model_dump_json() + "\n")
    code, out = check(project, capsys)
    assert code == 1
    assert "ORPHAN openai-chat/drift-model/calendar_multi_turn_01" in out and "not in the case set" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--max-age", "-1"], "--max-age must be a number of days >= 0"),
        (["--adapters", "no-such-adapter"], "Unknown adapter: no-such-adapter"),
    ],
)
def test_bad_input_is_one_clear_line(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code = main(["cassettes", "check", "--cassettes", str(project / "cassettes"), *argv])
    assert code == 2
    (line,) = without_project_line(capsys.readouterr().err).strip().splitlines()
    assert line.startswith(f"xpeval: {message}")


def test_a_missing_cassette_folder_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cassettes", "check", "--cassettes", str(tmp_path / "nowhere")]) == 2
    assert "no such cassette folder" in capsys.readouterr().err
