"""The results file keeps every attempt, survives a torn write, and resumes only its own run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xpeval.evals.results.file import ResultsFile, final_results
from xpeval.evals.results.rows import ResultRow, RunHeader


def header(fp: str = "f1") -> RunHeader:
    return RunHeader(run=f"run-{fp}", fingerprint=fp, started_at="2026-11-29T00:00:00+00:00", config={})


def row(case: str, attempt: int = 1, final: bool = True, correct: bool = True) -> ResultRow:
    return ResultRow(
        run="r",
        case_id=case,
        category="simple",
        adapter="openai-chat",
        wire="openai-chat",
        model="m",
        attempt=attempt,
        final=final,
        source="emulated",
        correct=correct,
        tool_selection_correct=correct,
        arguments_correct=correct,
        irrelevance=False,
        malformed=False,
        latency_s=0.1,
        started_at="2026-11-29T00:00:00+00:00",
    )


def test_rows_survive_a_reopen_of_the_same_unfinished_run(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    first = ResultsFile.open_for(path, header())
    first.append(row("a"))
    first.close()  # what a killed process leaves: every row it wrote
    again = ResultsFile.open_for(path, header())
    assert [r.case_id for r in again.rows] == ["a"]
    again.append(row("b"))
    again.close()
    assert [r.case_id for r in ResultsFile.read(path).rows] == ["a", "b"]


def test_a_torn_last_line_is_dropped_and_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    results = ResultsFile.open_for(path, header())
    results.append(row("a"))
    results.close()
    with path.open("a") as handle:
        handle.write('{"type": "result", "case_id": "half')
    resumed = ResultsFile.open_for(path, header())
    resumed.append(row("b"))
    resumed.close()
    assert [r.case_id for r in ResultsFile.read(path).rows] == ["a", "b"]


def test_a_different_or_finished_run_starts_a_new_file_and_keeps_the_old(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    old = ResultsFile.open_for(path, header("f1"))
    old.append(row("a"))
    old.close()
    new = ResultsFile.open_for(path, header("f2"))
    assert new.rows == [] and (tmp_path / "results.jsonl.prev").exists()
    new.finish()
    newest = ResultsFile.open_for(path, header("f2"))
    assert newest.rows == [], "a finished run is not resumed"


def test_the_final_attempt_is_what_counts(tmp_path: Path) -> None:
    rows = [row("a", 1, final=False, correct=False), row("a", 2, final=True), row("b")]
    assert [(r.case_id, r.attempt) for r in final_results(rows)] == [("a", 2), ("b", 1)]


def test_rows_are_written_off_the_caller_with_a_bounded_fsync_cadence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    syncs: list[str] = []
    real = os.fsync

    def counted(fd: int) -> None:
        syncs.append(threading.current_thread().name)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    path = tmp_path / "results.jsonl"
    results = ResultsFile.open_for(path, header())
    for i in range(2000):
        results.append(row(f"c{i}"))
    assert "MainThread" not in syncs, "the caller never waits for the disk"
    results.finish()
    assert len(ResultsFile.read(path).rows) == 2000 and ResultsFile.read(path).complete
    assert 1 <= len(syncs) <= 5, f"{len(syncs)} fsyncs for 2000 rows written within a second"
