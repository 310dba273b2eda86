"""notebooks/scorecard.ipynb runs on the tables `xpeval run` writes and keeps emulated rows marked.

The code cells are executed in order in one namespace, as a kernel would (`display` collects
what the notebook shows); `nox -s report` executes the real notebook with Jupyter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evals.results import ResultRow
from evals.scorecard import results_frame
from tests._corpus import REPO_ROOT

NOTEBOOK = REPO_ROOT / "notebooks" / "scorecard.ipynb"


def _row(adapter: str, source: str, case: str, correct: bool) -> ResultRow:
    return ResultRow(
        run="r",
        case_id=case,
        category=case.split("_")[0],
        adapter=adapter,
        wire="openai-chat",
        model="m",
        attempt=1,
        final=True,
        source=source,
        correct=correct,
        tool_selection_correct=correct,
        arguments_correct=correct,
        irrelevance=False,
        malformed=False,
        latency_s=0.1,
        started_at="2026-11-29T00:00:00+00:00",
        reason=None if correct else "wrong tool: get_time",
    )


def _run_notebook(reports: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    shown: list[Any] = []
    monkeypatch.setenv("XPEVAL_REPORTS", str(reports))
    namespace: dict[str, Any] = {"display": shown.append}
    for cell in json.loads(NOTEBOOK.read_text())["cells"]:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), str(NOTEBOOK), "exec"), namespace)
    return shown


def test_the_report_notebook_runs_on_a_runs_tables_and_marks_emulated_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [_row("openai-chat", "local-model", f"simple_{i}", i < 3) for i in range(5)]
    rows += [_row("mimo", "emulated", f"parallel_{i}", True) for i in range(4)]
    results_frame(rows).to_parquet(tmp_path / "results.parquet", index=False)
    pd.DataFrame(
        {
            "adapter": ["mimo", "mimo"],
            "schema": ["a", "b"],
            "verdict": ["as-is", "refused"],
            "false_rejections": [0, 0],
        }
    ).to_csv(tmp_path / "schema_acceptance.csv", index=False)

    shown = _run_notebook(tmp_path, monkeypatch)

    cards = [frame for frame in shown if "accuracy_lo" in frame.columns]
    assert {adapter for card in cards for adapter in card["adapter"]} == {"openai-chat", "mimo"}
    pivot = next(frame for frame in shown if frame.index.name == "category")
    assert set(pivot.columns) == {"openai-chat", "mimo (EMULATED)"}
    assert pivot.loc["simple", "openai-chat"] == 0.6
    reasons = next(frame for frame in shown if "episodes" in frame.columns)
    assert reasons.iloc[0]["reason"] == "wrong tool: get_time" and reasons.iloc[0]["episodes"] == 2
    acceptance = shown[-1]
    assert acceptance.loc["mimo", "refused"] == 1


def test_the_report_notebook_says_what_to_run_when_there_are_no_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(FileNotFoundError, match="run `xpeval run` first"):
        _run_notebook(tmp_path, monkeypatch)
