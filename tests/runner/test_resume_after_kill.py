"""Killing `xpeval run` mid-run and starting it again gives the uninterrupted run's results."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from xpeval.evals.results.file import ResultsFile, final_results

ARGS = [
    "run",
    "--mode",
    "live",
    "--target",
    "emulator",
    "--adapters",
    "openai-chat,anthropic-messages,google-genai",
    "--categories",
    "simple,multi_turn",
    "--concurrency",
    "1",
    "--no-progress",
]


def xpeval(tmp: Path, name: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "xpeval",
        *ARGS,
        "--results",
        str(tmp / f"{name}.jsonl"),
        "--reports",
        str(tmp / f"reports-{name}"),
        "--baseline",
        str(tmp / "no-baseline.json"),
    ]


def verdicts(path: Path) -> dict[tuple[str, str, str], tuple[bool | None, str]]:
    rows = list(final_results(ResultsFile.read(path).rows))
    return {row.key: (row.correct, repr([(c.turn, c.name, c.arguments) for c in row.calls])) for row in rows}


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_results_without_duplicates(tmp_path: Path) -> None:
    whole = subprocess.run(
        xpeval(tmp_path, "whole"), cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    assert whole.returncode == 0, whole.stderr[-2000:]
    expected = verdicts(tmp_path / "whole.jsonl")
    assert len(expected) > 20

    results = tmp_path / "killed.jsonl"
    process = subprocess.Popen(
        xpeval(tmp_path, "killed"),
        cwd=REPO_ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if results.exists() and results.read_text().count('"type":"result"') >= len(expected) // 3:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done_before = len(ResultsFile.read(results).rows)
    assert 0 < done_before < len(expected), "the kill must land mid-run"

    again = subprocess.run(
        xpeval(tmp_path, "killed"), cwd=REPO_ROOT, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resuming" in again.stderr

    final = ResultsFile.read(results)
    assert final.complete
    assert verdicts(results) == expected
    attempts = Counter((row.key, row.attempt) for row in final.rows)
    assert max(attempts.values()) == 1, "no episode attempt is written twice"
    assert Counter(row.key for row in final.rows if row.final).most_common(1)[0][1] == 1
