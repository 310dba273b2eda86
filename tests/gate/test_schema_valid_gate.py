"""`schema_valid` is gated like every rate (a paired test on the same cases), and a baseline
written before it existed is still read, with that rate not compared until it is written again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gate._rows import frame, row
from xpeval.evals.results.rows import ResultRow
from xpeval.evals.verdict.baseline import BASELINE_VERSION, read_baseline, update
from xpeval.evals.verdict.gate import evaluate


def rows(valid: list[bool]) -> list[ResultRow]:
    return [row(f"case_{i:03d}", True, schema_valid=ok) for i, ok in enumerate(valid)]


def test_a_row_whose_arguments_break_the_schema_on_more_cases_fails_the_gate(tmp_path: Path) -> None:
    before, _ = update(None, frame(rows([True] * 30)), case_set="builtin", run="r0", all_cases=True)
    report = evaluate(frame(rows([False] * 10 + [True] * 20)), before)
    failed = [f for f in report.failures if f.metric == "schema_valid"]
    assert failed and failed[0].worse == tuple(f"case_{i:03d}" for i in range(10))
    assert "McNemar exact" in failed[0].message
    assert evaluate(frame(rows([False] * 2 + [True] * 28)), before).passed, "two flips are noise"


def test_a_version_2_baseline_is_read_and_the_gate_says_schema_valid_is_not_compared(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(
        json.dumps(
            {
                "version": 2,
                "case_set": "builtin",
                "rows": {
                    "local-model|openai-compatible|qwen": {
                        "cases": {"case_000": "yyy-nn", "case_001": "yyy-nn"}
                    }
                },
            }
        )
    )
    baseline = read_baseline(path)
    assert (
        baseline.version == 2 and baseline.rows["local-model|openai-compatible|qwen"]["case_000"] == "yyy-nn-"
    )
    report = evaluate(frame(rows([False, False])), baseline)
    assert report.passed
    assert any("version 2" in note and "schema_valid" in note for note in report.notes)
    rewritten, _ = update(baseline, frame(rows([True, False])), case_set="builtin", run="r1", all_cases=True)
    rewritten.write(path)
    again = read_baseline(path)
    assert again.version == BASELINE_VERSION
    assert again.rows["local-model|openai-compatible|qwen"] == {"case_000": "yyy-nny", "case_001": "yyy-nnn"}
