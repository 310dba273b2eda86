"""`xpeval gate`: judge a complete results file against a baseline (CI's exit code)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xpeval.evals.verdict.file_gate import GateOptions

SUMMARY = "fail on conformance failures and regressions against a baseline"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    from xpeval.evals.verdict.baseline import DEFAULT_MAX_ERROR_RATE, DEFAULT_MAX_MALFORMED_RATE
    from xpeval.evals.verdict.paired_test import ALPHA

    parser = subparsers.add_parser("gate", help=SUMMARY)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="baseline JSON (default: reports/baseline.json, or the run's case folder's baseline.json); "
        "missing, unreadable or of another case set is an input error (exit 2)",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="gate on conformance only, compared with no baseline (said in the verdict line)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        help="results file of the run to judge (default: the project's reports/results.jsonl)",
    )
    parser.add_argument("--junit", type=Path, help="write JUnit XML here")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=0.0,
        help="also fail when a rate drops by more than this on the shared cases (0-1; 0: the paired "
        "test only)",
    )
    parser.add_argument(
        "--alpha", type=float, default=ALPHA, help="family-wise error rate of the paired tests (Holm)"
    )
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="write the baseline from these results (refused for a partial run, and for a run this "
        "gate fails unless --accept-regressions)",
    )
    parser.add_argument(
        "--accept-regressions",
        action="store_true",
        help="with --update-baseline: write it from a run the gate fails, printing every flipped case "
        "it accepts",
    )
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=DEFAULT_MAX_ERROR_RATE,
        help="--update-baseline refuses a row with more errors than this",
    )
    parser.add_argument(
        "--max-malformed-rate",
        type=float,
        default=DEFAULT_MAX_MALFORMED_RATE,
        help="--update-baseline refuses a row with more malformed calls than this",
    )
    from xpeval.evals.commands.compare import add_case_dir_option, add_reference_options

    add_case_dir_option(parser)
    add_reference_options(parser, required=False)
    parser.set_defaults(handler=run, uses_project=True)


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.verdict.file_gate import gate_file
    from xpeval.evals.verdict.gate import diff_text, junit_xml, step_summary

    if args.update_baseline:
        return _update_baseline(args)
    report = gate_file(args.results, options_of(args))
    print(diff_text(report))
    if args.junit is not None:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(junit_xml(report), encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
    return 0 if report.passed else 1


def options_of(args: argparse.Namespace) -> GateOptions:
    """The flags as `GateOptions` (`xpeval.evals.verdict.file_gate`)."""
    from xpeval.evals.verdict.file_gate import GateOptions

    return GateOptions(
        baseline=args.baseline,
        no_baseline=args.no_baseline,
        tolerance=args.tolerance,
        alpha=args.alpha,
        case_dir=args.case_dir,
        reference=args.reference,
        against=args.against,
        min_f1=args.min_f1,
        min_agreement=args.min_agreement,
        max_error_rate=args.max_error_rate,
        max_malformed_rate=args.max_malformed_rate,
        accept_regressions=args.accept_regressions,
    )


def _update_baseline(args: argparse.Namespace) -> int:
    """`--update-baseline`: the baseline written from a good run (`update_baseline`), printing
    every flipped case it accepts and what changed."""
    from xpeval.evals.verdict.file_gate import update_baseline

    written = update_baseline(args.results, options_of(args))
    for line in written.accepted:
        print(f"accepting {line}")
    for line in written.changes or ["(no change)"]:
        print(line)
    print(f"xpeval: wrote baseline {written.path} ({len(written.baseline.rows)} rows)", file=sys.stderr)
    return 0
