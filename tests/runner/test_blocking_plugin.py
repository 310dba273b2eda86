"""A plugin wire whose code never returns (a synchronous busy loop in its codec) costs its own
episodes, never the run: each is a row of kind `timeout`, every other adapter's rows are
written, and the run ends in bounded time (`adapters/off_loop.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.adapters.test_plugin_wires import environment, install

BOUND_SECONDS = 150
"""23 episodes of each adapter at a 4 s episode timeout (`--timeout 0.5`, x8): well within."""

BUSY_DECODE = """
def _spin(self, response):
    while True:  # a plugin bug: never returns, never yields to the event loop
        pass
OllamaChat.decode = _spin
"""


@pytest.mark.slow
def test_a_plugin_wire_that_busy_loops_in_decode_times_out_its_episodes_and_the_run_finishes(
    tmp_path: Path,
) -> None:
    install(tmp_path / "site", extra=BUSY_DECODE)
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "host"\n')
    results = root / "results.jsonl"
    started = time.monotonic()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "xpeval",
                "run",
                "--mode",
                "live",
                "--target",
                "emulator",
                "--adapters",
                "ollama,openai-chat",
                "--categories",
                "simple",
                "--stream",
                "never",
                "--timeout",
                "0.5",
                "--retries",
                "0",
                "--no-progress",
                "--no-baseline",
                "--results",
                str(results),
                "--reports",
                str(root / "reports"),
            ],
            cwd=root,
            env=environment(tmp_path / "site"),
            capture_output=True,
            text=True,
            timeout=BOUND_SECONDS,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run hung: still running after {BOUND_SECONDS} s")
    took = time.monotonic() - started
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    finals = [row for row in rows if row.get("final") and "case_id" in row]
    ollama = [row for row in finals if row["adapter"] == "ollama"]
    others = [row for row in finals if row["adapter"] == "openai-chat"]
    assert len(ollama) == len(others) == 23, (len(ollama), len(others))
    assert all(row["error_kind"] == "timeout" for row in ollama), {row["error_message"] for row in ollama}
    assert sum("episode exceeded 4s" in row["error_message"] for row in ollama) >= 1
    assert all(row["error_kind"] is None and row["correct"] for row in others)
    assert done.returncode == 1  # the gate fails: every ollama episode failed
    assert took < BOUND_SECONDS, took
