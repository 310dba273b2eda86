"""Several processes appending at once, and a writer killed mid-write, never corrupt the store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._corpus import REPO_ROOT
from tests.history._runs import loaded
from xpeval.evals.results.history import append, load_history, runs


def _writer(store: Path, prefix: str, count: int, rows: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.history._writer", str(store), prefix, str(count), str(rows)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _temporary_files(store: Path) -> list[Path]:
    return [p for p in store.rglob(".*") if p.is_file()]


@pytest.mark.slow
def test_concurrent_writers_each_keep_every_run_whole(tmp_path: Path) -> None:
    writers = [_writer(tmp_path, f"w{n}", 6, 2000) for n in range(4)]
    for writer in writers:
        _, err = writer.communicate(timeout=240)
        assert writer.returncode == 0, err

    table = runs(load_history(tmp_path))
    assert sorted(table["run"]) == sorted(f"w{n}-{i}" for n in range(4) for i in range(6))
    assert set(table["episodes"]) == {2000}
    assert _temporary_files(tmp_path) == []
    assert {p.parent.name for p in tmp_path.rglob("*.parquet")} == {
        "date=2026-12-01",
        "date=2026-12-02",
        "date=2026-12-03",
    }


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_only_runs_that_are_whole(tmp_path: Path) -> None:
    append(tmp_path, loaded("before", [True, False]), kind="nightly", passed=True)
    rows = 300_000
    writer = _writer(tmp_path, "killed", 50, rows)
    deadline = time.monotonic() + 180
    caught_mid_write = False
    try:
        while time.monotonic() < deadline and writer.poll() is None:
            if _temporary_files(tmp_path):
                os.kill(writer.pid, signal.SIGKILL)
                caught_mid_write = True
                break
            time.sleep(0.001)
    finally:
        if writer.poll() is None:
            os.kill(writer.pid, signal.SIGKILL)
        writer.communicate(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    assert caught_mid_write, "the writer was never seen writing"
    assert _temporary_files(tmp_path), "the kill left its temporary file behind (what this test is about)"

    table = runs(load_history(tmp_path))
    episodes = dict(zip(table["run"], table["episodes"], strict=True))
    assert episodes.pop("before") == 2
    assert set(episodes.values()) <= {rows}, "every run read back is whole"
    # The store keeps working: the next writer appends next to the leftover temporary file.
    append(tmp_path, loaded("after", [True]), kind="nightly", passed=True)
    assert "after" in set(runs(load_history(tmp_path))["run"])
