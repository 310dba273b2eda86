"""Scorecard rates, their Wilson intervals, and the gate's verdicts."""

from __future__ import annotations

import math
from xml.etree import ElementTree

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from evals.gate import baseline_for_run, baseline_from, evaluate, junit_xml
from evals.results import ResultRow
from evals.scorecard import by_category, results_frame, scorecard, to_markdown, wilson


def make_rows(
    n: int,
    correct: int,
    *,
    adapter: str = "openai-chat",
    source: str = "cassette",
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
    row = next(line for line in to_markdown(scorecard(frame), by_category(frame)).splitlines()
               if "| openai-chat |" in line)
    assert "| - | - |" in row and "2026-11-01" in row


def test_gate_passes_against_its_own_baseline() -> None:
    frame = results_frame(make_rows(40, 30))
    card = scorecard(frame)
    assert evaluate(frame, card, baseline_from(card)).passed


def test_gate_fails_on_a_drop_beyond_noise_and_writes_valid_junit() -> None:
    base_frame = results_frame(make_rows(100, 90))
    baseline = baseline_from(scorecard(base_frame))
    frame = results_frame(make_rows(100, 50))
    report = evaluate(frame, scorecard(frame), baseline)
    assert not report.passed
    assert any(f.metric == "accuracy" and not f.ok for f in report.failures)
    suite = ElementTree.fromstring(junit_xml(report))
    assert suite.tag == "testsuite" and int(suite.get("failures", "0")) == len(report.failures) > 0


def test_gate_tolerates_a_drop_within_noise() -> None:
    baseline = baseline_from(scorecard(results_frame(make_rows(20, 18))))
    frame = results_frame(make_rows(20, 17))
    assert evaluate(frame, scorecard(frame), baseline).passed


def test_gate_tolerance_option_catches_smaller_drops() -> None:
    baseline = baseline_from(scorecard(results_frame(make_rows(20, 18))))
    frame = results_frame(make_rows(20, 16))
    assert not evaluate(frame, scorecard(frame), baseline, tolerance=0.05).passed


def test_gate_fails_on_any_conformance_failure_even_without_a_baseline() -> None:
    frame = results_frame(make_rows(10, 9, errors=1, kind="cassette"))
    report = evaluate(frame, scorecard(frame), None)
    assert not report.passed and "boom" in report.failures[0].message


def test_gate_fails_when_a_baseline_row_disappears() -> None:
    baseline = baseline_from(scorecard(results_frame(make_rows(10, 9) + make_rows(5, 5, adapter="mimo"))))
    frame = results_frame(make_rows(10, 9))
    report = evaluate(frame, scorecard(frame), baseline)
    assert any(f.metric == "present" for f in report.failures)


def test_a_run_of_some_adapters_is_compared_with_their_rows_only() -> None:
    baseline = baseline_from(scorecard(results_frame(make_rows(100, 90) + make_rows(5, 5, adapter="mimo"))))
    frame = results_frame(make_rows(100, 50))
    report = evaluate(frame, scorecard(frame), baseline_for_run(baseline, ["openai-chat"], some_cases=False))
    assert not any(f.metric == "present" for f in report.findings), "mimo was not run, so it is not missing"
    assert any(f.metric == "accuracy" for f in report.failures), "openai-chat's own drop still fails"


def test_rising_error_rate_is_a_drop() -> None:
    baseline = baseline_from(scorecard(results_frame(make_rows(60, 60))))
    frame = results_frame(make_rows(60, 30, errors=30))
    report = evaluate(frame, scorecard(frame), baseline)
    assert any(f.metric == "errors" for f in report.failures)


def test_empty_results_make_an_empty_scorecard() -> None:
    assert scorecard(results_frame([])).empty
    assert isinstance(results_frame([]), pd.DataFrame)
