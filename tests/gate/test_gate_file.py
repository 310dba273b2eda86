"""The gate is one library call: `xpeval.evaluate(path, GateOptions(...))` (`gate_file`) checks a
results file whole (complete, in custody, of the project's cases) before it judges it, as
`xpeval gate` does, and cannot be asked to skip that; `update_baseline` writes a baseline only
from a good run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import xpeval
from tests._cli import Cli
from tests._corpus import REPO_ROOT
from tests.gate.test_gate_inputs import written
from xpeval.evals.results.file import IncompleteRunError
from xpeval.evals.results.load import load_run
from xpeval.evals.verdict.custody import CustodyError
from xpeval.evals.verdict.gate import diff_text
from xpeval.evals.verdict.gate import evaluate as judge_frame

CONFORMANCE_ONLY = xpeval.GateOptions(no_baseline=True, root=REPO_ROOT)


def _flip_a_verdict(path: Path) -> Path:
    """The file with one row's stored `correct` edited, as someone with an editor would."""
    lines = path.read_text().splitlines()
    row = json.loads(lines[1])
    row["correct"] = not row["correct"]
    lines[1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_whole_results_file_is_judged_as_the_cli_judges_it(tmp_path: Path, cli: Cli) -> None:
    path = written(tmp_path / "whole.jsonl", planned=10, done=10, finished=True)
    report = xpeval.evaluate(path, CONFORMANCE_ONLY)
    assert report.passed
    done = cli("gate", "--results", str(path), "--no-baseline")
    assert done.returncode == 0
    assert done.stdout.strip() == diff_text(report)


def test_evaluate_refuses_a_run_with_planned_episodes_missing(tmp_path: Path) -> None:
    path = written(tmp_path / "partial.jsonl", planned=10, done=7, finished=True)
    assert judge_frame(load_run(path).frame, None).passed, "its rows alone look like a pass"
    with pytest.raises(IncompleteRunError, match="3 of 10"):
        xpeval.evaluate(path, CONFORMANCE_ONLY)


def test_evaluate_refuses_a_run_that_did_not_finish(tmp_path: Path) -> None:
    path = written(tmp_path / "killed.jsonl", planned=10, done=4, finished=False)
    with pytest.raises(IncompleteRunError, match="did not finish"):
        xpeval.evaluate(path, CONFORMANCE_ONLY)


def test_evaluate_refuses_a_row_whose_stored_verdict_was_edited(tmp_path: Path) -> None:
    path = _flip_a_verdict(written(tmp_path / "edited.jsonl", planned=10, done=10, finished=True))
    assert judge_frame(load_run(path).frame, None).passed, "its rows alone look like a pass"
    with pytest.raises(CustodyError, match="correct"):
        xpeval.evaluate(path, CONFORMANCE_ONLY)


def test_evaluate_takes_no_frame_so_custody_cannot_be_skipped(tmp_path: Path) -> None:
    path = written(tmp_path / "whole.jsonl", planned=10, done=10, finished=True)
    with pytest.raises(xpeval.UserError, match="results file"):
        xpeval.evaluate(load_run(path).frame, CONFORMANCE_ONLY)


def test_a_missing_baseline_is_an_input_error_not_a_conformance_only_pass(tmp_path: Path) -> None:
    path = written(tmp_path / "whole.jsonl", planned=10, done=10, finished=True)
    options = xpeval.GateOptions(baseline=tmp_path / "none.json", root=REPO_ROOT)
    with pytest.raises(xpeval.UserError, match=r"none\.json"):
        xpeval.evaluate(path, options)


def test_contradicting_options_are_refused_before_the_file_is_read(tmp_path: Path) -> None:
    absent = tmp_path / "absent.jsonl"
    with pytest.raises(xpeval.UserError, match="contradict"):
        xpeval.evaluate(absent, xpeval.GateOptions(no_baseline=True, baseline=tmp_path / "b.json"))
    with pytest.raises(xpeval.UserError, match="--tolerance must be between 0 and 1"):
        xpeval.evaluate(absent, xpeval.GateOptions(tolerance=2))
    with pytest.raises(xpeval.UserError, match="only goes with --update-baseline"):
        xpeval.evaluate(absent, xpeval.GateOptions(accept_regressions=True))


def test_a_baseline_written_from_a_good_run_is_the_one_it_then_passes_against(tmp_path: Path) -> None:
    path = written(tmp_path / "whole.jsonl", planned=10, done=10, finished=True)
    baseline = tmp_path / "baseline.json"
    options = xpeval.GateOptions(baseline=baseline, root=REPO_ROOT)
    update = xpeval.update_baseline(path, options)
    assert update.path == baseline and update.accepted == []
    assert any("new row, 10 cases" in line for line in update.changes)
    assert xpeval.read_baseline(baseline).rows == update.baseline.rows
    report = xpeval.evaluate(path, options)
    assert report.passed and report.summary is not None and report.summary.compared_rows == 1


def test_no_baseline_is_written_from_a_file_out_of_custody(tmp_path: Path) -> None:
    path = _flip_a_verdict(written(tmp_path / "edited.jsonl", planned=10, done=10, finished=True))
    baseline = tmp_path / "baseline.json"
    with pytest.raises(CustodyError):
        xpeval.update_baseline(path, xpeval.GateOptions(baseline=baseline, root=REPO_ROOT))
    assert not baseline.exists()
