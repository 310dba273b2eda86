"""Tasks recorded from the local models (Qwen2.5-coder 0.5B and 1.5B, tasks/retail/cassettes)
replay offline to the same conversation and reward: the pipeline with a real model on both
sides, every request of either side served from the cassette."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.tasks._retail import RETAIL_CASSETTES, RETAIL_TASKS
from xpeval.evals.cassettes import Mode
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.running.suite import SuiteConfig, run_suite

CASE = "retail_tracking_number"


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("model", "ended", "calls", "user_requests", "steps"),
    [
        # 2026-12-06, 0.5B: the user model opened with "### STOP###" (a space inside: not the
        # token), and the agent called find_user_id_by_email with a made-up address past its steps
        ("qwen2.5-coder-0.5b-instruct", "max_steps", 21, 1, 22),
        # 1.5B: the user model answered the greeting with ###STOP###, so nothing was asked
        ("qwen2.5-coder-1.5b-instruct", "user_stop", 0, 1, 1),
    ],
)
def test_the_local_models_task_replays_offline_to_its_recorded_reward(
    tmp_path: Path, model: str, ended: str, calls: int, user_requests: int, steps: int
) -> None:
    results = tmp_path / "results.jsonl"
    run_suite(
        SuiteConfig(
            mode=Mode.REPLAY,
            case_dir=RETAIL_TASKS,
            cases=(CASE,),
            models=(model,),
            root=tmp_path,
            adapters=("openai-chat",),
            cassettes=RETAIL_CASSETTES,
            results=results,
            reports=tmp_path / "reports",
            no_baseline=True,
        )
    )
    (row,) = final_results(ResultsFile.read(results).rows)
    assert (row.source, row.model, row.error_kind) == ("local-model", model, None), row.error_message
    assert (row.correct, row.ended, len(row.calls), row.steps) == (False, ended, calls, steps)
    assert row.reason is not None and "never said to the user: 'TRK10027733'" in row.reason
    cassette = RETAIL_CASSETTES / "openai-chat" / model / f"{CASE}.yaml"
    interactions = yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    assert sum('"tools"' not in i["request"]["body"] for i in interactions) == user_requests
    assert len(interactions) == steps
