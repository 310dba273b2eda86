"""`xpeval report [--results FILE] [--schema-csv FILE] [--history PATH] [--case-dir DIR] [--out FILE]`:
the self-contained HTML report of a run (`xpeval.evals.report.write_report`).

Defaults come from the project (`[tool.xpeval]`): the results file, `<reports>/schema_acceptance.csv`
when it is there, `<reports>/report.html`. `--history` takes the trend frame as a Parquet file or
folder. A run that did not finish is reported all the same, marked incomplete on the page.

Exit status: 0; 2 for an input error (no results file, an unreadable history or csv, no matplotlib).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from xpeval.errors import MissingExtraError, UserError

SUMMARY = "the HTML report of a run: plots, scorecard, every episode"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("report", help=SUMMARY)
    parser.add_argument(
        "--results", type=Path, help="results file of the run (default: the project's reports/results.jsonl)"
    )
    parser.add_argument(
        "--schema-csv",
        type=Path,
        help="schema-acceptance pairs, as `xpeval schemas` writes them "
        "(default: reports/schema_acceptance.csv when it exists)",
    )
    parser.add_argument(
        "--history",
        type=Path,
        help=(
            "the history: the store `xpeval history --append` writes, or a trend frame as a Parquet "
            "file or folder (default: none)"
        ),
    )
    parser.add_argument(
        "--case-dir",
        type=Path,
        help="the cases the run played (default: the project's [tool.xpeval] cases, else the built-in ones; "
        "a run whose recorded cases differ from them is refused)",
    )
    parser.add_argument(
        "--max-per-group",
        type=int,
        default=1000,
        help="episodes shown per source, adapter and model, failures first (0: all)",
    )
    parser.add_argument(
        "--out", type=Path, help="where the page goes (default: the project's reports/report.html)"
    )
    parser.add_argument(
        "--reference",
        metavar="ADAPTER=MODEL",
        help="add the vendor table: every row against this row (docs/reference-runs.md)",
    )
    parser.add_argument(
        "--against", type=Path, metavar="OTHER_RESULTS", help="the reference row's results file"
    )
    parser.set_defaults(handler=run, uses_project=True)


def run(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(
            "report", "xpeval report draws its plots with matplotlib, which is not installed"
        ) from exc
    import pandas as pd

    from xpeval.evals.project import project_settings
    from xpeval.evals.report import read_trend, write_report
    from xpeval.evals.report.html import run_cases
    from xpeval.evals.results.load import load_run

    if args.max_per_group < 0:
        raise UserError(f"--max-per-group must be 0 or more, got {args.max_per_group}")
    project = project_settings()
    loaded = load_run(args.results or project.results)
    schema_csv: Path | None = args.schema_csv
    if schema_csv is None and (project.reports / "schema_acceptance.csv").is_file():
        schema_csv = project.reports / "schema_acceptance.csv"
    pairs = None
    if schema_csv is not None:
        if not schema_csv.is_file():
            raise UserError(f"{schema_csv}: no schema-acceptance csv (run `xpeval schemas`)")
        try:
            pairs = pd.read_csv(schema_csv)
        except (OSError, ValueError) as exc:
            raise UserError(f"{schema_csv}: cannot read it as csv: {exc}") from exc
        if not {"adapter", "verdict"} <= set(pairs.columns):
            raise UserError(f"{schema_csv}: not a schema-acceptance csv (no adapter and verdict columns)")
        if "lost" in pairs.columns and not pd.api.types.is_numeric_dtype(pairs["lost"]):
            raise UserError(f"{schema_csv}: its column lost holds something other than counts")
    history = read_trend(args.history) if args.history is not None else None
    # The project's cases (or --case-dir), checked against what the run's header records: a
    # results file never chooses which folder is read.
    cases, _ = run_cases(loaded, project.root, args.case_dir)
    out: Path = args.out or project.reports / "report.html"
    vendors = None
    if args.reference:
        from xpeval.evals.report.vendors import vendor_frame, vendor_verdicts

        vendors = vendor_frame(vendor_verdicts(loaded.path, args.reference, cases, against=args.against))
    write_report(
        out,
        loaded,
        pairs=pairs,
        history=history,
        cases=cases,
        max_per_group=args.max_per_group or None,
        vendors=vendors,
    )
    size = out.stat().st_size
    print(f"wrote {out} ({size / 1024:.0f} KB, {len(loaded.frame)} episodes)", file=sys.stderr)
    return 0
