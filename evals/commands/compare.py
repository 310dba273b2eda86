"""`xpeval compare RESULTS --reference ADAPTER=MODEL [--against OTHER_RESULTS]`: every row of a
run against a reference row on the same cases (is this vendor serving the model as the
reference does?), printed and written as `compare.md` and `compare.csv` (docs/reference-runs.md).

Exit status: 0 when every row is in line with the reference; 1 when one differs beyond noise
(or below a floor given); 2 for an input error (a results file that is not a complete run,
case sets that differ, no such reference row).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

SUMMARY = "judge every row of a run against a reference row: trigger F1, agreement, paired test"


def add_case_dir_option(parser: argparse.ArgumentParser) -> None:
    """`--case-dir`: the cases rows are judged on (never the folder a results header names)."""
    parser.add_argument(
        "--case-dir",
        type=Path,
        help="the cases the run played (default: the project's [tool.xpeval] cases, else the built-in "
        "ones); a results file whose recorded cases differ from them is refused",
    )


def add_reference_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    """The options `compare` and `gate --reference` share."""
    parser.add_argument(
        "--reference",
        required=required,
        metavar="ADAPTER=MODEL",
        help="the row every other row is judged against (e.g. the model's official API)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        metavar="OTHER_RESULTS",
        help="read the reference row from this results file (default: the same file)",
    )
    parser.add_argument("--min-f1", type=float, help="also fail a row whose trigger F1 is below this (0-1)")
    parser.add_argument(
        "--min-agreement",
        type=float,
        help="also fail a row that makes the reference's calls less often (0-1)",
    )


def register(subparsers: Any) -> None:
    from xpeval.evals.verdict.paired_test import ALPHA

    parser = subparsers.add_parser("compare", help=SUMMARY)
    parser.add_argument("results", type=Path, help="results file of the run to judge")
    add_reference_options(parser, required=True)
    add_case_dir_option(parser)
    parser.add_argument(
        "--alpha", type=float, default=ALPHA, help="family-wise error rate of the paired tests"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="folder for compare.md and compare.csv (default: the project's reports folder)",
    )
    parser.add_argument(
        "--verifier",
        action="store_true",
        help="also print the K2 Vendor Verifier's columns, with its definitions (docs/reference-runs.md)",
    )
    parser.set_defaults(handler=run, uses_project=True)


def check_fractions(args: argparse.Namespace, names: tuple[str, ...]) -> None:
    from xpeval.errors import UserError

    for name in names:
        value = getattr(args, name, None)
        if value is not None and not 0 <= value <= 1:
            raise UserError(f"--{name.replace('_', '-')} must be between 0 and 1, got {value:g}")


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.project import project_settings
    from xpeval.evals.report.vendors import vendor_frame, vendor_markdown
    from xpeval.evals.results.evidence import project_case_set
    from xpeval.evals.verdict.file_gate import reference_verdicts

    check_fractions(args, ("alpha", "min_f1", "min_agreement"))
    project = project_settings()
    cases = project_case_set(project.root, args.case_dir)
    verdicts = reference_verdicts(
        args.results,
        args.reference,
        project.root,
        cases,
        against=args.against,
        alpha=args.alpha,
        min_f1=args.min_f1,
        min_agreement=args.min_agreement,
    )
    frame = vendor_frame(verdicts)
    text = vendor_markdown(frame)
    out: Path = args.out or project.reports
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare.md").write_text(text, encoding="utf-8")
    frame.to_csv(out / "compare.csv", index=False)
    print(text, end="")
    if args.verifier:
        print("\n" + verifier_table(args), end="")
    failed = [v for v in verdicts if not v.passed]
    summary = f"{len(verdicts) - len(failed)} of {len(verdicts)} rows in line with the reference"
    print(f"compare: {summary}; wrote {out / 'compare.md'} and {out / 'compare.csv'}", file=sys.stderr)
    return 1 if failed else 0


def verifier_table(args: argparse.Namespace) -> str:
    """The rows in the K2 Vendor Verifier's columns (`--verifier`)."""
    from xpeval.evals.results.answers import load_reference_run
    from xpeval.evals.verdict.reference import verifier_markdown

    loaded = load_reference_run(args.results, args.reference, args.against)
    return verifier_markdown(loaded.reference_key, loaded.reference, loaded.rows)
