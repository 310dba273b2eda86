"""Scorecard rates and their Wilson intervals."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from xpeval.evals.results.rows import ResultRow, RowSource
from xpeval.evals.verdict.scorecard import by_category, results_frame, scorecard, to_markdown, wilson


def make_rows(
    n: int,
    correct: int,
    *,
    adapter: str = "openai-chat",
    source: RowSource = "cassette",
    category: str = "simple",
    errors: int = 0,
    kind: str = "http",
) -> list[ResultRow]:
    rows = []
    for i in range(n):
        failed = i >= n - errors
        rows.append(
            ResultRow(
                run="r",
                case_id=f"{category}_{i}",
                category=category,
                adapter=adapter,
                wire="openai-chat",
                model="m",
                attempt=1,
                final=True,
                source=source,
                correct=i < correct,
                tool_selection_correct=i < correct,
                arguments_correct=(i < correct) if not failed else None,
                irrelevance=category == "irrelevance",
                malformed=False,
                latency_s=0.01 * (i + 1),
                started_at="2026-11-29T00:00:00+00:00",
                error_kind=kind if failed else None,
                reason="boom" if failed else None,
            )
        )
    return rows


@given(st.integers(0, 200), st.integers(1, 200))
def test_wilson_interval_contains_the_observed_rate(k: int, n: int) -> None:
    k = min(k, n)
    low, high = wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_matches_a_known_value() -> None:
    low, high = wilson(8, 10)
    assert math.isclose(low, 0.4902, abs_tol=1e-3) and math.isclose(high, 0.9433, abs_tol=1e-3)


def test_wilson_is_statsmodels_wilson_to_the_bit() -> None:
    """The hand-written interval is statsmodels' (the scorecard's numbers did not move)."""
    from statsmodels.stats.proportion import proportion_confint

    for n in range(1, 80):
        for k in range(n + 1):
            low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
            expected = (0.0 if k == 0 else float(low), 1.0 if k == n else float(high))
            assert wilson(k, n) == expected, (k, n)


def test_scorecard_rates_per_adapter_and_source() -> None:
    frame = results_frame(make_rows(10, 7) + make_rows(4, 4, adapter="mimo", source="emulated"))
    card = scorecard(frame).set_index("adapter")
    assert card.loc["openai-chat", "n"] == 10 and card.loc["openai-chat", "accuracy"] == 0.7
    assert card.loc["mimo", "accuracy"] == 1.0
    assert "EMULATED" in card.loc["mimo", "note"]


def test_markdown_labels_every_emulated_row_as_pipeline_only() -> None:
    frame = results_frame(make_rows(5, 5, adapter="vertex-ai", source="emulated"))
    text = to_markdown(scorecard(frame), by_category(frame))
    table_rows = [line for line in text.splitlines() if line.startswith("| EMULATED") or "vertex-ai" in line]
    assert table_rows and all(line.startswith("| EMULATED (pipeline only)") for line in table_rows)


def test_replayed_episodes_report_no_latency_because_the_replay_time_is_not_the_models() -> None:
    recorded = {"recorded_at": "2026-11-01T00:00:00+00:00"}
    replayed = [row.model_copy(update=recorded) for row in make_rows(4, 4)]
    measured = make_rows(4, 4, adapter="mimo")
    frame = results_frame(replayed + measured)
    card = scorecard(frame).set_index("adapter")
    assert math.isnan(card.loc["openai-chat", "latency_p50_s"])
    assert card.loc["mimo", "latency_p50_s"] > 0
    row = next(
        line
        for line in to_markdown(scorecard(frame), by_category(frame)).splitlines()
        if "| openai-chat |" in line
    )
    assert "| - | - |" in row and "2026-11-01" in row


def test_empty_results_make_an_empty_scorecard() -> None:
    assert scorecard(results_frame([])).empty
    assert isinstance(results_frame([]), pd.DataFrame)
