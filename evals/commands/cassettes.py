"""`xpeval cassettes check [--cassettes DIR] [--cases PATH] [--adapters A,B] [--max-age DAYS]`.

Replays every cassette through its adapter and prints a unified diff for each request the
adapter no longer sends as recorded. Exit status: 0 when every cassette matches, 1 on drift (or
a missing, orphaned or unreadable cassette), 2 on bad input.

Each flag left out comes from the project's `[tool.xpeval]` (cassettes, cases, adapters), as
in `xpeval run`; every printed re-record hint carries the --case-dir and --cassettes it needs.

`--max-age DAYS` lists recordings older than DAYS without changing the exit status: the gate's
verdict on a commit must not depend on the calendar (a stale cassette is the nightly's to
refresh, not a reason to fail someone's pull request).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from xpeval.errors import UserError

SUMMARY = "check recorded cassettes against today's adapters"
"""What `xpeval --help` says of this command."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("cassettes", help=SUMMARY)
    actions = parser.add_subparsers(dest="cassettes_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="replay every cassette and diff what the adapters send today")
    check.add_argument(
        "--cassettes",
        type=Path,
        default=None,
        help="cassette folder (default: [tool.xpeval] cassettes, else cassettes)",
    )
    check.add_argument(
        "--cases",
        type=Path,
        default=None,
        help="case file or folder (default: [tool.xpeval] cases, else the built-in set)",
    )
    check.add_argument(
        "--adapters",
        default=None,
        help="comma-separated adapter ids (default: [tool.xpeval] adapters, else every registered one)",
    )
    check.add_argument(
        "--max-age",
        type=float,
        default=None,
        metavar="DAYS",
        help="also list recordings older than DAYS (does not change the exit status)",
    )
    check.set_defaults(handler=run_check, uses_project=True)


def _adapters(spec: str | None, project: tuple[str, ...]) -> list[str]:
    from xpeval.adapters.registry import adapter_ids, get_entry

    wanted = [part.strip() for part in spec.split(",") if part.strip()] if spec else list(project)
    if not wanted:
        return adapter_ids()
    for adapter_id in wanted:
        get_entry(adapter_id)  # "Unknown adapter: <id>" for a typo
    return wanted


def run_check(args: argparse.Namespace) -> int:
    import asyncio
    from datetime import UTC, datetime

    from xpeval.evals.cases import BUILTIN_DIR, load_cases
    from xpeval.evals.cassettes.binding import hint_flags
    from xpeval.evals.cassettes.store import CassetteStore
    from xpeval.evals.project import project_settings
    from xpeval.evals.running.drift import check_cassettes
    from xpeval.evals.running.progress import ItemProgress

    if args.max_age is not None and args.max_age < 0:
        raise UserError("--max-age must be a number of days >= 0")
    project = project_settings()
    cassettes: Path = args.cassettes or project.cassettes
    case_dir: Path | None = args.cases or project.cases
    if not cassettes.is_dir():
        raise UserError(f"{cassettes}: no such cassette folder")
    adapters = list(project.selected_adapters(args.adapters)) or _adapters(None, ())
    cases = {item.case.id: item.case for item in load_cases(case_dir or BUILTIN_DIR)}
    with ItemProgress("cassettes checked") as progress:
        report = asyncio.run(
            check_cassettes(
                CassetteStore(cassettes),
                cases,
                adapters=adapters,
                max_age_days=args.max_age,
                now=datetime.now(UTC),
                on_cassette=progress,
                record_flags=hint_flags(case_dir=case_dir, cassettes=cassettes, root=project.root),
            )
        )
    for finding in report.findings:
        print(f"{finding.kind.upper()} {finding.adapter}/{finding.model}/{finding.case}")
        for problem in finding.problems:
            print("  " + problem.replace("\n", "\n  "))
    for old in sorted(report.stale, key=lambda s: -s.age_days):
        print(
            f"STALE {old.path}: recorded {old.meta.recorded_at:%Y-%m-%d} ({old.age_days:.0f} days ago, "
            f"{old.meta.source}, {old.meta.model})"
        )
    counts: dict[str, int] = {}
    for finding in report.findings:
        counts[finding.kind] = counts.get(finding.kind, 0) + 1
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no drift"
    ages = f"; {len(report.stale)} older than {args.max_age:g} days" if args.max_age is not None else ""
    print(f"checked {report.checked} cassette(s): {summary}{ages}")
    return 1 if report.failed else 0
