"""`xpeval run`: play cases through adapters, write the scorecard, exit by the gate.

With no arguments it replays every committed cassette for every registered adapter and
every built-in case, offline.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from adapters.registry import ADAPTER_REGISTRY, get_entry
from evals.cases import CATEGORIES

DEFAULT_RESULTS = Path("reports/results.jsonl")
DEFAULT_BASELINE = Path("reports/baseline.json")


def _csv(values: list[str] | None) -> list[str]:
    return [item.strip() for value in values or [] for item in value.split(",") if item.strip()]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("run", help="run cases through adapters and score them")
    parser.add_argument(
        "--mode",
        choices=["replay", "record", "live"],
        default="replay",
        help="replay cassettes (default, offline), record them, or talk live without cassettes",
    )
    parser.add_argument("--adapters", action="append", help="adapter ids, comma separated (default: all)")
    parser.add_argument(
        "--models",
        action="append",
        default=[],
        help="MODEL for every adapter or ADAPTER=MODEL (default: recorded or adapter default)",
    )
    parser.add_argument("--cases", action="append", help="case ids or globs, comma separated (default: all)")
    parser.add_argument("--categories", action="append", help=f"categories: {', '.join(CATEGORIES)}")
    parser.add_argument(
        "--case-dir", type=Path, help="load cases from this folder instead of the built-in set"
    )
    parser.add_argument("--shard", help="run shard i of N, as i/N")
    parser.add_argument(
        "--target",
        choices=["auto", "provider", "local-model", "emulator"],
        default="auto",
        help="record/live: where requests go (auto: provider with a key, else the local "
        "model where it serves the adapter and is running, else the emulator)",
    )
    parser.add_argument(
        "--stream",
        choices=["alternate", "always", "never"],
        default="alternate",
        help="which episodes ask for streamed responses (default: half the cases, by id)",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight per adapter")
    parser.add_argument("--rate", type=float, help="requests per second per adapter (default: unlimited)")
    parser.add_argument("--retries", type=int, default=2, help="retries of a retryable provider failure")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.add_argument("--cassettes", type=Path, default=Path("cassettes"), help="cassette folder")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results file (JSON lines)")
    parser.add_argument("--reports", type=Path, default=Path("reports"), help="where scorecards go")
    parser.add_argument(
        "--baseline", type=Path, default=DEFAULT_BASELINE, help="gate against this baseline when it exists"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--no-schema-report",
        action="store_true",
        help="skip the schema-acceptance report (it measures the adapters, not this run)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from evals.cases import load_cases
    from evals.cases.loader import BUILTIN_DIR
    from evals.cassettes import CassetteStore, Mode
    from evals.errors import UserError
    from evals.gate import PARTIAL_RUN_NOTE, baseline_for_run, diff_text, evaluate, read_baseline
    from evals.plan import Shard, parse_models, plan, select_cases
    from evals.progress import RichProgress
    from evals.results import ResultsFile, RunHeader, fingerprint, now_iso
    from evals.runner import Runner, RunSettings
    from evals.scorecard import results_frame, scorecard, write_scorecard
    from evals.targets import EpisodeFactory, TargetPicker, provider_ready

    adapters = _csv(args.adapters) or list(ADAPTER_REGISTRY)
    for adapter_id in adapters:
        get_entry(adapter_id)
    cases = select_cases(
        [loaded.case for loaded in load_cases(args.case_dir or BUILTIN_DIR)],
        _csv(args.cases),
        _csv(args.categories),
    )
    models = parse_models(args.models, adapters)
    shard = Shard.parse(args.shard) if args.shard else None
    episodes = plan(cases, adapters, models, shard)
    mode = Mode(args.mode)
    if mode is not Mode.REPLAY and args.target == "provider":
        missing = [adapter_id for adapter_id in adapters if not provider_ready(adapter_id)]
        if missing:
            raise UserError(
                f"--target provider: no credentials for {', '.join(missing)} (set the provider's key; "
                "see README, 'Live runs against providers'), or use --target auto"
            )

    some_cases = bool(args.cases or args.categories or args.shard)
    config = {
        "mode": mode.value,
        "some_cases": some_cases,
        "adapters": adapters,
        "models": models,
        "cases": [c.id for c in cases],
        "shard": args.shard,
        "target": args.target,
        "stream": args.stream,
        "cassettes": str(args.cassettes),
    }
    run_fingerprint = fingerprint(config)
    header = RunHeader(
        run=f"{now_iso()}-{run_fingerprint[:8]}",
        fingerprint=run_fingerprint,
        started_at=now_iso(),
        config=config,
    )
    results = ResultsFile.open_for(args.results, header)

    server = None
    emulator = None
    if mode is not Mode.REPLAY:
        from evals.emulator.case_script import CaseEmulator
        from evals.emulator.server import EmulatorServer

        server = EmulatorServer().start()
        emulator = CaseEmulator(server)
    picker = TargetPicker(choice=args.target, local_model_up=_local_model_up)
    factory = EpisodeFactory(
        mode=mode,
        store=CassetteStore(args.cassettes),
        picker=picker,
        emulator=emulator,
        stream_policy=args.stream,
        timeout=args.timeout,
    )
    settings = RunSettings(
        concurrency=max(1, args.concurrency),
        rate=args.rate,
        max_attempts=args.retries + 1,
        episode_timeout=args.timeout * 8,
    )
    runner = Runner(factory, results, settings)
    todo = runner.pending(episodes)
    resumed = len(episodes) - len(todo)
    if resumed:
        print(
            f"xpeval: resuming {results.path}: {resumed} of {len(episodes)} episodes already done",
            file=sys.stderr,
        )
    show = not args.no_progress and (sys.stderr.isatty() or os.environ.get("XPEVAL_PROGRESS") == "1")
    try:
        with RichProgress(total=len(todo), enabled=show) as progress:
            runner.progress = progress
            asyncio.run(runner.run(todo))
    finally:
        if server is not None:
            server.stop()
    results.finish()

    frame = results_frame(results.rows)
    card = scorecard(frame)
    paths = write_scorecard(frame, args.reports)
    print(f"xpeval: {len(frame)} episodes; scorecard: {paths['md']}", file=sys.stderr)
    if not args.no_schema_report:
        _write_schema_report(args.reports)
    baseline = read_baseline(args.baseline) if args.baseline.exists() else None
    if baseline is not None:
        baseline = baseline_for_run(baseline, adapters, some_cases)
        if baseline is None:
            print(f"xpeval: {PARTIAL_RUN_NOTE}", file=sys.stderr)
    report = evaluate(frame, card, baseline)
    print(diff_text(report))
    return 0 if report.passed else 1


def _local_model_up() -> bool:
    try:
        from evals.local_model import LocalModelServer

        return LocalModelServer().status().state == "running"
    except Exception:
        return False


def _write_schema_report(reports: Path) -> None:
    """The schema-acceptance report, when that measurement is installed."""
    try:
        from evals.commands.schemas import write_default_report
    except ImportError:
        return
    path = write_default_report(reports)
    if path is not None:
        print(f"xpeval: schema acceptance: {path}", file=sys.stderr)
