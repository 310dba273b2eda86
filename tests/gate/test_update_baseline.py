"""A baseline is written only from a good run, says what it changes, and a subset run updates
only what it ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate._rows import frame, outcomes, row
from xpeval.errors import UserError
from xpeval.evals.verdict.baseline import Baseline, Thresholds, read_baseline, refusals, update


def test_a_run_with_every_episode_an_error_is_refused() -> None:
    errored = [r.model_copy(update={"error_kind": "http", "correct": False}) for r in outcomes([True] * 10)]
    reasons = refusals(frame(errored), Thresholds())
    assert any("10/10 episodes ended in an error" in reason for reason in reasons)


def test_a_run_whose_cassettes_were_missing_is_refused() -> None:
    missing = [
        r.model_copy(update={"error_kind": "cassette", "correct": False}) for r in outcomes([True] * 5)
    ]
    assert any("failed conformance" in reason for reason in refusals(frame(missing), Thresholds()))


def test_an_error_rate_above_the_threshold_is_refused_and_below_it_is_not() -> None:
    rows = outcomes([True] * 100)
    for i in range(6):
        rows[i] = rows[i].model_copy(update={"error_kind": "http", "correct": False})
    assert refusals(frame(rows), Thresholds(max_error_rate=0.05))
    assert not refusals(frame(rows), Thresholds(max_error_rate=0.10))


def test_a_malformed_rate_above_the_threshold_is_refused() -> None:
    rows = [row(f"c{i}", i > 40, malformed=i <= 40) for i in range(100)]
    assert any("malformed" in reason for reason in refusals(frame(rows), Thresholds(max_malformed_rate=0.25)))


def test_an_emulated_row_below_its_exact_value_is_refused() -> None:
    rows = outcomes([True] * 9 + [False], adapter="mimo", source="emulated")
    assert any(
        "emulated row below its exact value" in reason for reason in refusals(frame(rows), Thresholds())
    )


def test_an_emulated_row_whose_adapter_refused_a_tool_is_at_its_exact_value() -> None:
    rows = outcomes([True] * 10, adapter="vertex-ai", source="emulated")
    rows[0] = rows[0].model_copy(update={"error_kind": "refused", "correct": False})
    assert not refusals(frame(rows), Thresholds())


def test_a_subset_run_updates_only_the_rows_and_cases_it_ran(tmp_path: Path) -> None:
    full = frame(outcomes([True] * 10), outcomes([True] * 10, adapter="mimo", source="emulated"))
    base, _ = update(None, full, case_set="builtin", run="r1", all_cases=True)
    some = frame(outcomes([False, False]))
    new, diff = update(base, some, case_set="builtin", run="r2", all_cases=False)
    key = "local-model|openai-compatible|qwen"
    assert new.rows[key]["case_000"].startswith("n") and new.rows[key]["case_005"].startswith("y")
    assert new.rows["emulated|mimo|qwen"] == base.rows["emulated|mimo|qwen"]
    assert any("2 case(s) changed" in line for line in diff)
    new.write(tmp_path / "b.json")
    assert read_baseline(tmp_path / "b.json").rows == new.rows


def test_a_baseline_of_another_case_set_is_not_overwritten() -> None:
    base = Baseline(case_set="builtin", rows={})
    with pytest.raises(UserError, match="case set"):
        update(base, frame(outcomes([True])), case_set="my-cases", run="r", all_cases=True)


def test_a_version_1_baseline_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"version": 1, "rows": {}}')
    with pytest.raises(UserError, match="--update-baseline"):
        read_baseline(path)
