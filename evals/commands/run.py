"""`xpeval run`: play cases through adapters, write the scorecard, exit by the gate.

With no arguments it replays every committed cassette for every registered adapter and
every built-in case, offline. The pipeline is `xpeval.evals.running.suite.run_suite`; this module only turns
flags into its `SuiteConfig` and prints.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def csv_values(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


SUMMARY = "run cases through adapters and score them"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    from xpeval.evals.cases.model import CATEGORIES

    parser = subparsers.add_parser("run", help=SUMMARY)
    parser.add_argument(
        "--mode",
        choices=["replay", "record", "live"],
        default="replay",
        help="replay cassettes (offline), record them, or talk live without cassettes",
    )
    parser.add_argument("--adapters", action="append", help="adapter ids, comma separated (default: all)")
    parser.add_argument(
        "--models",
        action="append",
        default=[],
        help="MODEL for every adapter or ADAPTER=MODEL (default: recorded, else the adapter's default)",
    )
    parser.add_argument("--cases", action="append", help="case ids or globs, comma separated (default: all)")
    parser.add_argument("--categories", action="append", help=f"categories: {', '.join(CATEGORIES)}")
    parser.add_argument(
        "--case-dir", type=Path, help="load cases from this folder instead of the built-in set"
    )
    parser.add_argument("--shard", help="run shard i of N, as i/N")
    parser.add_argument(
        "--repeat", type=int, default=1, help="play each case N times (trials: pass@1, pass^N, flaky cases)"
    )
    parser.add_argument(
        "--target",
        choices=["auto", "provider", "local-model", "emulator"],
        default="auto",
        help="record/live: where requests go (auto: the provider where its key is set, else the local "
        "model where it serves the adapter and runs)",
    )
    parser.add_argument(
        "--local-model-url",
        metavar="URL",
        help="record/live: the local-model target is your own OpenAI-compatible server at URL (ending in "
        "/v1: llama-server, Ollama, vLLM), serving the --models NAME (default: [tool.xpeval] "
        "local_model_url, else the bundled llama.cpp servers)",
    )
    parser.add_argument(
        "--allow-emulator",
        action="store_true",
        help="record/live with --target auto: adapters with no key and no local model use the emulator "
        "(pipeline only) instead of failing",
    )
    parser.add_argument(
        "--strict-emulator",
        action="store_true",
        help="the emulator answers as a provider with reasoning on: its replies carry each wire's "
        "reasoning state, and a request that drops, moves or alters it gets the provider's real error "
        "(error kind reasoning_state; docs/provider-loop-rules.md)",
    )
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="record: send every request again and rewrite its cassette (a new model version, a new "
        "template)",
    )
    parser.add_argument(
        "--stream",
        choices=["alternate", "always", "never"],
        default="alternate",
        help="which episodes ask for streamed responses (alternate: half the cases, by id)",
    )
    parser.add_argument(
        "--batch",
        action="store_true",
        help="record/live: ask episodes through the providers' Batch APIs, a multi-turn one's turns as "
        "successive batches (half price, answers within hours, never streamed; a stopped run resumes its "
        "batches: docs/batch.md)",
    )
    parser.add_argument(
        "--batch-poll",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="--batch: seconds before a batch's first poll (doubling up to 10 minutes)",
    )
    parser.add_argument(
        "--emulator-url",
        metavar="URL",
        help="the emulator target is an emulator already running at this loopback URL (tests, demos)",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight per adapter (1-1000)")
    parser.add_argument("--rate", type=float, help="requests per second per adapter (default: unlimited)")
    parser.add_argument("--retries", type=int, default=2, help="retries of a retryable provider failure")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument("--cassettes", type=Path, help="cassette folder (default: the project's cassettes/)")
    parser.add_argument(
        "--results", type=Path, help="results file, JSON lines (default: the project's reports/results.jsonl)"
    )
    parser.add_argument("--reports", type=Path, help="where scorecards go (default: the project's reports/)")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="gate against this baseline (default: reports/baseline.json, or the --case-dir's baseline.json)",
    )
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="gate on conformance only, compared with no baseline (said in the verdict line)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--schema-report",
        action="store_true",
        help="also write reports/schema_acceptance.{md,csv} (it measures the adapters, not this run; "
        "reused while the corpus and the measuring code are unchanged)",
    )
    parser.set_defaults(handler=run, uses_project=True)


def config_from(args: argparse.Namespace) -> Any:
    """The run's SuiteConfig: the flags, else the project's `[tool.xpeval]`, else the defaults."""
    from xpeval.evals.cassettes import Mode
    from xpeval.evals.project import project_settings
    from xpeval.evals.running.suite import SuiteConfig

    project = project_settings()
    case_dir = args.case_dir or project.cases
    return SuiteConfig(
        mode=Mode(args.mode),
        adapters=project.selected_adapters(args.adapters),
        models=tuple(args.models) or project.models,
        cases=tuple(csv_values(args.cases)),
        categories=tuple(csv_values(args.categories)),
        case_dir=case_dir,
        root=project.root,
        shard=args.shard,
        target=args.target,
        local_model_url=local_model_url(args.local_model_url or project.local_model_url),
        allow_emulator=args.allow_emulator,
        strict_emulator=args.strict_emulator,
        refresh=args.refresh,
        repeat=args.repeat,
        stream=args.stream,
        batch=args.batch,
        batch_poll=args.batch_poll,
        emulator_url=args.emulator_url,
        concurrency=args.concurrency,
        rate=args.rate,
        retries=args.retries,
        timeout=args.timeout,
        cassettes=args.cassettes or project.cassettes,
        results=args.results or project.results,
        reports=args.reports or project.reports,
        baseline=args.baseline or (project.baseline if case_dir == project.cases else None),
        no_baseline=no_baseline(args),
    )


def local_model_url(url: str | None) -> str | None:
    """The own server's URL, checked (an http(s) URL ending in /v1), or None: the bundled servers."""
    if not url:
        return None
    from xpeval.evals.local_model.own_server import server_url

    return server_url(url)


def no_baseline(args: argparse.Namespace) -> bool:
    """`--no-baseline`, refused next to `--baseline` (which one the user meant is not ours to pick)."""
    from xpeval.errors import UserError

    if args.no_baseline and args.baseline is not None:
        raise UserError("--no-baseline and --baseline contradict each other: pass one")
    return bool(args.no_baseline)


def run(args: argparse.Namespace) -> int:
    from xpeval.evals.running.progress import RichProgress
    from xpeval.evals.running.suite import run_suite
    from xpeval.evals.verdict.gate import diff_text

    config = config_from(args)
    show = not args.no_progress

    def progress(total: int) -> RichProgress:
        return RichProgress(total=total, enabled=show)

    outcome = run_suite(config, log=_log, progress=progress)
    if args.schema_report:
        _write_schema_report(config.reports)
    print(diff_text(outcome.gate))
    return 0 if outcome.passed else 1


def _log(line: str) -> None:
    from xpeval.evals.scrub import scrub_line

    print(f"xpeval: {scrub_line(line)}", file=sys.stderr, flush=True)


def _write_schema_report(reports: Path) -> None:
    """The schema-acceptance report, when that measurement is installed."""
    try:
        from xpeval.evals.commands.schemas import write_default_report
    except ImportError:
        return
    path = write_default_report(reports)
    if path is not None:
        _log(f"schema acceptance: {path}")
