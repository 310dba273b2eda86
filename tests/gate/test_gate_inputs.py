"""Only a complete results file of this tool can pass the gate; anything else exits non-zero
with one line saying why."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests._case_digests import builtin_digests
from tests._cli import Cli, Ran
from tests._corpus import REPO_ROOT
from tests.gate._rows import declined
from xpeval.evals.cases import load_cases
from xpeval.evals.results.file import ResultsFile
from xpeval.evals.results.rows import RunHeader
from xpeval.evals.results.run_plan import CASE_DIGESTS, RunPlan

Gate = Callable[..., Ran]


@pytest.fixture
def gate(cli: Cli) -> Gate:
    """`xpeval gate ARGS` in this process (the cli fixture), from the repository root."""

    def run(*args: str) -> Ran:
        return cli("gate", *args)

    return run


DECLINED = [c.case.id for c in load_cases() if c.case.category == "irrelevance"]
"""Built-in cases a model that makes no call answers right: rows the gate can score again."""


def planned_cases(planned: int) -> list[str]:
    """The built-in irrelevance cases, then placeholders (only runs that never finish plan more)."""
    return [*DECLINED, *(f"case_{i:03d}" for i in range(len(DECLINED), planned))][:planned]


def header(planned: int) -> RunHeader:
    return RunHeader(
        run="run-1",
        fingerprint="f",
        started_at="2026-12-01T00:00:00+00:00",
        config={
            "adapters": ["openai-compatible"],
            "case_set": "builtin",
            CASE_DIGESTS: builtin_digests(planned_cases(planned)),
        },
        plan=RunPlan(cases=planned_cases(planned), models={"openai-compatible": ["qwen"]}),
    )


def written(path: Path, planned: int, done: int, *, finished: bool) -> Path:
    results = ResultsFile.open_for(path, header(planned))
    for row in declined(planned_cases(planned)[:done], run="run-1"):
        results.append(row)
    if finished:
        results.finish()
    results.close()
    return path


def assert_refused(done: Ran, *words: str) -> None:
    assert done.returncode != 0
    assert "gate: passed" not in done.stdout
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for word in words:
        assert word in lines[0], lines[0]


def test_an_empty_file_is_not_a_results_file(tmp_path: Path, gate: Gate) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    assert_refused(gate("--results", str(tmp_path / "empty.jsonl")), "empty")


def test_a_readme_is_not_a_results_file(gate: Gate) -> None:
    assert_refused(gate("--results", str(REPO_ROOT / "README.md")), "not an xpeval results file")


def test_a_missing_file_is_an_input_error(tmp_path: Path, gate: Gate) -> None:
    assert_refused(gate("--results", str(tmp_path / "nope.jsonl")), "no results file")


def test_a_run_killed_before_its_completion_record_does_not_pass(tmp_path: Path, gate: Gate) -> None:
    path = written(tmp_path / "killed.jsonl", planned=1060, done=99, finished=False)
    assert_refused(
        gate("--results", str(path), "--baseline", str(tmp_path / "none.json")), "did not finish", "99"
    )


def test_a_finished_run_with_planned_episodes_missing_does_not_pass(tmp_path: Path, gate: Gate) -> None:
    path = written(tmp_path / "partial.jsonl", planned=10, done=7, finished=True)
    assert_refused(gate("--results", str(path), "--baseline", str(tmp_path / "none.json")), "3 of 10")


def test_a_complete_run_passes_its_gate_on_conformance_only_when_asked_and_says_so(
    tmp_path: Path, gate: Gate
) -> None:
    path = written(tmp_path / "whole.jsonl", planned=10, done=10, finished=True)
    done = gate("--results", str(path), "--no-baseline")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gate: passed (conformance only" in done.stdout


def test_a_resumed_run_that_finished_is_complete(tmp_path: Path) -> None:
    path = written(tmp_path / "resumed.jsonl", planned=10, done=4, finished=False)
    resumed = ResultsFile.open_for(path, header(10))
    for row in declined(planned_cases(10), run="run-1")[4:]:
        resumed.append(row)
    resumed.finish()
    ResultsFile.read(path).check_complete()


@pytest.mark.parametrize("garbage", ["not json\n", '{"type": "result"}\n', "[1, 2]\n"])
def test_a_corrupt_line_inside_the_file_is_refused_not_skipped(
    tmp_path: Path, garbage: str, gate: Gate
) -> None:
    path = written(tmp_path / "r.jsonl", planned=3, done=3, finished=True)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:2], garbage, *lines[2:]]))
    assert_refused(gate("--results", str(path)), str(path))
