"""`xpeval gate`: judge a results file against a baseline (CI's exit code)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from evals.commands.run import DEFAULT_BASELINE, DEFAULT_RESULTS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("gate", help="fail on conformance failures and drops against a baseline")
    parser.add_argument("--baseline", type=Path, default=DEFAULT_BASELINE, help="baseline JSON")
    parser.add_argument(
        "--results", type=Path, default=DEFAULT_RESULTS, help="results file of the run to judge"
    )
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="also fail when a rate drops by more than this (0-1; default: intervals only)",
    )
    parser.add_argument(
        "--update-baseline", action="store_true", help="write the baseline from these results"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from evals.errors import UserError
    from evals.gate import (
        PARTIAL_RUN_NOTE,
        baseline_for_run,
        baseline_from,
        diff_text,
        evaluate,
        junit_xml,
        read_baseline,
        step_summary,
    )
    from evals.results import ResultsFile
    from evals.scorecard import results_frame, scorecard

    if not args.results.exists():
        raise UserError(f"{args.results}: no results file (run `xpeval run` first)")
    results = ResultsFile.read(args.results)
    frame = results_frame(results.rows)
    card = scorecard(frame)
    if args.update_baseline:
        args.baseline.parent.mkdir(parents=True, exist_ok=True)
        args.baseline.write_text(
            json.dumps(baseline_from(card), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        print(f"xpeval: wrote baseline {args.baseline} ({len(card)} rows)", file=sys.stderr)
        return 0
    config = results.header.config if results.header is not None else {}
    baseline = baseline_for_run(
        read_baseline(args.baseline),
        config.get("adapters") or frame["adapter"].unique(),
        bool(config.get("some_cases")),
    )
    if baseline is None:
        print(f"xpeval: {PARTIAL_RUN_NOTE}", file=sys.stderr)
    report = evaluate(frame, card, baseline, tolerance=args.tolerance)
    print(diff_text(report))
    if args.junit is not None:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(junit_xml(report), encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
    return 0 if report.passed else 1
