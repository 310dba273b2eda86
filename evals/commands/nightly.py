"""`xpeval nightly`: the live cross-provider eval, compared with the baseline and the last good
nightly, appended to the history. The pipeline is `xpeval.evals.nightly.run.run_nightly`; this module
only turns flags into its `NightlyConfig` and prints.

Exit status: 0 passed; 1 an alert (a regression beyond noise, a conformance failure, a live
schema answer that changed or disagrees with the checker); 2 bad input; 3 nothing could be
measured (no key set, no local model serving) unless `--allow-nothing` makes that a pass.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from xpeval.evals.commands.run import csv_values, local_model_url

SUMMARY = (
    "live eval: providers with keys, the local model elsewhere; compared with the baseline and the "
    "last good nightly; history appended"
)
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    from xpeval.evals.cases.model import CATEGORIES

    parser = subparsers.add_parser("nightly", help=SUMMARY)
    parser.add_argument("--adapters", action="append", help="adapter ids, comma separated (default: all)")
    parser.add_argument(
        "--models",
        action="append",
        default=[],
        help="live providers: MODEL for each or ADAPTER=MODEL (default: the provider's default model)",
    )
    parser.add_argument(
        "--local-models",
        action="append",
        help="local targets: served model aliases, comma separated (default: every served model)",
    )
    parser.add_argument(
        "--serve-local",
        action="store_true",
        help="start the local model servers the run needs (when the local-model extra is installed; installs "
        "nothing) and stop them afterwards; without it, only servers already running are used",
    )
    parser.add_argument(
        "--local-model-url",
        metavar="URL",
        help="local targets: your own OpenAI-compatible server at URL (ending in /v1), serving the "
        "--local-models names (default: [tool.xpeval] local_model_url, else the bundled servers)",
    )
    parser.add_argument("--cases", action="append", help="case ids or globs, comma separated (default: all)")
    parser.add_argument("--categories", action="append", help=f"categories: {', '.join(CATEGORIES)}")
    parser.add_argument("--case-dir", type=Path, help="cases from this folder instead of the built-in set")
    parser.add_argument(
        "--cassettes", type=Path, help="where fresh cassettes go (default: reports/nightly/cassettes)"
    )
    parser.add_argument(
        "--results", type=Path, help="the nightly's results file (default: reports/nightly/results.jsonl)"
    )
    parser.add_argument("--reports", type=Path, help="where its reports go (default: reports/nightly)")
    parser.add_argument("--baseline", type=Path, help="the gate's baseline (default: reports/baseline.json)")
    parser.add_argument("--history", type=Path, help="the history store (default: reports/history)")
    parser.add_argument(
        "--corpus", type=Path, help="tools for live schema acceptance (default: the built-in schema corpus)"
    )
    parser.add_argument("--no-schemas", action="store_true", help="skip live schema acceptance")
    parser.add_argument(
        "--allow-nothing",
        action="store_true",
        help="nothing to measure (no key, no local model) exits 0 with 'nothing to measure' instead of 3",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="say each adapter's target or why it is skipped, and stop"
    )
    parser.add_argument(
        "--batch",
        action="store_true",
        help="ask episodes through the providers' Batch APIs, a multi-turn one's turns as successive batches "
        "(half price, answers within hours; a stopped nightly resumes its batches: docs/batch.md)",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per adapter (1-1000)")
    parser.add_argument("--rate", type=float, help="requests per second per adapter (default: unlimited)")
    parser.add_argument("--retries", type=int, default=2, help="retries of a retryable provider failure")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument(
        "--tolerance", type=float, default=0.0, help="also alert when a rate drops by more than this (0-1)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(handler=run, uses_project=True)


def config_from(args: argparse.Namespace) -> Any:
    from xpeval.evals.nightly.config import DEFAULT_HISTORY, NIGHTLY_DIR, NightlyConfig, nightly_run_settings
    from xpeval.evals.project import project_settings

    project = project_settings()
    root = project.root
    case_dir = args.case_dir or project.cases
    given = {
        "cassettes": args.cassettes,
        "results": args.results,
        "baseline": args.baseline or (project.baseline if case_dir == project.cases else None),
    }
    run = nightly_run_settings(
        args.reports or root / NIGHTLY_DIR,
        **{name: value for name, value in given.items() if value is not None},
        cases=tuple(csv_values(args.cases)),
        categories=tuple(csv_values(args.categories)),
        case_dir=case_dir,
        concurrency=args.concurrency,
        rate=args.rate,
        retries=args.retries,
        timeout=args.timeout,
        tolerance=args.tolerance,
        batch=args.batch,
        root=root,
        local_model_url=local_model_url(args.local_model_url or project.local_model_url),
    )
    return NightlyConfig(
        run=run,
        adapters=project.selected_adapters(args.adapters),
        models=tuple(args.models),
        local_models=tuple(csv_values(args.local_models)),
        serve_local=args.serve_local,
        history=args.history or root / DEFAULT_HISTORY,
        corpus=args.corpus,
        schemas=not args.no_schemas,
        allow_nothing=args.allow_nothing,
    )


def run(args: argparse.Namespace) -> int:
    from xpeval.errors import UserError
    from xpeval.evals.nightly.run import run_nightly
    from xpeval.evals.running.progress import RichProgress

    if not 0 <= args.tolerance < 1:
        raise UserError(f"--tolerance must be between 0 and 1, got {args.tolerance:g}")
    config = config_from(args)
    show = not args.no_progress

    def progress(total: int) -> RichProgress:
        return RichProgress(total=total, enabled=show)

    outcome = run_nightly(config, log=_log, progress=progress, dry_run=args.dry_run)
    print(outcome.summary())
    if args.dry_run:
        return outcome.exit_code
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(outcome.markdown())
    return outcome.exit_code


def _log(line: str) -> None:
    from xpeval.evals.scrub import scrub_line

    print(f"xpeval: {scrub_line(line)}", file=sys.stderr, flush=True)
