"""A task recorded against the emulator replays offline: the cassette holds both sides of the
conversation, the user model's turns are served from it (not from any model), and the replay
reaches the same calls, the same texts and the same reward."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.tasks._retail import RETAIL_TASKS, retail_tasks
from xpeval.evals.cassettes import Mode
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.results.rows import ResultRow
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.task_reward import task_reward

pytestmark = pytest.mark.timeout(300)

ADAPTER = "openai-chat"


def run(tmp_path: Path, mode: Mode, name: str, repeat: int = 1) -> dict[tuple[str, int], ResultRow]:
    results = tmp_path / f"{name}.jsonl"
    run_suite(
        SuiteConfig(
            mode=mode,
            results=results,
            reports=tmp_path / name,
            case_dir=tmp_path / "cases",
            root=tmp_path,
            adapters=(ADAPTER,),
            cassettes=tmp_path / "cassettes",
            no_baseline=True,
            repeat=repeat,
            target="emulator" if mode is Mode.RECORD else "auto",
        )
    )
    return {(row.case_id, row.trial): row for row in final_results(ResultsFile.read(results).rows)}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, int], ResultRow]]:
    tmp_path = tmp_path_factory.mktemp("tasks")
    shutil.copytree(RETAIL_TASKS, tmp_path / "cases")
    return tmp_path, run(tmp_path, Mode.RECORD, "record", repeat=2)


def cassette(root: Path, case_id: str) -> Path:
    (path,) = (root / "cassettes" / ADAPTER).glob(f"*/{case_id}.yaml")
    return path


def user_side(interaction: dict[str, object]) -> bool:
    body = json.loads(interaction["request"]["body"])  # type: ignore[index]
    return "tools" not in body


def test_every_emulated_task_earns_reward_1_and_says_it_is_emulated(
    recorded: tuple[Path, dict[tuple[str, int], ResultRow]],
) -> None:
    _, rows = recorded
    assert len(rows) == 2 * len(retail_tasks())
    for row in rows.values():
        assert (row.correct, row.source, row.ended, row.category) == (
            True,
            "emulated",
            "user_stop",
            "task",
        ), row.reason
    scorecard = (recorded[0] / "record" / "scorecard.md").read_text(encoding="utf-8")
    assert "## Tasks: pass^k" in scorecard
    assert "| EMULATED (pipeline only) | openai-chat | gpt-4.1-mini | 5 | 2 | 1.000 | 1.000 |" in scorecard


def test_the_cassette_holds_both_sides_of_the_conversation(
    recorded: tuple[Path, dict[tuple[str, int], ResultRow]],
) -> None:
    root, _ = recorded
    case = retail_tasks()["retail_cancel_pending_order"]
    assert case.task is not None
    interactions = yaml.safe_load(cassette(root, case.id).read_text(encoding="utf-8"))["interactions"]
    users = [i for i in interactions if user_side(i)]
    assert len(users) == len(case.task.user.script) + 1  # every line, then STOP
    assert case.task.user.instructions in users[0]["request"]["body"]
    assert "###STOP###" in users[-1]["response"]["body"]["string"]


def test_a_replay_reaches_the_same_state_and_reward_offline(
    recorded: tuple[Path, dict[tuple[str, int], ResultRow]],
) -> None:
    root, before = recorded
    after = run(root, Mode.REPLAY, "replay", repeat=2)
    assert after.keys() == before.keys()
    tasks = retail_tasks()
    for key, row in after.items():
        old = before[key]
        assert (row.correct, row.said, row.ended, row.error_kind) == (old.correct, old.said, old.ended, None)
        assert [c.model_dump() for c in row.calls] == [c.model_dump() for c in old.calls]
        calls = [{"name": c.name, "arguments": c.arguments} for c in row.calls]
        assert task_reward(tasks[row.case_id], calls, row.said or [], row.ended).reward == 1


def test_the_user_models_turns_come_from_the_cassette_on_replay(
    recorded: tuple[Path, dict[tuple[str, int], ResultRow]], tmp_path: Path
) -> None:
    root, _ = recorded
    shutil.copytree(root / "cases", tmp_path / "cases")
    shutil.copytree(root / "cassettes", tmp_path / "cassettes")
    path = cassette(tmp_path, "retail_tracking_number")
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    document["interactions"] = [i for i in document["interactions"] if not user_side(i)]
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    rows = run(tmp_path, Mode.REPLAY, "replay")
    broken = rows[("retail_tracking_number", 0)]
    assert (broken.correct, broken.error_kind) == (False, "cassette")
    assert "retail_tracking_number.yaml" in str(broken.error_message)
    assert rows[("retail_cancel_pending_order", 0)].correct is True
