"""`xpeval history`: the trend of a metric over the stored runs, per (source, adapter, model),
with Wilson 95 % intervals; `--append RESULTS` adds a finished run to the store (judged against
its baseline as `xpeval gate` judges it). The store is `xpeval.evals.results.history`'s (docs/nightly.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SUMMARY = "the trend of a metric over the stored runs (the nightly's history), or --append a run to it"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    from xpeval.evals.verdict.scorecard import RATES

    parser = subparsers.add_parser("history", help=SUMMARY)
    parser.add_argument(
        "--store", type=Path, help="the history store (default: <[tool.xpeval] reports>/history)"
    )
    parser.add_argument("--adapter", help="only this adapter's rows")
    parser.add_argument(
        "--metric", default="accuracy", choices=[*RATES, "all"], help="which rate (all: every rate)"
    )
    parser.add_argument("--since", help="only runs from this date on (YYYY-MM-DD)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per trend row")
    parser.add_argument(
        "--append",
        type=Path,
        metavar="RESULTS",
        help="add this finished run's results to the store (its verdict: the gate's, against its baseline)",
    )
    parser.add_argument("--kind", choices=["run", "nightly"], default="run", help="what --append adds")
    parser.add_argument("--baseline", type=Path, help="--append: the baseline the verdict is judged against")
    parser.set_defaults(handler=run, uses_project=True)


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.nightly.config import DEFAULT_HISTORY
    from xpeval.evals.project import project_settings
    from xpeval.evals.results.history import load_history
    from xpeval.evals.verdict.trend import trend

    project = project_settings()
    # The store lives in the project's reports folder ([tool.xpeval] reports), like everything a run writes.
    store: Path = args.store or project.reports / DEFAULT_HISTORY.name
    if args.append is not None:
        return _append(args, store)
    table = trend(load_history(store, adapter=args.adapter, since=args.since), metric=args.metric)
    if args.json:
        for record in table.to_dict("records"):
            record["run_date"] = record["run_date"].date().isoformat()
            print(json.dumps(record, allow_nan=True))
        return 0
    if table.empty:
        print(
            f"xpeval: no runs in {store}" + (f" for {args.adapter}" if args.adapter else ""), file=sys.stderr
        )
        return 0
    print(_table(table))
    return 0


def _table(table: Any) -> str:
    shown = table.assign(
        run_date=table["run_date"].dt.strftime("%Y-%m-%d"),
        rate=table["rate"].map(lambda v: f"{v:.1%}"),
        lo=table["lo"].map(lambda v: f"{v:.1%}"),
        hi=table["hi"].map(lambda v: f"{v:.1%}"),
    )
    return str(shown.to_string(index=False))


def _append(args: argparse.Namespace, store: Path) -> int:
    from xpeval.errors import UserError
    from xpeval.evals.project import project_settings
    from xpeval.evals.results.history import append
    from xpeval.evals.results.load import load_run
    from xpeval.evals.verdict.baseline import read_baseline
    from xpeval.evals.verdict.custody import check_custody
    from xpeval.evals.verdict.file_gate import project_baseline, scope_of
    from xpeval.evals.verdict.gate import baseline_for_run, evaluate

    loaded = load_run(args.append)
    loaded.check_complete()
    check_custody(loaded, project_settings().root)  # the store's verdicts are the gate's: from evidence only
    scope = scope_of(loaded.header)
    project = project_settings()
    # The baseline `xpeval gate` judges this run against: [tool.xpeval] baseline for the project's cases.
    baseline_path = args.baseline or project_baseline(project, scope.case_set)
    try:
        compared = baseline_for_run(read_baseline(baseline_path), scope, baseline_path)
    except UserError as exc:  # the gate cannot pass this run: kept, as not passed
        print(f"xpeval: appending it as not passed: {exc}", file=sys.stderr)
        passed = False
    else:
        passed = evaluate(loaded.frame, compared, scope).passed
    path = append(store, loaded, kind=args.kind, passed=passed)
    verdict = "passed" if passed else "failed"
    print(f"xpeval: appended run {loaded.header.run} ({args.kind}, {verdict}) to {path}", file=sys.stderr)
    return 0
