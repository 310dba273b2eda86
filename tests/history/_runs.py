"""Complete runs built from per-case outcomes, for the history tests (no results file needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.gate._rows import frame, outcomes
from xpeval.evals.results.load import LoadedRun
from xpeval.evals.results.rows import RunHeader
from xpeval.evals.results.run_plan import RunPlan


def loaded(
    run: str,
    passing: Sequence[bool],
    *,
    adapter: str = "openai-compatible",
    model: str = "qwen",
    source: str = "local-model",
    started: str = "2026-12-01T03:00:00+00:00",
    case_set: str = "builtin",
    category: str = "simple",
) -> LoadedRun:
    """A finished run of one (source, adapter, model) row: case_000, case_001, ... as given."""
    rows = outcomes(passing, adapter=adapter, model=model, source=source, category=category)
    table = frame(rows)
    header = RunHeader(
        run=run,
        fingerprint="0" * 16,
        started_at=started,
        config={"case_set": case_set, "adapters": [adapter], "some_cases": False},
        plan=RunPlan(cases=[r.case_id for r in rows], models={adapter: [model]}),
    )
    return LoadedRun(path=Path(f"{run}.jsonl"), header=header, complete=True, frame=table)


def bulk(run: str, rows: int, *, started: str = "2026-12-01T03:00:00+00:00") -> LoadedRun:
    """A finished run of `rows` episodes built column-wise (fast enough for millions)."""
    import pandas as pd

    from xpeval.evals.results.load import FRAME_COLUMNS

    cases = [f"case_{i:07d}" for i in range(rows)]
    correct = pd.Series([i % 3 != 0 for i in range(rows)])
    table = pd.DataFrame(
        {
            "run": run,
            "case_id": cases,
            "trial": 0,
            "category": "simple",
            "adapter": "openai-compatible",
            "wire": "openai-chat",
            "model": "qwen",
            "source": "local-model",
            "recorded_at": None,
            "attempts": 1,
            "correct": correct,
            "tool_selection_correct": correct,
            "arguments_correct": correct,
            "irrelevance": False,
            "malformed": False,
            "schema_valid": correct,
            "error": False,
            "error_kind": None,
            "error_type": None,
            "reason": "a reason long enough to give the file some weight " * 2,
            "latency_s": 0.25,
            "input_tokens": 100,
            "output_tokens": 10,
            "cost_usd": None,
            "steps": 1,
        }
    )[FRAME_COLUMNS]
    header = RunHeader(
        run=run,
        fingerprint="0" * 16,
        started_at=started,
        config={"case_set": "builtin", "adapters": ["openai-compatible"], "some_cases": False},
        plan=RunPlan(cases=cases, models={"openai-compatible": ["qwen"]}),
    )
    return LoadedRun(path=Path(f"{run}.jsonl"), header=header, complete=True, frame=table)
