"""`--repeat N`: each case played N times, pass@1 with its interval over cases, pass^N, flaky cases;
recorded trials replay as they were."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests._cli import Cli
from tests.gate._rows import frame, row
from xpeval.evals.results.load import load_run
from xpeval.evals.verdict.scorecard import flaky_cases, scorecard


def test_pass_at_1_is_over_cases_and_flaky_cases_are_listed() -> None:
    rows = []
    for case, outcomes in {"a": [True, True, True], "b": [True, False, False], "c": [False] * 3}.items():
        rows += [row(case, ok).model_copy(update={"trial": t}) for t, ok in enumerate(outcomes)]
    card = scorecard(frame(rows)).iloc[0]
    assert card["trials"] == 3
    assert abs(card["pass_at_1"] - (1 + 1 / 3 + 0) / 3) < 1e-9
    assert card["pass_all"] == 1 / 3 and card["flaky"] == 1
    assert card["pass_at_1_lo"] < card["pass_at_1"] < card["pass_at_1_hi"]
    flaky = flaky_cases(frame(rows))
    assert list(flaky["case_id"]) == ["b"] and int(flaky["passed"].iloc[0]) == 1


def test_a_single_trial_run_has_no_repeat_columns_filled() -> None:
    card = scorecard(frame([row("a", True), row("b", False)])).iloc[0]
    assert card["trials"] == 1 and pd.isna(card.get("pass_at_1", float("nan")))


def test_repeated_trials_record_and_replay(tmp_path: Path, cli: Cli) -> None:
    common = [
        "--adapters",
        "openai-chat",
        "--categories",
        "irrelevance",
        "--repeat",
        "3",
        "--no-progress",
        "--cassettes",
        str(tmp_path / "c"),
        "--reports",
        str(tmp_path / "r"),
        "--no-baseline",
    ]
    recorded = cli(
        "run",
        "--mode",
        "record",
        "--target",
        "emulator",
        *common,
        "--results",
        str(tmp_path / "rec.jsonl"),
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert len(list((tmp_path / "c" / "openai-chat").rglob("*@2.yaml"))) == 14, "every trial its own cassette"
    replayed = cli(
        "run",
        *common,
        "--no-baseline",
        "--results",
        str(tmp_path / "rep.jsonl"),
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    run = load_run(tmp_path / "rep.jsonl")
    run.check_complete()
    assert len(run.frame) == 14 * 3 and sorted(set(run.frame["trial"])) == [0, 1, 2]
    assert "## Repeated trials" in (tmp_path / "r" / "scorecard.md").read_text()
