"""The trend frame: exactly its columns, the scorecard's counts, Wilson intervals."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gate._rows import frame, outcomes, row
from tests.history._runs import loaded
from xpeval.errors import UserError
from xpeval.evals.results.history import append, load_history
from xpeval.evals.verdict.scorecard import RATES, scorecard, wilson
from xpeval.evals.verdict.trend import TREND_COLUMNS, trend


def test_the_trend_has_exactly_its_columns_one_row_per_run_and_row(tmp_path: Path) -> None:
    append(
        tmp_path,
        loaded("r1", [True, True, False, True], started="2026-12-01T03:00:00+00:00"),
        kind="nightly",
        passed=True,
    )
    append(
        tmp_path,
        loaded("r2", [True, False, False, False], started="2026-12-02T03:00:00+00:00"),
        kind="nightly",
        passed=False,
    )

    table = trend(load_history(tmp_path))

    assert list(table.columns) == TREND_COLUMNS
    assert table[["run", "k", "n"]].values.tolist() == [["r1", 3, 4], ["r2", 1, 4]]
    assert set(table["metric"]) == {"accuracy"}
    low, high = wilson(3, 4)
    assert table.loc[0, "rate"] == 0.75
    assert (table.loc[0, "lo"], table.loc[0, "hi"]) == pytest.approx((low, high))
    assert str(table["run_date"].dtype).startswith("datetime64")


def test_the_trend_counts_every_rate_as_the_scorecard_does(tmp_path: Path) -> None:
    rows = [
        *outcomes([True, False, True]),
        row("case_irr_1", True, category="irrelevance"),
        row("case_irr_2", False, category="irrelevance"),
        row("case_err", False, error_kind="http"),
        row("case_bad", False, malformed=True, schema_valid=False),
        row("case_valid", True, schema_valid=True),
    ]
    run = loaded("r", [True])
    run.frame = frame(rows)
    run.header.plan.cases = [r.case_id for r in rows]  # type: ignore[union-attr]
    append(tmp_path, run, kind="run", passed=True)

    table = trend(load_history(tmp_path), metric="all")
    card = scorecard(run.frame).iloc[0]
    assert sorted(table["metric"]) == sorted(RATES)
    for _, line in table.iterrows():
        rate = line["metric"]
        assert (line["k"], line["n"]) == (card[f"{rate}_k"], card[f"{rate}_n"])
        assert (line["lo"], line["hi"]) == pytest.approx((card[f"{rate}_lo"], card[f"{rate}_hi"]))


def test_a_metric_that_applies_to_no_episode_has_no_row(tmp_path: Path) -> None:
    append(tmp_path, loaded("r", [True, False]), kind="run", passed=True)
    assert trend(load_history(tmp_path), metric="irrelevance").empty


def test_an_empty_history_is_an_empty_trend_with_the_columns() -> None:
    from xpeval.evals.results.history import SCHEMA

    empty = SCHEMA.empty_table().to_pandas()
    assert list(trend(empty).columns) == TREND_COLUMNS


def test_an_unknown_metric_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--metric"):
        trend(load_history(tmp_path), metric="vibes")
