"""notebooks/scorecard.ipynb and notebooks/history.ipynb, executed top to bottom with nbclient in a
python3 kernel (`xpeval.evals.report.notebooks.execute_notebook`, what `nox -s report` runs), on a small
synthetic run with every source: they run, show the report's charts, and keep emulated rows marked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests._corpus import REPO_ROOT
from tests.report.conftest import schema_pairs, trend_frame, write_run
from xpeval.evals.report.notebooks import NotebookError, execute_notebook

SCORECARD = REPO_ROOT / "notebooks" / "scorecard.ipynb"
HISTORY = REPO_ROOT / "notebooks" / "history.ipynb"

pytestmark = pytest.mark.slow


def _outputs(notebook: Any) -> list[dict[str, Any]]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def _text(notebook: Any) -> str:
    """Everything the notebook printed and displayed as text."""
    parts = []
    for output in _outputs(notebook):
        parts.append(output.get("text", ""))
        parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def _charts(notebook: Any) -> list[str]:
    """The charts displayed, as `kind/source`."""
    found = []
    for output in _outputs(notebook):
        html = output.get("data", {}).get("text/html", "")
        found += [
            f"{k}/{s}"
            for k, s in re.findall(
                r'<svg class="xpeval-chart" data-kind="(\w+)" data-source="([\w-]+)"', html
            )
        ]
    return found


def test_the_scorecard_notebook_runs_on_a_run_and_marks_emulated_rows(tmp_path: Path) -> None:
    write_run(tmp_path / "results.jsonl")
    schema_pairs().to_csv(tmp_path / "schema_acceptance.csv", index=False)
    executed = tmp_path / "executed" / "scorecard.ipynb"

    notebook = execute_notebook(SCORECARD, out=executed, environment={"XPEVAL_REPORTS": str(tmp_path)})

    assert executed.is_file()
    text = _text(notebook)
    assert "32 episodes of run 2026-11-30T02:00:00+00:00-synthetic" in text
    assert "== emulated: EMULATED: checks the adapter pipeline only" in text
    assert "mimo (EMULATED)" in text and "openai-chat (EMULATED)" not in text
    assert "16 of 32 episodes were replayed from recordings and are left out" in text
    assert "wrong arguments for weather_parallel_01" in text
    sources = ["live", "cassette", "local-model", "emulated"]
    assert _charts(notebook) == [
        *(f"accuracy/{s}" for s in sources),
        *(f"categories/{s}" for s in sources),
        "latency/live",
        "latency/local-model",
        "schema/offline",
    ]


def test_the_history_notebook_shows_the_trend_tables_and_plots(tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.mkdir()
    trend_frame().to_parquet(history / "trend.parquet", index=False)

    notebook = execute_notebook(HISTORY, environment={"XPEVAL_REPORTS": str(tmp_path)})

    text = _text(notebook)
    assert "4 runs, 2026-11-27 to 2026-11-30" in text
    assert "== live / accuracy" in text and "== emulated / tool_selection: EMULATED" in text
    assert "previous_rate" in text
    assert _charts(notebook) == [
        "history/live",
        "history/local-model",
        "history/emulated",
        "history/live",
        "history/local-model",
        "history/emulated",
    ]


def test_the_history_notebook_takes_its_input_from_xpeval_history(tmp_path: Path) -> None:
    trend_frame().to_parquet(tmp_path / "elsewhere.parquet", index=False)

    notebook = execute_notebook(
        HISTORY,
        environment={
            "XPEVAL_REPORTS": str(tmp_path / "absent"),
            "XPEVAL_HISTORY": str(tmp_path / "elsewhere.parquet"),
        },
    )

    assert len(_charts(notebook)) == 6


def test_the_history_notebook_says_so_when_there_is_no_history(tmp_path: Path) -> None:
    notebook = execute_notebook(HISTORY, environment={"XPEVAL_REPORTS": str(tmp_path)})

    assert "no history yet" in _text(notebook) and _charts(notebook) == []


def test_a_failing_cell_fails_the_execution_and_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(NotebookError, match="run `xpeval run` first"):
        execute_notebook(SCORECARD, environment={"XPEVAL_REPORTS": str(tmp_path)})
