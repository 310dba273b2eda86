"""`xpeval run --batch` with multi-turn episodes: their turns as successive batches, rebuilt from
the answers the results file keeps, which are checked as untrusted input."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from xpeval.adapters.wires.batch import BatchRequest
from xpeval.errors import UserError
from xpeval.evals.batch.rounds import RoundsSession
from xpeval.evals.cassettes import Mode
from xpeval.evals.emulator.batches import BatchKnobs, Fault
from xpeval.evals.emulator.case_script import CaseEmulator
from xpeval.evals.emulator.server import EmulatorServer
from xpeval.evals.results.batch_records import BatchAnswerKept, BatchIntent
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.load import load_run
from xpeval.evals.running.suite import SuiteConfig, run_suite

pytestmark = pytest.mark.slow  # each plays a batch run of the emulator's multi-turn cases

CASES = ("weather_multi_turn_*", "files_approval_*")


class _Killed(BaseException):
    """Stands for the process dying: nothing after it runs."""


def _config(tmp: Path) -> SuiteConfig:
    return SuiteConfig(
        mode=Mode.RECORD,
        adapters=("openai-chat",),
        cases=CASES,
        target="emulator",
        cassettes=tmp / "cassettes",
        results=tmp / "results.jsonl",
        reports=tmp / "reports",
        no_baseline=True,
        root=tmp,
        batch=True,
        batch_poll=0.02,
    )


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


def _stopped_after_round_one(
    config: SuiteConfig, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> list[dict[str, Any]]:
    """A run stopped once its first round was answered and kept; the file's records."""
    intents = RoundsSession._intents

    def die_before_round_two(self: RoundsSession, captured: Any) -> list[BatchIntent]:
        made = intents(self, captured)
        if any(i.rounds and max(i.rounds) >= 2 for i in made):
            raise _Killed
        return made

    with monkeypatch.context() as patch:
        patch.setattr(RoundsSession, "_intents", die_before_round_two)
        with pytest.raises(_Killed):
            run_suite(config, emulator=CaseEmulator(emulator))
    return [json.loads(line) for line in config.results.read_text().splitlines()]


def _rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_stopped_run_resumes_its_episodes_from_the_kept_answers(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path)
    records = _stopped_after_round_one(config, emulator, monkeypatch)
    kept = [r for r in records if r["type"] == "batch_answer"]
    assert len(kept) == 3 and not any(r["type"] == "result" for r in records)
    first = emulator.batches.creates

    outcome = run_suite(config, emulator=CaseEmulator(emulator))

    frame = load_run(outcome.results.path).frame
    assert sorted(frame["case_id"]) == ["files_approval_01", "files_approval_02", "weather_multi_turn_01"]
    assert frame["correct"].all() and frame["error_kind"].isna().all()
    assert set(emulator.batches.submitted.values()) == {1}  # round one was replayed, not asked again
    assert emulator.batches.creates > first
    rounds = [r for r in ResultsFile.read(outcome.results.path).batches if isinstance(r, BatchIntent)]
    assert all(r.rounds is not None for r in rounds) and rounds[0].rounds == [1, 1, 1]


def test_a_replayed_request_that_is_not_the_one_its_batch_was_sent_is_a_batch_mismatch_row(
    emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path)
    records = _stopped_after_round_one(config, emulator, monkeypatch)
    intent = next(r for r in records if r["type"] == "batch")
    changed = intent["episodes"].index("weather_multi_turn_01")
    intent["digests"][changed] = "0" * 64  # the file says another request was sent
    _rewrite(config.results, records)

    outcome = run_suite(config, emulator=CaseEmulator(emulator))

    rows = load_run(outcome.results.path).frame.set_index("case_id")
    assert rows.loc["weather_multi_turn_01", "error_kind"] == "batch_mismatch"
    assert "not the one its batch was sent" in str(rows.loc["weather_multi_turn_01", "reason"])
    assert rows.drop(index="weather_multi_turn_01")["error_kind"].isna().all()


@pytest.mark.parametrize("change", ["stranger", "round_twice"])
def test_kept_answers_that_are_not_one_episodes_rounds_stop_the_run_in_one_line(
    change: str, emulator: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path)
    records = _stopped_after_round_one(config, emulator, monkeypatch)
    kept = next(r for r in records if r["type"] == "batch_answer")
    if change == "stranger":
        kept["custom_id"] = "x" + "0" * 40  # an answer no batch of the file asked for
    else:
        records.append(dict(kept))  # the same round answered twice
    _rewrite(config.results, records)
    assert BatchAnswerKept.model_validate(kept)  # each line is well formed: the file as a whole is not

    with pytest.raises(UserError, match=r"no round batch of it asked for|not one episode's turns in order"):
        run_suite(config, emulator=CaseEmulator(emulator))


def _task_config(tmp: Path, name: str, **changes: Any) -> SuiteConfig:
    settings: dict[str, Any] = {
        "mode": Mode.RECORD,
        "adapters": ("openai-chat", "anthropic-messages"),
        "case_dir": tmp / "cases",
        "target": "emulator",
        "cassettes": tmp / name / "cassettes",
        "results": tmp / name / "results.jsonl",
        "reports": tmp / name / "reports",
        "no_baseline": True,
        "root": tmp,
        "batch_poll": 0.02,
        **changes,
    }
    return SuiteConfig(**settings)


VERDICT = ["correct", "tool_selection_correct", "arguments_correct", "error_kind", "steps", "input_tokens"]


def test_task_cases_in_an_environment_batched_round_by_round_score_and_replay_as_online(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    from tests.tasks._retail import RETAIL_TASKS

    shutil.copytree(RETAIL_TASKS, tmp_path / "cases")
    online = run_suite(_task_config(tmp_path, "online"))
    batched = run_suite(_task_config(tmp_path, "batch", batch=True), emulator=CaseEmulator(emulator))

    def rows(path: Path) -> Any:
        return load_run(path).frame.set_index(["case_id", "adapter"]).sort_index()[VERDICT]

    assert rows(batched.results.path).equals(rows(online.results.path))
    intents = [r for r in ResultsFile.read(batched.results.path).batches if isinstance(r, BatchIntent)]
    assert intents and all(i.rounds is not None for i in intents)  # the user's and the agent's turns
    assert max(max(i.rounds or [0]) for i in intents) >= 6
    replayed = run_suite(
        _task_config(tmp_path, "batch", mode=Mode.REPLAY, results=tmp_path / "replay.jsonl", target="auto")
    )
    assert replayed.passed
    assert rows(replayed.results.path).equals(rows(batched.results.path))


def test_a_case_that_hands_its_conversation_to_another_adapter_plays_online(
    emulator: EmulatorServer, tmp_path: Path
) -> None:
    import yaml

    from xpeval.evals.cases import load_cases
    from xpeval.evals.cases.loader import BUILTIN_DIR

    logged: list[str] = []
    case = next(item.case for item in load_cases(BUILTIN_DIR) if item.case.id == "weather_multi_turn_01")
    handed = case.model_dump(mode="json", exclude_none=True)
    handed["id"] = "weather_handoff_01"
    handed["follow_ups"][0]["adapter"] = "anthropic-messages"
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "handoff.yaml").write_text(
        yaml.safe_dump({"cases": [handed, case.model_dump(mode="json", exclude_none=True)]})
    )
    config = replace(_config(tmp_path), case_dir=tmp_path / "cases", cases=("*",))
    outcome = run_suite(config, emulator=CaseEmulator(emulator), log=logged.append)

    rows = load_run(outcome.results.path).frame.set_index("case_id")
    intents = [r for r in ResultsFile.read(outcome.results.path).batches if isinstance(r, BatchIntent)]
    assert {e for i in intents for e in i.episodes} == {"weather_multi_turn_01"}
    assert set(rows.index) == {"weather_multi_turn_01", "weather_handoff_01"}
    assert any("play online (they hand their conversation" in line for line in logged)


def _later_round_fault(request: BatchRequest) -> Fault | None:
    """Faults in the second round on (a request with Chat's tool result): the weather episode's
    answer errored, the build-cache one's expired."""
    if b'"tool"' not in request.body:
        return None
    if b"Vienna" in request.body:
        return "errored"
    return "expired" if b"build-cache" in request.body else None


def test_a_later_rounds_error_or_expiry_ends_its_episode_with_a_row_of_its_kind(tmp_path: Path) -> None:
    with EmulatorServer(batch_knobs=BatchKnobs(fault=_later_round_fault)) as server:
        outcome = run_suite(_config(tmp_path), emulator=CaseEmulator(server))

    rows = load_run(outcome.results.path).frame.set_index("case_id")
    assert rows.loc["weather_multi_turn_01", "error_kind"] == "batch_errored"
    assert not rows.loc["weather_multi_turn_01", "correct"]
    expired = rows[rows["error_kind"] == "batch_expired"]
    assert len(expired) == 1 and not expired["correct"].any()
    assert len(rows) == 3  # every episode has its row, none lost
