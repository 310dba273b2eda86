"""The worked example of docs/cases.md, "Task cases", loads as written, is rewarded as the page
says, and an emulated run prints the pass^k table the page shows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import REPO_ROOT
from xpeval.evals.cases.loader import load_cases
from xpeval.evals.cases.model import Case
from xpeval.evals.cassettes import Mode
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.running.suite import SuiteConfig, run_suite
from xpeval.evals.verdict.task_reward import task_reward

SECTION = (REPO_ROOT / "docs" / "cases.md").read_text(encoding="utf-8").split("## Task cases", 1)[1]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    block = re.findall(r"```yaml\n(.*?)```", SECTION, flags=re.DOTALL)[0]
    path = tmp_path_factory.mktemp("doc") / "my_tasks"
    path.mkdir()
    (path / "cancel.yaml").write_text(block, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def example(folder: Path) -> Case:
    (loaded,) = load_cases(folder)
    return loaded.case


def cancel(reason: str) -> dict[str, Any]:
    return {"name": "cancel_pending_order", "arguments": {"order_id": "#W1001", "reason": reason}}


LOOKUP = {"name": "find_user_id_by_email", "arguments": {"email": "mei.tanaka@example.com"}}


@pytest.mark.parametrize(
    ("calls", "said", "reward"),
    [
        ([LOOKUP, cancel("no longer needed")], ["Cancelled; 89.99 goes back to your gift card."], 1),
        ([LOOKUP, cancel("ordered by mistake")], ["Cancelled; 89.99 goes back to your gift card."], 0),
        ([LOOKUP], ["89.99 would go back to your gift card."], 0),
        ([LOOKUP, cancel("no longer needed")], ["Cancelled; the full amount goes back."], 0),
    ],
)
def test_the_worked_example_is_rewarded_as_the_page_says(
    example: Case, calls: list[dict[str, Any]], said: list[str], reward: int
) -> None:
    assert task_reward(example, calls, said, "user_stop").reward == reward


def test_the_initial_state_replaces_the_seeds_order(example: Case) -> None:
    assert example.environment is not None
    order = example.environment.initial_state["RetailStore"]["orders"]["#W1001"]
    assert order["payment_history"][0]["payment_method_id"] == "gift_card_3310"


@pytest.mark.timeout(300)
def test_an_emulated_run_shows_the_pages_pass_hat_k_table(folder: Path, tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    run_suite(
        SuiteConfig(
            mode=Mode.RECORD,
            target="emulator",
            case_dir=folder,
            root=tmp_path,
            adapters=("openai-chat",),
            cassettes=tmp_path / "cassettes",
            results=results,
            reports=tmp_path / "reports",
            repeat=3,
            no_baseline=True,
        )
    )
    table = re.findall(r"```text\n(## Tasks: pass\^k.*?)```", SECTION, flags=re.DOTALL)[0]
    scorecard = (tmp_path / "reports" / "scorecard.md").read_text(encoding="utf-8")
    for line in table.strip().splitlines()[2:]:
        assert line in scorecard
    rows = list(final_results(ResultsFile.read(results).rows))
    assert {(row.ended, tuple(row.said or ())) for row in rows} == {
        ("user_stop", ("Thank you. Let me look into that.", "All done. 89.99"))
    }
