"""A small synthetic run with every source, a schema-acceptance table and a history trend frame.

The run plays real built-in cases (so the per-episode view finds their messages) through four
adapters, one per source: `live` and `local-model` rows were answered in the run (they have a
latency), `cassette` and `emulated` rows were replayed (they have none).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests._case_digests import builtin_digests
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import CallRecord, ResultRow, RowSource, RunHeader
from xpeval.evals.results.run_plan import CASE_DIGESTS, RunPlan

RUN = "2026-11-30T02:00:00+00:00-synthetic"
CASES = {
    "weather_simple_01": "simple",
    "weather_simple_02": "simple",
    "weather_multiple_01": "multiple",
    "weather_parallel_01": "parallel",
    "weather_irrelevance_01": "irrelevance",
    "weather_multi_turn_01": "multi_turn",
    "calc_simple_01": "simple",
    "calc_parallel_01": "parallel",
}
ROWS: dict[str, tuple[str, RowSource, str | None, set[str]]] = {
    # adapter: (model, source, recorded_at, cases answered wrong)
    "openai-chat": ("gpt-4.1-mini", "live", None, {"weather_parallel_01", "calc_parallel_01"}),
    "anthropic-messages": (
        "claude-sonnet-4-5",
        "cassette",
        "2026-11-20T10:00:00+00:00",
        {"weather_multi_turn_01"},
    ),
    "openai-compatible": (
        "qwen2.5-coder-1.5b-instruct",
        "local-model",
        None,
        {"weather_simple_02", "calc_simple_01", "weather_parallel_01"},
    ),
    "mimo": ("mimo-v2-flash", "emulated", "2026-11-29T16:00:00+00:00", set()),
}
SOURCES = ("live", "cassette", "local-model", "emulated")
ANSWERED_SOURCES = ("live", "local-model")
"""The sources whose rows were answered in the run (a latency chart each)."""
TREND_SOURCES = ("live", "local-model", "emulated")


def _row(case_id: str, adapter: str, index: int) -> ResultRow:
    model, source, recorded_at, wrong = ROWS[adapter]
    correct = case_id not in wrong
    error = adapter == "openai-chat" and case_id == "calc_parallel_01"
    malformed = adapter == "openai-compatible" and case_id == "calc_simple_01"
    calls = (
        []
        if case_id.endswith("irrelevance_01")
        else [
            CallRecord(
                turn=0,
                id=f"c{index}",
                name="get_current_weather",
                arguments={"city": "Vienna", "n": index},
                parse_error="Expecting ',' delimiter" if malformed else None,
            )
        ]
    )
    return ResultRow(
        run=RUN,
        case_id=case_id,
        category=CASES[case_id],
        adapter=adapter,
        wire="openai-chat",
        model=model,
        attempt=1,
        final=True,
        source=source,
        recorded_at=recorded_at,
        correct=correct,
        tool_selection_correct=correct,
        arguments_correct=None if error else correct,
        irrelevance=case_id.endswith("irrelevance_01"),
        malformed=malformed,
        reason=None if correct else ("timeout after 60 s" if error else f"wrong arguments for {case_id}"),
        calls=[] if error else calls,
        error_kind="timeout" if error else None,
        error_type="APITimeoutError" if error else None,
        error_message="Request timed out." if error else None,
        latency_s=0.2 + 0.37 * index,
        input_tokens=100 + index,
        output_tokens=20,
        steps=1,
        started_at="2026-11-30T02:00:01+00:00",
        text=f"final text of {case_id} via {adapter}",
    )


def write_run(path: Path, *, finish: bool = True) -> Path:
    """The synthetic run's results file (complete unless `finish` is false)."""
    plan = RunPlan(cases=list(CASES), models={adapter: [spec[0]] for adapter, spec in ROWS.items()})
    header = RunHeader(
        run=RUN,
        fingerprint="synthetic",
        started_at="2026-11-30T02:00:00+00:00",
        config={"mode": "record", "case_set": "builtin", CASE_DIGESTS: builtin_digests(CASES)},
        plan=plan,
    )
    results = ResultsFile.open_for(path, header)
    index = 0
    for case_id in CASES:
        for adapter in ROWS:
            if not finish and index > 20:
                break
            # a retried first attempt: only the final row counts
            if adapter == "openai-chat" and case_id == "weather_simple_01":
                results.append(
                    _row(case_id, adapter, index).model_copy(update={"final": False, "correct": False})
                )
            results.append(_row(case_id, adapter, index))
            index += 1
    if finish:
        results.finish()
    else:
        results.close()
    return path


def schema_pairs() -> pd.DataFrame:
    """Three adapters x four schemas, as reports/schema_acceptance.csv holds them."""
    verdicts = {
        "openai-chat": ["as-is", "as-is", "rewritten", "refused"],
        "anthropic-messages": ["as-is", "as-is", "as-is", "rewritten"],
        "moonshot": ["rewritten", "rewritten", "refused", "refused"],
    }
    return pd.DataFrame(
        [
            {
                "adapter": adapter,
                "schema": f"s{i}",
                "verdict": verdict,
                "lost": int(verdict == "rewritten" and i == 0),
                "false_rejections": 0,
            }
            for adapter, row in verdicts.items()
            for i, verdict in enumerate(row)
        ]
    )


def trend_frame() -> pd.DataFrame:
    """The history trend frame: four nightly runs, three row keys, two metrics. `run_date`
    mixes ISO dates and datetimes, as a store may hold both."""
    keys = [
        ("live", "openai-chat", "gpt-4.1-mini"),
        ("local-model", "openai-compatible", "qwen"),
        ("emulated", "mimo", "mimo-v2-flash"),
    ]
    dates = ["2026-11-27", "2026-11-28T02:00:00+00:00", "2026-11-29", "2026-11-30T02:00:00+00:00"]
    rows = []
    for day, date in enumerate(dates):
        for source, adapter, model in keys:
            for metric in ("accuracy", "tool_selection"):
                k = 50 if source == "emulated" else 30 + 3 * day + (metric == "tool_selection")
                rows.append(
                    {
                        "run_date": date,
                        "run": f"run-{day}",
                        "source": source,
                        "adapter": adapter,
                        "model": model,
                        "metric": metric,
                        "k": k,
                        "n": 50,
                        "rate": k / 50,
                        "lo": max(0.0, k / 50 - 0.12),
                        "hi": min(1.0, k / 50 + 0.1),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture
def run_path(tmp_path: Path) -> Path:
    return write_run(tmp_path / "results.jsonl")
