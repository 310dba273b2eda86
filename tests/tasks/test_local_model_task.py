"""A task recorded from the local model (Qwen2.5-coder 0.5B, tasks/retail/cassettes) replays
offline to the same conversation and reward: the pipeline with a real model on both sides."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.tasks._retail import RETAIL_CASSETTES, RETAIL_TASKS
from xpeval.evals.cassettes import Mode
from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.running.suite import SuiteConfig, run_suite

MODEL = "qwen2.5-coder-0.5b-instruct"
CASE = "retail_tracking_number"
CASSETTE = RETAIL_CASSETTES / "openai-chat" / MODEL / f"{CASE}.yaml"


@pytest.mark.timeout(300)
def test_the_local_models_task_replays_offline_to_its_recorded_reward(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    run_suite(
        SuiteConfig(
            mode=Mode.REPLAY,
            case_dir=RETAIL_TASKS,
            cases=(CASE,),
            models=(MODEL,),
            root=tmp_path,
            adapters=("openai-chat",),
            cassettes=RETAIL_CASSETTES,
            results=results,
            reports=tmp_path / "reports",
            no_baseline=True,
        )
    )
    (row,) = final_results(ResultsFile.read(results).rows)
    assert (row.source, row.model, row.error_kind) == ("local-model", MODEL, None), row.error_message
    # what the 0.5B did on 2026-12-06: it answered the greeting as an agent would, both sides
    # went on offering help, and the user never wrote ###STOP###
    assert (row.correct, row.ended, row.calls) == (False, "max_turns", [])
    assert row.reason is not None and "never said to the user: 'TRK10027733'" in row.reason
    interactions = yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))["interactions"]
    users = [i for i in interactions if '"tools"' not in i["request"]["body"]]
    assert len(users) == 10 and len(interactions) == 20  # max_turns user replies, each answered by the agent
    assert row.steps == 20
