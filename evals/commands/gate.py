"""`xpeval gate`: judge a complete results file against a baseline (CI's exit code)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

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
    from xpeval.adapters.registry import refuse_if_refused_plugin_in_use
    from xpeval.errors import UserError
    from xpeval.evals.commands.compare import check_fractions
    from xpeval.evals.commands.run import no_baseline
    from xpeval.evals.project import project_settings
    from xpeval.evals.results.evidence import project_case_set
    from xpeval.evals.results.load import load_run
    from xpeval.evals.running.suite import CONFORMANCE_ONLY, default_baseline, scope_of
    from xpeval.evals.verdict.baseline import read_baseline
    from xpeval.evals.verdict.custody import check_custody
    from xpeval.evals.verdict.gate import baseline_for_run, diff_text, evaluate, junit_xml, step_summary

    if args.reference and (args.update_baseline or args.no_baseline or args.baseline):
        raise UserError("--reference judges against a reference row, not a baseline: drop the baseline flags")
    if args.accept_regressions and not args.update_baseline:
        raise UserError("--accept-regressions only goes with --update-baseline")
    if args.update_baseline and args.no_baseline:
        raise UserError("--update-baseline writes a baseline: it cannot go with --no-baseline")
    unbased = no_baseline(args)
    check_fractions(args, ("tolerance", "alpha", "max_error_rate", "max_malformed_rate"))
    project = project_settings()
    run = load_run(args.results or project.results)
    run.check_complete()
    cases = project_case_set(project.root, args.case_dir)
    check_custody(run, project.root, cases)
    # The case set is the project's (its cases are the run's: custody checked their digests),
    # never the folder the header names: a header must not choose what the gate reads.
    scope = dataclasses.replace(scope_of(run.header), case_set=cases.label)
    case_set = scope.case_set
    configured = project.baseline if project.cases and case_set != "builtin" else None
    baseline_path: Path = args.baseline or configured or default_baseline(case_set, project.root)
    frame = run.frame
    refuse_if_refused_plugin_in_use(frame["adapter"].unique())
    if args.update_baseline:
        return _update_baseline(args, run, scope, baseline_path)
    if args.reference:
        report = _against_reference(args, frame, scope, project.root, cases)
    elif unbased:
        report = evaluate(frame, None, scope)
        report.basis = f"{CONFORMANCE_ONLY}, --no-baseline"
    else:
        compared = baseline_for_run(read_baseline(baseline_path), scope, baseline_path)
        report = evaluate(frame, compared, scope, tolerance=args.tolerance, alpha=args.alpha)
    print(diff_text(report))
    if args.junit is not None:
        args.junit.parent.mkdir(parents=True, exist_ok=True)
        args.junit.write_text(junit_xml(report), encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(step_summary(report))
    return 0 if report.passed else 1


def _update_baseline(args: argparse.Namespace, run: Any, scope: Any, path: Path) -> int:
    """Write the baseline from a good run: refused for a run with conformance failures or too
    many errors, and for one the gate fails against the baseline it replaces, unless the user
    accepts its regressions by name (`--accept-regressions` prints every flipped case)."""
    from xpeval.errors import UserError
    from xpeval.evals.verdict.baseline import Thresholds, read_baseline, refusals, update
    from xpeval.evals.verdict.gate import accepted_regressions, evaluate, rows_of_run

    frame = run.frame
    problems = refusals(frame, Thresholds(args.max_error_rate, args.max_malformed_rate))
    if problems:
        raise UserError("not writing a baseline from this run: " + "; ".join(problems))
    old = read_baseline(path) if path.exists() or path.is_symlink() else None
    if old is not None and old.case_set == scope.case_set:
        report = evaluate(frame, rows_of_run(old, scope), scope, tolerance=args.tolerance, alpha=args.alpha)
        if not report.passed:
            flipped = accepted_regressions(report)
            if not args.accept_regressions:
                raise UserError(
                    f"not writing a baseline from a run the gate fails against {path}: "
                    f"{len(report.failures)} problem(s), {len(flipped)} to accept (see `xpeval gate`); "
                    "pass --accept-regressions to accept them by name"
                )
            for line in flipped:
                print(f"accepting {line}")
    new, diff = update(old, frame, case_set=scope.case_set, run=run.header.run, all_cases=scope.all_cases)
    new.write(path)
    for line in diff or ["(no change)"]:
        print(line)
    print(f"xpeval: wrote baseline {path} ({len(new.rows)} rows)", file=sys.stderr)
    return 0


def _against_reference(args: argparse.Namespace, frame: Any, scope: Any, root: Path, cases: Any) -> Any:
    """Conformance and nothing-measured as always, then every row against the reference row
    instead of the baseline."""
    from xpeval.evals.commands.compare import check_fractions, reference_verdicts
    from xpeval.evals.project import project_settings
    from xpeval.evals.verdict.gate import evaluate
    from xpeval.evals.verdict.reference import gate_findings

    check_fractions(args, ("min_f1", "min_agreement"))
    report = evaluate(frame, None, scope)
    verdicts = reference_verdicts(
        args, args.results or project_settings().results, root, cases, results_checked=True
    )
    report.findings.extend(gate_findings(verdicts))
    report.notes.extend(f.message for f in report.findings if f.metric == "reference" and f.ok)
    report.notes.insert(0, f"judged against the reference {args.reference}, not a baseline")
    return report
